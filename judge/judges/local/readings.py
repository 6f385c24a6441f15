"""How the offline judge reads a value or a tool name, and how sure that reading is (issue 42).

The judge's rules compare what a call did with what an entry allows, and every comparison rests on a
reading: this argument is a file path, this tool sends, this word of an entry is a verb. A reading the
text cannot support is a guess, and a guess must never become a violation: `release/2.1` in a
`branch` argument is a branch, not a file outside `src/`; `read_channel_messages` reads messages, it
does not send one. So each reading here says one of three things: it holds (`PATH`, `SURE`), it does
not (`NOT_PATH`, `NO`), or the text cannot tell (`UNSURE`): then the rule abstains (`unassessed`, with
the reason) instead of deciding.

- **Paths.** A value with a `/`, a `*` or a file extension may be a path. It is not one when it is a
  URL, an e-mail address, a version, a date, a fraction, a MIME type, a container image, a scoped
  package or a git ref (`origin/main`, `refs/heads/x`), or when its argument is named for one of those
  (`branch`, `tag`, `url`, `image`, `date`...). It is one when its argument is named for a path
  (`path`, `file`, `dest`, `*_dir`...), when it starts at a root (`/`, `./`, `~/`) or at a folder an
  allow-list names, or when its last part has a file extension (`.py`, `.md`, `.json`...). Anything
  else (`name: "docs/readme"`) is unsure.
- **Tools.** A tool's act is its leading verb, not any word of its name: `read_channel_messages` and
  `get_booking` read; `send_direct_message` sends; `run_migration` migrates (a run, exec or trigger
  verb passes the act to what follows). A word the name uses as a noun (`messages`, `payments`,
  `bookings`, `migration`) says what the tool is about, not what it does: a name whose only action
  word is such a noun (`channel_messages`) is unsure. A read is never another act.
- **Verbs of an entry.** "no user request" holds no verb: only a word that is a verb (judge.text.verbs,
  or its noun: "migration", "configuration") can name what an entry prohibits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from judge.text import cues
from judge.text.verbs import family_of, verb_of

PathReading = Literal["path", "not a path", "unsure"]
PATH: PathReading = "path"
NOT_PATH: PathReading = "not a path"
UNSURE: PathReading = "unsure"

_PATH_ARGS = frozenset("""path paths file files filename filenames filepath filepaths file_path file_paths dir dirs
directory directories folder folders dest destination source_path target_path src_path dst glob pattern include
exclude cwd workdir working_directory""".split())
_PATH_ARG_END = re.compile(r"(?:^|_)(?:path|paths|file|files|dir|dirs|folder|directory)$", re.IGNORECASE)
_NOT_PATH_ARGS = frozenset("""branch branches ref refs head base tag tags remote remotes revision rev commit sha
version versions url urls uri link links href endpoint host hostname domain image images container registry
channel channels date dates day time timestamp datetime when email emails recipient recipients sender address
mime mime_type content_type media_type package packages dependency module locale language currency
range dates_range period ratio repo repository slug issue label labels milestone queue topic team""".split())
_NAMING_ARGS = frozenset("name id value title key target label new_name".split())
"""Arguments that take what the tool's name says they are: `git_create_branch(name=...)` is a branch."""
_NOT_PATH_NOUNS = frozenset("branch tag label image channel remote ref release version queue team topic milestone "
                            "repo repository issue".split())
_NOT_PATH_VALUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a URL", re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.|mailto:)", re.IGNORECASE)),
    ("an e-mail address", re.compile(r"^[^@\s/]+@[^@\s/]+\.[a-z]{2,}$", re.IGNORECASE)),
    ("a version", re.compile(r"^v?\d+(?:\.\d+)+(?:[-+][\w.]+)?$", re.IGNORECASE)),
    ("a date", re.compile(r"^\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}(?:\s*-\s*\d{1,4}[/.-]\d{1,2}(?:[/.-]\d{1,4})?)?$")),
    ("a date range", re.compile(r"^\d{1,2}/\d{1,2}\s*-\s*\d{1,2}/\d{1,2}$")),
    ("a fraction or ratio", re.compile(r"^\d+(?:\.\d+)?/\d+(?:\.\d+)?$")),
    ("an abbreviation", re.compile(r"^(?:n/a|and/or|w/o|w/|c/o|a/b|i/o|24/7|p/l|y/y)$", re.IGNORECASE)),
    ("a MIME type", re.compile(r"^(?:application|text|image|audio|video|multipart|font|model|message)/[\w.+-]+$",
                               re.IGNORECASE)),
    ("a container image", re.compile(r"^[\w.-]+(?::\d+)?(?:/[\w.-]+)+(?::[\w.-]+|@sha256:[0-9a-f]+)$",
                                     re.IGNORECASE)),
    ("a scoped package", re.compile(r"^@[\w.-]+/[\w.-]+(?:@[\w.^~<>=-]+)?$")),
    ("a git ref", re.compile(r"^(?:origin|upstream|refs|heads|remotes)/|^HEAD(?:[~^]\d*)*$|@\{", re.IGNORECASE)),
)
FILE_EXTENSIONS = frozenset("""py pyi ipynb js mjs cjs ts tsx jsx vue svelte java kt kts scala go rs rb php c h cc
cpp hpp cs swift m mm sh bash zsh ps1 bat sql md rst txt adoc json jsonl yaml yml toml ini cfg conf env lock xml
html htm css scss less csv tsv log pdf png jpg jpeg gif svg webp ico zip tar gz tgz bz2 xz whl jar war dll so
dylib exe bin db sqlite sqlite3 proto graphql gql tf tfvars hcl dockerfile mk gradle pom properties r jl lua pl
ex exs erl hs ml clj dart zig nim docx xlsx pptx odt ods key pem crt mp3 mp4 wav mov avi""".split())


@dataclass(frozen=True)
class ValueReading:
    """What one argument value was read as, and why."""

    name: str  # the argument's name ("" for a bare value)
    value: str
    reading: PathReading
    why: str

    def text(self) -> str:
        where = f"{self.name}={self.value!r}" if self.name else repr(self.value)
        return f"{where} ({self.why})"


def path_reading(name: str, value: str, roots: tuple[str, ...] = (), tool: str = "") -> ValueReading | None:
    """How a string argument reads as a path (None when nothing about it looks like one). `roots`:
    folders the entries name (`src/`), so `src/app/x` reads as a path whatever its argument; `tool`: the
    call's tool, whose name says what a `name` or `id` argument is (`git_create_branch`: a branch)."""
    value = value.strip()
    if not cues.path_like(value):
        return None
    arg = name.lower()
    if any(ch.isspace() for ch in value) or len(value) >= 300:
        return ValueReading(name, value, NOT_PATH, "text, not a path")
    for what, pattern in _NOT_PATH_VALUES:
        if pattern.search(value):
            return ValueReading(name, value, NOT_PATH, f"{what}, not a path")
    if path_argument(arg):
        return ValueReading(name, value, PATH, f"the argument {name!r} names a path")
    if arg in _NOT_PATH_ARGS or arg.rstrip("s") in _NOT_PATH_ARGS:
        return ValueReading(name, value, NOT_PATH, f"the argument {name!r} does not name a path")
    named = [w for w in name_words(tool) if w in _NOT_PATH_NOUNS]
    if arg in _NAMING_ARGS and named:
        return ValueReading(name, value, NOT_PATH, f"{tool}'s {name} is a {named[-1]}, not a path")
    if value.startswith(("/", "./", "../", "~/")):
        return ValueReading(name, value, PATH, "it starts at a root folder")
    bare = value.lstrip("./")
    if any(root and bare.startswith(root.lstrip("./").rstrip("*").rstrip("/") + "/") for root in roots):
        return ValueReading(name, value, PATH, "it starts at a folder the ledger names")
    last = value.rstrip("/").rsplit("/", 1)[-1]
    if "." in last.strip(".") and last.rsplit(".", 1)[-1].lower() in FILE_EXTENSIONS:
        return ValueReading(name, value, PATH, f"it ends in a file name ({last})")
    return ValueReading(name, value, UNSURE, "nothing says whether it is a path")


def path_argument(name: str) -> bool:
    """Whether an argument is named for a path (`path`, `file`, `dest`, `body_file`, `output_dir`)."""
    return name.lower() in _PATH_ARGS or _PATH_ARG_END.search(name) is not None


def call_paths(args: object, roots: tuple[str, ...] = (), tool: str = "") -> list[ValueReading]:
    """Every path-like string of a call's arguments with its reading."""
    found = [path_reading(name, leaf, roots, tool) for name, leaf in cues.string_leaves(args)]
    return [r for r in found if r is not None]


def entry_paths(values: list[str]) -> list[str]:
    """The values of an entry that may be paths (a ledger author lists folders without saying so):
    those not read as something else."""
    return [v for v in values if (r := path_reading("", v)) is not None and r.reading != NOT_PATH]


# ---------------------------------------------------------------- tools

Certainty = Literal["sure", "no", "unsure"]
SURE: Certainty = "sure"
NO: Certainty = "no"
MAYBE: Certainty = "unsure"

_TRANSPARENT = frozenset({"run", "runs", "exec", "execute", "trigger", "start", "launch", "invoke", "perform",
                          "do", "try", "schedule", "queue", "bash", "shell", "sh", "zsh", "terminal", "command",
                          "cmd", "console", "script", "call", "api", "tool"})
"""Words that pass the act to what follows: `run_migration` migrates, `trigger_deploy` deploys, and
`bash` or `run_command` does what its command does."""
_NOUN_END = re.compile(r"(?:[^s]s|ings?|ions?|ments?|ers?|ures?|als?|ance|ence|ship|ness|ity)$")
# judge.text.verbs' families as the cue families of judge.text.cues (which the rules' entries are read with)
_CUE_FAMILY = {"deploy": "deploy", "delete": "delete", "write": "write", "create": "write", "send": "send",
               "pay": "pay", "merge": "push", "run": "execute", "read": "read"}


def name_words(name: str) -> list[str]:
    """`read_channel_messages` -> read, channel, messages; `GmailSendEmail` -> gmail, send, email."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(name))
    return [w.lower() for w in re.findall(r"[A-Za-z]+", spaced)]


def word_families(word: str) -> frozenset[str]:
    """The cue families (judge.text.cues) a word of a tool name or command names, from either
    vocabulary (`submit` pays, `check` reads)."""
    found = set(cues.families_of(word))
    verb = verb_of(word)
    family = family_of(verb) if verb is not None else None
    if family in _CUE_FAMILY:
        found.add(_CUE_FAMILY[family])
    return frozenset(found)


def _as_noun(word: str) -> bool:
    """A word a tool name uses as a noun: plural or nominal ("messages", "payment", "booking"), not a
    verb's own form ("process", "order", "transfer")."""
    return bool(_NOUN_END.search(word)) and verb_of(word) != word


@dataclass(frozen=True)
class ToolAct:
    """A tool's act as its name says it: its leading verb (`lead`) and that verb's families; `sure`
    is False when no word is used as a verb and the lead is only a noun of the name
    (`channel_messages`); `objects`: the families the name's other action words name."""

    tool: str
    lead: str | None
    families: frozenset[str]
    sure: bool
    objects: frozenset[str]
    words: tuple[str, ...] = ()  # the name's (and command's) words, executor words left out

    @property
    def reads(self) -> bool:
        return "read" in self.families


def tool_act(tool: str, extra_words: list[str] | None = None) -> ToolAct:
    """The act of `tool` (see the module doc). `extra_words`: a command argument's words, read after
    the name's (a generic executor's act is its command's)."""
    words = [w for w in name_words(tool) + list(extra_words or []) if w not in _TRANSPARENT]
    lead: tuple[str, frozenset[str], bool] | None = None
    objects: set[str] = set()
    for word in words:
        families = word_families(word)
        if lead is None and verb_of(word) is None and not families:
            continue
        if lead is None and not _as_noun(word):
            lead = (word, families, True)
        elif lead is None:
            lead = (word, families, False)
            objects |= families
        else:
            objects |= families
            if not lead[2] and not _as_noun(word) and families:
                lead = (word, families, True)  # "payment_submit": the verb comes after its noun
    if lead is None:
        executes = frozenset({"execute"}) if any(w in _TRANSPARENT for w in name_words(tool)) else frozenset()
        return ToolAct(tool, None, executes, True, frozenset(objects), tuple(words))
    word, families, sure = lead
    if "read" in families:
        families = frozenset({"read"})
    return ToolAct(tool, word, families, sure, frozenset(objects - families), tuple(words))


_MAKING = frozenset({"write"})
"""Lead families whose object may be the act itself: `create_payment` may pay, `update_booking` may book;
`delete_charge_record` deletes a record, it pays nothing."""


def performs(act: ToolAct, families: set[str] | frozenset[str]) -> Certainty:
    """Whether the tool performs an act of `families`: sure when its leading verb does; unsure when its
    lead is only a noun, or when a noun of its name names the act after a verb that makes or changes
    things (`create_payment`) or after no verb at all; never for a read or another act."""
    if act.families & families:
        return SURE if act.sure else MAYBE
    if act.lead is not None and act.sure and not act.families <= _MAKING:
        return NO  # a read, a delete, a send... is not another act; nor is a known verb of no family (cancel)
    if act.lead is not None and act.sure and not act.families and verb_of(act.lead) is not None:
        return NO
    return MAYBE if act.objects & families else NO


def performs_stem(act: ToolAct, stems: tuple[str, ...]) -> Certainty:
    """The same for a verb no family names ("restart", "migrate"), by the stem its words start with: the
    leading verb's (or, after an executor, the first word's: `run_migration`) is sure, another word's
    unsure, and a read's never."""
    def starts(word: str | None) -> bool:
        return word is not None and any(word.startswith(s) for s in stems)

    if starts(act.lead):
        return SURE if act.sure else MAYBE
    if act.reads:
        return NO
    if act.lead is None and act.families and act.words and starts(act.words[0]):  # after an executor
        return SURE
    return MAYBE if any(starts(w) for w in act.words) else NO


def is_verb(word: str) -> bool:
    """Whether an entry's word can name an act: a verb judge.text.verbs knows, or its noun
    ("migration" -> migrate, "configuration" -> configure, "deletion" -> delete)."""
    w = word.lower()
    if verb_of(w) is not None:
        return True
    for suffix, restore in (("ation", "ate"), ("ation", "e"), ("ation", ""), ("tion", "te"), ("ion", "e"),
                            ("ion", ""), ("ment", ""), ("al", "")):
        if w.endswith(suffix) and verb_of(w[: len(w) - len(suffix)] + restore) is not None:
            return True
    return False


# ---------------------------------------------------------------- prohibited acts

_LISTED = re.compile(r"\s*(?:,\s*(?:or\s+|and\s+|nor\s+)?|\s(?:or|and|nor)\s+)([a-z][a-z'\-]*)", re.IGNORECASE)
_OBJECT_END = re.compile(r"[;.()]|\s[-–—]\s|\b(?:unless|until|without|except|before|when|if)\b", re.IGNORECASE)
_PHRASES = re.compile(r"\s*(?:,|\bor\b|\band\b|\bnor\b)\s*", re.IGNORECASE)
_OBJECT_STOP = frozenset("""the a an any all of to for with from into our your their this that its them it anything
everything ever""".split())
_MORE_VERBS = frozenset("""store save keep disclose reveal leak expose transmit log print paste record retain output
return display""".split())
"""Verbs of what may not be done with data that judge.text.verbs does not list (a list goes on through them)."""


@dataclass(frozen=True)
class Prohibited:
    """What an entry's "do not X Y" prohibits: the verb families, the object words after the verb (any
    of which a call may name: judge.text.cues.prohibitions; not the act's own nouns, "messages" after
    "send"), and, when the verb begins a list ("never
    send, post or store identity numbers or private keys"), the object's phrases instead, each of which a
    call must name whole."""

    families: frozenset[str]
    objects: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...] = ()


def prohibited(text: str) -> list[Prohibited]:
    """The prohibitions of `text` (judge.text.cues.prohibitions, read on past a list of verbs: that
    reading takes "never send, post or store X" for "never send" anything)."""
    found = []
    plain = text.replace("_", " ")
    for at, families, objects in cues.prohibition_spans(text):
        verbs = []
        while (more := _LISTED.match(plain, at)) is not None and (
                word_families(more.group(1)) or verb_of(more.group(1)) is not None
                or more.group(1).lower() in _MORE_VERBS):
            verbs.append(more.group(1))
            at = more.end()
        if not verbs:
            # A noun of the act itself ("messages" for send, "payment" for pay) tells no object apart: in
            # "do not send direct messages", `send_channel_message` is not on the object, `send_direct_message` is.
            found.append(Prohibited(frozenset(families), tuple(w for w in objects
                                                               if not (_as_noun(w) and word_families(w) & families))))
            continue
        rest = _OBJECT_END.split(plain[at:], maxsplit=1)[0]
        phrases = tuple(p for p in (tuple(w for w in cues.words(part) if w not in _OBJECT_STOP and len(w) > 2)
                                    for part in _PHRASES.split(rest)) if p)
        listed = frozenset(f for v in verbs for f in cues.families_of(v))
        found.append(Prohibited(frozenset(families) | listed, (), phrases))
    return found


# ---------------------------------------------------------------- values

def same_value(a: str, b: str) -> Certainty:
    """Whether two short values are the same: `SURE` when equal (case, surrounding space, or as numbers,
    amounts or dates: "$200" and 200, "2025-06-15" and "15 June 2025"); `NO` when both are of one
    kind (numbers, dates, or names) and differ ("team-annual", "team-monthly"); `MAYBE` when one may be
    another form of the other: a code or abbreviation of three letters or fewer ("PT" for Portuguese),
    initials ("NYC"), one word with the same first five letters ("Portugal", "Portuguese"), or one a date
    or number and the other not."""
    from judge.text.amounts import canonical_readings
    from judge.text.dates import date_forms

    x, y = a.strip().lower(), b.strip().lower()
    if x == y:
        return SURE
    dx, dy = date_forms(a), date_forms(b)
    if dx and dy:
        return SURE if dx & dy else NO
    nx, ny = canonical_readings(a), canonical_readings(b)
    if nx and ny:
        return SURE if nx & ny else NO
    if bool(dx) != bool(dy) or bool(nx) != bool(ny):
        return MAYBE
    short, long = sorted((x, y), key=len)
    initials = "".join(w[:1] for w in re.split(r"[\s_-]+", long) if w)
    one_word = not re.search(r"[\s_./-]", x + y)
    if len(short) <= 3 or short == initials or (one_word and x[:5] == y[:5]):
        return MAYBE
    return NO
