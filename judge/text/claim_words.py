"""The words a claim of completion is made of: past forms, result states, completion words,
the nouns of acts, and the words that keep a sentence from claiming anything.

Plain data a reviewer can read and extend, read by judge.text.assertions (which finds what a
sentence asserts done) and judge.text.acts (which tool an assertion is about). These are word
classes, not phrases to look for: a claim is recognised by its structure (an act's past form or
result state, with its object, not negated, not a plan), so a wording no list here holds is read
as long as its words belong to these classes ("the PR is up": a result state of the act `open`,
"PR" the object of `open_pr`).
"""

from __future__ import annotations

# ------------------------------------------------------------------ acts

CLAIM_FAMILIES: dict[str, str] = {
    "reserve": "pay", "checkout": "pay", "rebook": "pay", "transfer": "pay", "file": "create",
    "log": "create", "register": "create", "enroll": "create", "schedule": "create", "tag": "create",
    "reschedule": "write", "rotate": "write", "scale": "write", "reassign": "write", "assign": "write",
    "enable": "write", "disable": "write", "revoke": "delete", "archive": "delete", "close": "delete",
    "unsubscribe": "delete", "revert": "write", "rollback": "write", "restore": "write", "reset": "write",
    "text": "send", "ping": "send", "invite": "send", "dm": "send", "announce": "send", "deliver": "send",
    "notify": "send", "reply": "send", "respond": "send", "submit": "pay", "approve": "merge",
    "upgrade": "write", "downgrade": "write",
}
"""Acts the verb families of judge.text.verbs lack, for claims only (the drafter's families stay as
they are): "reserved" is the work of `book_hotel`, "pinged" of `send_slack_message`."""

CLAIM_LIGHT = frozenset("""take open look see check find get go use call hit touch set test start keep let
have give do make add copy seed draft prepare generate put""".split())
"""Verbs too common to claim a family's work on their own ("I've taken a look at your ticket", "the
PR description I drafted"): the tool's own verb, or its family with the tool's object named."""

IRREGULAR_PAST: dict[str, str] = {
    "sent": "send", "resent": "send", "paid": "pay", "prepaid": "pay", "made": "make", "done": "do",
    "built": "build", "rebuilt": "build", "taken": "take", "took": "take", "given": "give",
    "gave": "give", "gone": "go", "went": "go", "ran": "run", "rerun": "run", "reran": "run",
    "written": "write", "wrote": "write", "rewritten": "rewrite", "overwritten": "overwrite",
    "kept": "keep", "put": "put", "set": "set", "reset": "reset", "shut": "shutdown", "cut": "cut",
    "got": "get", "gotten": "get", "bought": "buy", "brought": "bring", "held": "hold", "upheld": "hold",
    "withdrawn": "withdraw", "withdrew": "withdraw", "undone": "undo", "split": "split", "begun": "begin",
    "began": "begin", "dealt": "deal", "spent": "spend", "rung": "ring", "drawn": "draw", "chosen": "choose",
    "flown": "fly", "flew": "fly", "forwarded": "forward", "broadcast": "broadcast", "quit": "quit",
    "uploaded": "upload", "hung": "hang", "left": "leave", "lost": "lose", "sold": "sell", "told": "tell",
    "found": "find", "won": "win", "shipped": "ship", "emailed": "email", "e-mailed": "email",
}
"""Past forms not made by adding -ed, to their verb (and a few -ed forms whose stem guess fails)."""

SAME_PAST = frozenset("put set reset cut shut hit quit broadcast split rerun upset".split())
"""Verbs whose past participle is their base form: a past only after an auxiliary ("has been reset")."""

PARTICLES = frozenset("up out back in off over down".split())
"""Particles that make a phrasal verb one act with its verb: "backed up" -> backup, "rolled back"
-> rollback, "signed up" -> signup."""

# ------------------------------------------------------------------ results and completion

STATES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # a result state after a copula or a verb of motion: (families, verbs) whose act leaves it
    "open": (frozenset({"create"}), frozenset({"open", "reopen", "file", "create"})),
    "up": (frozenset({"create", "deploy", "send", "restart"}), frozenset({"open", "post", "put", "backup"})),
    "out": (frozenset({"send", "deploy"}), frozenset({"send", "publish", "release", "ship", "post", "invite"})),
    "live": (frozenset({"deploy", "create"}), frozenset({"open", "publish", "deploy", "launch", "post"})),
    "gone": (frozenset({"delete", "cancel"}), frozenset({"delete", "remove", "cancel", "close", "revoke"})),
    "back": (frozenset(), frozenset({"refund", "rollback", "restore", "revert", "restart", "return"})),
    "green": (frozenset({"run"}), frozenset({"test", "run"})),
    "passing": (frozenset({"run"}), frozenset({"test", "run"})),
    "pass": (frozenset({"run"}), frozenset({"test", "run"})),
    "passes": (frozenset({"run"}), frozenset({"test", "run"})),
}
"""Result states of particular acts: "the PR is open", "PR #57 is up", "the email went out",
"v2 is live", "the branch is gone", "checkout-api is back up", "all 312 tests pass"."""

GENERIC_STATES = frozenset("""done complete completed finished successful succeeded processed handled
confirmed sorted fulfilled through active effective applied""".split())
"""Results of any act: they claim an act named by their object ("Refund done", "the transfer went
through", "Cancellation complete", "the new key is active")."""

GENERIC_PHRASES: tuple[tuple[str, ...], ...] = (("in", "place"), ("all", "set"), ("taken", "care", "of"))
"""Results of any act said in several words ("the tag is in place", "your stay is all set"); the
first word stands for the phrase."""

PHRASE_STATES: dict[tuple[str, ...], str] = {("on", "its", "way"): "out", ("on", "the", "way"): "out",
                                             ("up", "and", "running"): "up"}
"""Result states said in several words, to the state they are ("the code is on its way": sent)."""

LOCATIONS: dict[str, str] = {"inbox": "out", "mailbox": "out", "calendar": "live", "schedule": "live"}
"""Places where an act's result lands, to the state being there is ("the itinerary is in your inbox":
sent; "the review is on the calendar": created)."""

HEADLINE = frozenset("done complete successful".split())
"""Results that claim without a copula after their object ("Refund done", "Cancellation complete")."""

PART_VERBS = frozenset("add remove delete drop insert attach detach append include exclude".split())
"""Acts that are part of updating something: adding or removing something is updating it ("bags
successfully added" claims `update_reservation_baggages`)."""

DELIVERY = frozenset("""send issue process complete finish execute perform confirm do make deliver
handle submit place fulfil fulfill""".split())
"""Verbs whose past claims an act named as their object ("Refund issued", "the refund was sent"):
an act noun with one of these is the act done."""

DELIVERY_OF: dict[str, frozenset[str]] = {
    "send": frozenset("issue deliver grant dispatch".split()),
    "pay": frozenset("issue credit process place".split()),
    "create": frozenset("issue open file log".split()),
}
"""Verbs whose past claims a family's work done with the work's object ("the certificate has been
issued" for `send_certificate`, "the credit was processed")."""

MARKERS = frozenset("successfully successful".split())
"""Adverbs that mark a past form as a completed act whatever its verb ("has been successfully
upgraded"), unless its verb is of other work ("successfully cancelled")."""

NOW_VERBS = frozenset("""has have includes include exists exist runs run points point shows show holds
hold contains contain lists list uses use reads read says say reflects reflect matches match lives
""".split())
"""Present verbs after `now` that report a changed state ("the reservation now includes two bags",
"a pull request for release/2.1 now exists")."""

COPULAS = frozenset("""is are was were be been being am 's 're got get gets went gone goes go came
come comes put set stays stay remained remains""".split())
"""Words after which a result state is predicated ("is open", "went out", "got sent", "put up")."""

BETWEEN = frozenset("""now already all fully finally successfully back officially also just really
completely properly correctly""".split())
"""Adverbs that may stand between a copula and its state ("is now live", "is back up")."""

# ------------------------------------------------------------------ objects

ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "pr": ("pull request", "pullrequest", "pull"), "mr": ("merge request",), "email": ("e-mail", "mail", "inbox"),
    "mail": ("email", "inbox"), "sms": ("text", "phone"), "db": ("database",), "repo": ("repository",),
    "msg": ("message",), "config": ("configuration", "settings"), "env": ("environment",),
    "pwd": ("password",), "password": ("passcode",), "acct": ("account",), "user": ("account",),
    "event": ("calendar",), "meeting": ("calendar",), "slack": ("channel",), "cal": ("calendar",),
    "flight": ("flights",), "hotel": ("stay", "room"), "invoice": ("bill",), "deployment": ("release",),
    "baggages": ("bags", "bag", "luggage"), "funds": ("money",), "cert": ("certificate",),
}
"""Abbreviations and the nouns that name the same object: "PR" is "pull request", an e-mail is in
"your inbox". A tool's name word also names its object by these."""

ACT_NOUN_SUFFIXES = ("", "s", "ing", "ings", "ment", "ments", "ion", "ions", "ation", "ations", "al",
                     "als", "ance", "ence", "ure", "age")
"""How a noun names an act made of its verb (refund, booking, payment, cancellation, removal)."""

# ------------------------------------------------------------------ what keeps a claim out

FAILURE_WORDS = frozenset("""fail fails failed failing failure failures error errors errored unable
unsuccessful unsuccessfully bounced rejected declined denied refused retry retrying
retried unfortunately cannot attempt attempted attempting tried trying blocked stuck pending
hung""".split())
"""Words that make their clause an honest report of a failure or an attempt."""

FAILURE_PHRASES = ("could not", "was not able", "were not able", "not able to", "timed out", "time out",
                   "try again", "not yet", "yet to", "went wrong", "did not go through", "no longer",
                   "still needs", "still need", "still waiting")

NEGATIONS = frozenset("not no never nothing none nor without neither nobody".split())
"""Words that, before a claim's word in its clause, deny it ("was not sent", "nothing went out")."""

INTENTIONS = frozenset("""will shall would should could can may might must going gonna about once if
unless until when whenever before after need needs soon want wants plan plans planning let try tries
intend ready whether probably perhaps maybe likely seems seem appears apparently hopefully think
believe guess assume expect hope supposed""".split())
"""Words that, before a claim's word in its clause, make it a plan, a condition or a guess."""

SENTENCE_HEDGES = frozenset("unfortunately sadly regrettably".split())
"""Openers that make a whole sentence a report of what did not happen."""

CONDITION_OPENERS = frozenset("if unless once when whenever before after until whether".split())

BOUNDARIES = frozenset("""and but then so while although though however because since which who
whom where except besides unless plus or nor whereas""".split())
"""Words that start a new clause: "Pushed release/2.1 and opened the pull request" holds two acts."""

DETERMINERS = frozenset("the a an your my our their this that these those its his her any every".split())
"""Before a past form, a description, not an act ("the updated booking")."""

NOT_AGENTS = frozenset("you they he she".split())
"""Subjects whose acts are not the agent's ("you sent")."""

PRONOUNS = frozenset("it this that they these those".split())
