"""Word lists of the fact-consistency model: negation, numbers, time words, quantifiers, antonyms,
word categories and synonyms.

They serve twice. Training (judge.text.perturb) uses them to *make* distorted and meaning-preserving
variants of real sentences, in the manner of FactCC (Kryscinski et al. 2020, "Evaluating the Factual
Consistency of Abstractive Text Summarization"): antonym and category swaps distort, synonym swaps do
not. Inference (judge.text.align) uses the negation, number, antonym and category lists as cues read
off the aligned spans. Synonyms are only used to make training pairs, never as a cue, so the model
cannot simply memorise them. Plain data a reviewer can read and extend; all hand-written here.
"""

from __future__ import annotations


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(tuple(p.split("/")) for p in text.split())  # type: ignore[misc]


def _groups(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(w.replace("_", " ") for w in g.split(",")) for g in text.split())


NEGATIONS = frozenset("""not no never none nothing nobody nowhere neither nor without cannot cant
dont doesnt didnt isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt
lack lacks lacking lacked unable refuse refuses refused refusing fail fails failed failing
absence absent shortage deficiency insufficiency paucity scarcity missing
""".split())

NUMBER_WORDS: dict[str, float] = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                     "ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6,
                     "billion": 10**9, "dozen": 12, "half": 0.5, "quarter": 0.25, "twice": 2,
                     "once": 1, "single": 1, "double": 2, "triple": 3, "couple": 2})
ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth".split())}

TIME_WORDS = frozenset("""monday tuesday wednesday thursday friday saturday sunday weekend weekday
january february march april may june july august september october november december
morning afternoon evening night midnight noon today tonight tomorrow yesterday week month year
spring summer autumn fall winter daily weekly monthly yearly annual annually hourly""".split())

QUANTIFIERS = frozenset("""all some none most few many several every each both any only much
more less least fewer little majority minority everyone everybody someone nobody""".split())

# Antonym pairs (either order), common in conversation summaries.
ANTONYMS = _pairs("""
accept/reject accept/decline agree/disagree allow/forbid allow/prohibit always/never
approve/reject approve/disapprove arrive/leave ask/answer available/unavailable
before/after begin/end best/worst better/worse big/small buy/sell cheap/expensive
certain/uncertain clear/unclear close/open closed/open cold/hot come/go complete/incomplete
confirm/deny correct/incorrect correct/wrong dark/light day/night dead/alive decrease/increase
difficult/easy early/late easy/hard empty/full enjoy/hate entrance/exit expensive/affordable
fail/succeed failure/success false/true fast/slow few/many first/last found/lost friend/enemy
gain/lose give/take good/bad happy/sad happy/unhappy hard/soft heavy/light high/low
import/export in/out include/exclude included/excluded inside/outside interested/uninterested
join/leave keep/discard large/small laugh/cry least/most less/more like/dislike likes/dislikes
liked/disliked limited/unlimited long/short lose/win loss/profit loud/quiet love/hate
major/minor maximum/minimum more/fewer narrow/wide necessary/unnecessary negative/positive
new/old noisy/quiet optimistic/pessimistic on/off online/offline open/shut pass/fail
past/future permanent/temporary permit/forbid pleased/displeased polite/rude poor/rich
possible/impossible present/absent presence/absence private/public pull/push raise/lower
remember/forget reward/punishment right/wrong safe/dangerous satisfied/dissatisfied
same/different simple/complex simple/complicated start/finish start/stop strong/weak
success/failure support/oppose sure/unsure top/bottom true/false up/down useful/useless
usual/unusual valid/invalid visible/invisible voluntary/mandatory optional/mandatory
optional/required wide/limited win/lose with/without yes/no young/old agreed/refused
accepted/rejected allowed/forbidden approved/rejected arrived/left bought/sold confirmed/denied
decreased/increased enjoyed/hated gained/lost passed/failed remembered/forgot started/stopped
won/lost likely/unlikely legal/illegal able/unable aware/unaware willing/unwilling
excited/bored interesting/boring relaxed/stressed calm/angry cheaper/dearer cheaper/pricier
higher/lower larger/smaller longer/shorter older/younger faster/slower earlier/later
increase/reduce increased/reduced increasing/decreasing above/below over/under front/back
inbound/outbound arrival/departure upgrade/downgrade upgraded/downgraded
refund/charge refunded/charged cancel/confirm cancelled/confirmed canceled/confirmed
basic/advanced beginner/expert novice/advanced novice/expert general/specific
praise/criticize praised/criticized success/fail benefit/drawback advantage/disadvantage
strength/weakness pro/con praise/blame host/guest buyer/seller teacher/student
employer/employee parent/child husband/wife boyfriend/girlfriend brother/sister
mother/father son/daughter uncle/aunt king/queen man/woman boy/girl male/female
whole/partial full/partial comprehensive/basic comprehensive/limited luxury/basic luxury/cheap
cheaper/expensive cheaper/costlier exclusive/regular exclusive/common new/existing new/used
existing/potential current/former current/previous senior/junior senior/young elderly/young
rare/common rarely/often seldom/often sometimes/always modern/traditional modern/old
special/ordinary special/regular unique/common formal/informal official/unofficial
complete/partial entire/partial all/some everyone/nobody everything/nothing always/sometimes
convenient/inconvenient comfortable/uncomfortable efficient/inefficient effective/ineffective
reliable/unreliable important/unimportant relevant/irrelevant responsible/irresponsible
honest/dishonest fair/unfair friendly/unfriendly helpful/unhelpful kind/cruel generous/stingy
brave/cowardly proud/ashamed excited/disappointed hopeful/hopeless careful/careless
successful/unsuccessful popular/unpopular familiar/unfamiliar happy/angry glad/sorry
include/omit included/omitted add/remove added/removed attach/detach connect/disconnect
enable/disable enabled/disabled lock/unlock locked/unlocked load/unload pack/unpack
appear/disappear agree/object admit/deny accept/refuse accepted/refused believe/doubt
trust/distrust like/hate love/dislike want/refuse remember/forgot allowed/banned permitted/forbidden
win/lose victory/defeat winner/loser profit/loss rise/fall rose/fell increase/drop grow/shrink
expand/reduce strengthen/weaken improve/worsen improved/worsened better/poorer
""")

# Words of one kind: swapping one for another changes the fact (a common-noun entity swap).
CATEGORIES = _groups("""
red,blue,green,yellow,black,white,orange,purple,pink,brown,grey
milk,butter,cheese,bread,eggs,rice,pasta,meat,chicken,fish,beef,pork,salad,soup,pizza,cake,sugar,flour,apples,bananas,potatoes,tomatoes
coffee,tea,water,juice,wine,beer,soda,milkshake
breakfast,lunch,dinner,brunch,snack
car,bus,train,plane,bike,taxi,boat,truck,motorcycle,van,subway
doctor,nurse,teacher,lawyer,engineer,manager,designer,developer,accountant,waiter,driver,pilot,chef,student,therapist
dog,cat,horse,bird,rabbit,hamster,fish,cow
phone,laptop,tablet,computer,camera,printer,television,remote,keyboard,monitor
email,letter,call,message,text,fax
invoice,receipt,report,contract,ticket,passport,visa,license,certificate,form
cash,card,check,voucher,transfer,certificate
home,office,school,hospital,store,shop,bank,restaurant,hotel,gym,library,airport,station,church,park,beach,cinema
health,dental,life,auto,home,travel,pet,vision,disability,liability
economy,business,first_class,premium
gold,silver,bronze,platinum,basic,standard,premium,deluxe
kitchen,bedroom,bathroom,garage,garden,basement,attic
head,hand,arm,leg,foot,back,eye,ear,knee,shoulder,stomach,tooth
brother,sister,mother,father,son,daughter,aunt,uncle,cousin,grandmother,grandfather,wife,husband
football,basketball,tennis,golf,soccer,baseball,hockey,volleyball,chess
guitar,piano,violin,drums,flute
movie,film,concert,party,wedding,meeting,game,show,match,exhibition
buttons,screen,battery,speaker,microphone,charger,cable
rubber,plastic,wood,metal,glass,titanium,steel,paper,leather
small,medium,large
""")

# Synonym groups: meaning-preserving swaps for training pairs only (never a cue).
SYNONYMS = _groups("""
ask,inquire,request big,large buy,purchase start,begin,commence end,finish,conclude help,assist,aid
show,display,present tell,inform,notify get,obtain,receive give,provide,offer need,require
want,wish,desire talk,speak,discuss quick,fast,rapid,swift choose,select,pick think,believe,consider
say,state,mention explain,describe,clarify suggest,recommend,propose agree,concur fix,repair,resolve
check,verify,confirm,examine find,discover,locate call,phone,contact try,attempt use,utilize,employ
make,create,produce change,modify,alter cost,price job,occupation,profession problem,issue,trouble
idea,concept,notion mistake,error help,support,assistance chance,opportunity answer,reply,response
plan,scheme,strategy customer,client friend,pal,buddy trip,journey,travel house,home begin,initiate
important,crucial,essential,vital happy,glad,pleased sad,unhappy,upset angry,annoyed,irritated
easy,simple,straightforward hard,difficult,tough expensive,costly,pricey cheap,inexpensive,affordable
nice,pleasant,lovely smart,clever,intelligent small,little,tiny big,huge,enormous many,numerous,lots_of
also,additionally,moreover,furthermore maybe,perhaps,possibly soon,shortly,presently quickly,rapidly,swiftly
about,regarding,concerning often,frequently,regularly usually,typically,generally finally,ultimately,eventually
mostly,mainly,largely,chiefly wrong,incorrect,mistaken right,correct,accurate enough,sufficient,adequate
entire,whole,complete several,various,multiple different,diverse,varied later,afterwards,subsequently
receive,get,obtain keep,retain,maintain leave,depart send,forward,dispatch meet,encounter reach,arrive_at
reduce,cut,lower,decrease increase,raise,boost show,demonstrate,indicate allow,permit,let
worried,concerned,anxious afraid,scared,frightened tired,exhausted,weary busy,occupied ready,prepared
feature,characteristic,aspect benefit,advantage,upside option,choice,alternative goal,aim,objective
meeting,session,gathering talk,conversation,discussion discuss,debate,talk_over say,remark,note
booking,reservation flight,trip luggage,baggage cancel,call_off,scrap amount,sum,total
mention,bring_up,raise highlight,emphasize,stress,underscore decide,determine,resolve agree,consent
talk_about,discuss,go_over explore,examine,investigate mixed,varied,diverse opinion,view,perception
novice,beginner,newcomer advanced,experienced,skilled,proficient difficult,challenging,complicated
use,operate,handle usefulness,utility,value,benefit convenient,handy function,operation,feature
prospective,potential offer,present,propose,extend contact,reach_out_to,get_in_touch_with
need,requirement,preference range,selection,variety,choice note,observe,point_out indicate,suggest,imply
rate,evaluate,assess finally,ultimately,in_the_end interested_in,curious_about,keen_on
price,cost,rate discount,reduction inform,brief,update describe,outline
argue,contend,claim worry,concern realize,recognize,notice understand,grasp,comprehend
arrange,organize,set_up schedule,arrange confirm,verify,check complain,grumble,object
prefer,favor fancy,like,enjoy search,look_for,seek deliver,bring,hand_over share,tell,pass_on
""")

# Filler that can be dropped or added without changing a fact.
FILLER = ("really", "just", "actually", "basically", "simply", "quite", "very", "also", "then",
          "currently", "now", "indeed", "certainly", "clearly", "definitely")

STOPWORDS = frozenset("""a an the and or but if of to in on at by for with from as is are was were be
been being am do does did have has had will would shall should can could may might must it its this
that these those there here he she they we you i me him her them us my your his their our mine
yours hers theirs ours who whom whose which what when where why how than then so such too very
just also into onto over under about up down out off again further once own same other s t
d ll m o re ve y all any both each few more most some only""".split())
