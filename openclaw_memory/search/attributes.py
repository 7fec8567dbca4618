"""What a fact is about: the common attributes of people and projects, by their cue words.

Why a word list: the question names an attribute ("Where does Ada live?") in words the note
that changes it does not ("Ada moved to Berlin", "Ada's new address is in Porto"), and a small
sentence encoder puts "where does ... live" and "moved to Berlin" far apart (cosine 0.18,
against 0.34 for "lives in Paris"). A model reading both knows that moving changes where one
lives; this list is that knowledge for the attributes notes about people and projects change
most: where one lives, works, what one's role and manager are, what one drives, eats, drinks,
uses; one's bank, doctor and gym; a project's dates, versions, builds, hosting, owners and
decisions; partners, pets, studies, commuting and pastimes. A project's technology (its
database, language, framework) had cue words too, among them the values themselves
("python", "postgres"): on the hand-written knowledge-update dev set they grouped "Python
3.12" (stale) with the question and kept the rollback to 3.11 second (current@1 56.7 with
them, 60.0 without, stale above current 30.0 -> 26.7); on the ten template families of
benchmarks/knowledge_update.py they changed no figure. Removed. Each attribute is a pattern
of English word forms and Chinese words. Words that name several attributes as often as one
("switched", "upgraded", "left") are left out: they vetoed true answers on
benchmarks/knowledge_update.py's template families a and b.

What a list costs where its words mislead: "How does she get to work?" read as where she
works until commuting had cues of its own, "commutes by train" as a sport (trains), "a
product manager" as whom one reports to. So the words decide no line alone: they bring two
lines of one attribute closer and push lines of only different attributes apart when a
subject's lines are grouped, and a line fitting the question best that is plainly about
something else gives way to the best of the others (search/present_value.py).
benchmarks/knowledge_update.py measures the list (docs/benchmarks.md): families c, e and f
extended it (the gym apart from weekend pastimes, bank, drink, doctor, builds; "gets to
work" as no employer, "X's team lead" as a manager), family g shows it on new wordings of
attributes it names, families h and i the ranking on attributes it does not name (h's
monitoring got words of its own after it was read: "alerts go through New Relic" had grouped
with the planning room, not with "is monitored with Grafana"). Run blind,
family i (a phone carrier, a barber, volunteering, a project's tracker and design tool) lost
to the list what it gained elsewhere: "phone plan" read as a device, "moved the contract over"
as a home, "the animal shelter" as a pet set its lines apart. So a question naming no
attribute the list knows lets no cue word set lines apart (search/present_value.py), and a
word naming one attribute often but others too ("joined": a company, a club, a team) is a
:data:`HINTS` entry: it brings lines together and sets none apart.

Only lines that already name the question's subject are compared (search/present_value.py),
so a general word ("moved", "joined") is read in that narrow context.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["ATTRIBUTES", "HINTS", "attributes_of", "hinted_attributes"]


def _words(*forms: str) -> str:
    return r"\b(?:" + "|".join(forms) + r")\b"


#: "home" where it is not a way of going or bringing: "brought home a beagle", "went home".
_NOT_GOING = "".join(rf"(?<!\b{verb} )" for verb in (
    "bring", "brings", "brought", "take", "takes", "took", "come", "comes", "came", "go", "goes",
    "went", "get", "gets", "got", "back", "way", "drove", "walked", "headed", "sent"))


#: "work" as employment, not the way there ("gets to work", "walks to work").
_NOT_THE_WAY = "".join(rf"(?<!\b{verb} to )" for verb in (
    "get", "gets", "getting", "got", "go", "goes", "going", "went", "way", "walk", "walks",
    "walked", "cycle", "cycles", "drive", "drives", "ride", "rides", "commute", "commutes",
    "travel", "travels"))


#: A place one goes to ("volunteers with the animal shelter"), not a pet's shelter.
_NOT_A_PLACE = "".join(rf"(?<!\b{words} )" for words in (
    "at the", "to the", "in the", "with the", "at the animal", "with the animal", "public",
    "local", "city"))
#: A phone number or a contract moved to another carrier, not code ported or a home moved.
_NOT_A_NUMBER = r"(?! (?:the|my|his|her|their|a|our) (?:\w+ )?(?:number|contract|plan|sim)\b)"


#: "manager" as a job ("a product manager", "is a manager"), not whom one reports to.
_ROLE_MANAGER = (r"(?:an?|product|project|program|engineering|account|marketing|sales|office|"
                 r"general|senior|junior) manager")
_NOT_A_ROLE = "".join(rf"(?<!\b{word} )" for word in (
    "a", "an", "product", "project", "program", "engineering", "account", "marketing", "sales",
    "office", "general", "senior", "junior"))


#: "X's team lead" is whom X reports to; "a team lead", "promoted to team lead" a role.
_WHOSE = r"(?:(?<=['\u2019]s )|(?<=['\u2019]s new ))"
_NOT_WHOSE = r"(?<!['\u2019]s )(?<!['\u2019]s new )"


#: Attribute -> pattern of its cue words (English word forms; CJK words as written).
ATTRIBUTES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE) for name, pattern in {
        "home": _words(r"li(?:ve|ves|ved|ving)", _NOT_GOING + r"home", r"house", r"apartment",
                       r"flat(?! white)", r"condo", r"address",
                       r"mov(?:e|es|ed|ing)(?! under)" + _NOT_A_NUMBER,
                       r"relocat\w*", r"resid\w*", r"settl\w*", r"based (?:in|out of)",
                       r"hometown", r"city", r"town", r"village", r"suburbs?", r"neighbou?rhood",
                       r"rent\w*", r"lease[sd]?", r"landlord", r"family (?:is|are) (?:now )?in",
                       r"place (?:in|at)", r"(?<=['\u2019]s )place")
                + r"|住|搬|迁|定居|安家|地址|城市|老家|家在|的家|房子|租房|公寓|小区",
        "work": _words(_NOT_THE_WAY + r"work(?:s|ed|ing)?(?! out\b(?! of\b))", r"job", r"jobs",
                       r"employ\w*", r"company",
                       r"hired", r"quit", r"resign\w*", r"laid off",
                       r"career", r"workplace", r"startup", r"firm", r"payroll",
                       r"salary(?! (?:goes|went|is paid|was paid|is going) (?:in)?to)",
                       r"offers?", r"earns? (?:a|her|his|their) living", r"staff", r"colleagues?",
                       r"co-?workers?", r"office", r"intern(?:ship)?", r"onboard\w*")
                + r"|工作|上班|公司|跳槽|入职|加入|离职|就职|单位|辞职|同事|工资|薪|实习",
        "role": _words(r"title", r"role", r"roles", r"position", r"promot\w*", r"job title",
                       r"engineer", r"designer", r"scientist", r"analyst", r"developer",
                       _ROLE_MANAGER, _NOT_WHOSE + r"team lead")
                + r"|职位|职务|升职|晋升|岗位|职称",
        "manager": _words(_NOT_A_ROLE + r"manager", r"manages", r"managed", r"boss", r"supervisor",
                          r"reports? to", r"reporting to", _WHOSE + r"team lead",
                          r"(?:moved|works|working|sits|put) under")
                   + r"|领导|上级|主管|经理|老板|归.{1,4}管|负责管理",
        "vehicle": _words(r"cars?", r"driv(?:e|es|ing|en)", r"drove", r"vehicle", r"suv",
                          r"truck", r"motorbike", r"motorcycle", r"scooter", r"dealer\w*",
                          r"trade[sd]? in", r"traded? (?:\w+ )*in", r"ride")
                   + r"|车|驾驶|座驾",
        "commute": _words(r"commut\w*", r"gets? to (?:work|the office)", r"getting to work",
                          r"(?:comes?|coming|came) in by", r"by (?:bike|bicycle|train|bus|car|tube|"
                          r"subway|metro|tram|ferry)", r"on foot", r"(?:walks?|cycles?|bikes?|"
                          r"drives?) to (?:work|the office)")
                   + r"|通勤|去公司|上班路上|坐地铁|坐公交|骑车|走路去",
        "bank": _words(r"banks?", r"banking", r"banked", r"accounts?", r"savings",
                       r"salary (?:goes|went|is paid|was paid|is going) (?:in)?to", r"deposit\w*",
                       r"current account", r"debit card")
                + r"|银行|账户|存款|开户|工资卡",
        "drink": _words(r"coffee", r"tea", r"drinks?", r"drinking", r"drank", r"orders?",
                        r"ordering", r"(?<=['\u2019]s )usual", r"latte", r"cappuccino", r"espresso",
                        r"flat white", r"cold brew", r"americano", r"mocha", r"matcha")
                 + r"|咖啡|喝|茶|拿铁|美式",
        "doctor": _words(r"doctors?", r"dr", r"physician", r"gp", r"clinic", r"check-?ups?",
                         r"dentist", r"therapist", r"sees dr", r"registered with")
                  + r"|医生|看病|诊所|医院|体检|大夫",
        "builds": _words(r"ci", r"continuous integration", r"builds?", r"built on", r"building on",
                         r"pipelines?")
                  + r"|持续集成|流水线|构建",
        "device": _words(r"phones?", r"smartphone", r"mobile", r"iphone", r"android",
                         r"laptop", r"computer", r"tablet")
                  + r"|手机|电脑|平板",
        "diet": _words(r"diet", r"eat(?:s|ing)?", r"ate", r"food", r"vegan", r"vegetarian",
                       r"pescatarian", r"keto", r"gluten\W?free", r"paleo", r"meat",
                       r"dairy", r"allerg\w*")
                + r"|吃|饮食|素食|纯素|忌口|过敏",
        "schedule": _words(r"due", r"deadline", r"ships?", r"shipping", r"launch\w*",
                           r"scheduled", r"postpon\w*", r"delay\w*", r"pushed back",
                           r"slipp\w*", r"go(?:es)? live", r"release date")
                    + r"|截止|交付|推迟|延期|上线|日期|什么时候|完成|发布|延后",
        "version": _words(r"versions?", r"release[sd]?", r"v\d[\w.]*")
                   + r"|版本|版",
        "tracker": _words(r"tickets?", r"issue tracker", r"(?<=the )\w+ issues", r"backlog",
                          r"(?<=['\u2019]s )board", r"kanban", r"sprint board", r"jira")
                   + r"|任务|需求|看板|工单",
        "design": _words(r"designs?", r"designers?", r"mockups?", r"wireframes?", r"prototypes?",
                         r"figma")
                  + r"|设计|原型|设计稿",
        "monitoring": _words(r"monitor\w*", r"alert(?:s|ing)?", r"observability", r"dashboards?",
                             r"apm", r"uptime checks?", r"error tracking", r"metrics")
                      + r"|监控|告警|报警|可观测",
        "hosting": _words(r"host\w*", r"cloud", r"aws", r"azure", r"gcp", r"servers?",
                          r"deploy\w*", r"data ?cent(?:er|re)s?", r"on-?prem\w*", r"kubernetes")
                   + r"|部署|服务器|云",
        "ownership": _words(r"own(?:s|ed|er|ers|ership)", r"maintain\w*", r"looks? after",
                            r"looked after", r"handed (?:it )?over", r"hand-?over",
                            r"responsib\w*", r"in charge")
                     + r"|负责|维护|交给|接手",
        "decision": _words(r"decid\w*", r"decision", r"revers\w*", r"instead", r"chose",
                           r"choose")
                    + r"|决定|改用|决策|方案",
        "family": _words(r"married", r"wife", r"husband", r"partner", r"girlfriend",
                         r"boyfriend", r"dating", r"engaged", r"divorc\w*", r"spouse",
                         r"seeing", r"together", r"fianc\w*", r"proposed", r"wedding",
                         r"relationship", r"broke up", r"split up")
                  + r"|结婚|老婆|妻子|丈夫|对象|女朋友|男朋友|离婚|恋爱|交往|订婚|分手|在一起",
        "pet": _words(r"pets?", r"dogs?", r"cats?", r"puppy", r"kitten", r"adopt\w*",
                      _NOT_A_PLACE + r"shelter", r"vet", r"parrots?", r"rabbits?", r"hamsters?", r"birds?",
                      r"fish", r"tortoise", r"guinea pig", r"walks (?:the|a|her|his) \w+")
               + r"|宠物|狗|猫|领养|遛|鹦鹉|兔|仓鼠",
        "study": _words(r"school", r"stud(?:y|ies|ying|ied|ent|ents)", r"university",
                        r"college", r"degree", r"enroll\w*", r"program(?:me)?", r"course",
                        r"major(?:s|ed|ing)?", r"class(?:es)?", r"phd", r"master['\u2019]?s",
                        r"bachelor['\u2019]?s", r"thesis", r"semester", r"graduat\w*",
                        r"learn(?:s|ing)?(?! that)", r"lessons?", r"tutor\w*", r"language course")
                 + r"|学|读书|课程|读研|读博|毕业|[日韩德法英俄意西]语|外语",
        "gym": _words(r"gyms?", r"work(?:s|ed|ing)? out(?! of\b)", r"workouts?", r"fitness",
                      r"memberships?", r"members? (?:at|of)", r"trains? at", r"training at",
                      r"personal trainer")
               + r"|健身|锻炼|会员|办了?卡|退了?.{0,4}卡",
        "pastime": _words(r"sports?", r"hobby", r"exercis\w*", r"weekends?", r"spare time",
                          r"free time", r"leisure", r"hooked on", r"into (?!the\b)\w+ing",
                          r"hobbies", r"took up", r"takes? up", r"plays?", r"playing",
                          r"(?<!by )(?<!the )(?<!a )trains?(?! at)", r"training(?! at)", r"tennis",
                          r"football", r"soccer", r"running", r"yoga", r"swimming", r"cycling",
                          r"climbing", r"hiking", r"golf", r"chess", r"painting", r"marathons?")
                   + r"|运动|爱好|周末|业余|打球|跑步|游泳|瑜伽|羽毛球|篮球|足球|徒步|爬山|钓鱼",
    }.items()
}


#: Words that name an attribute more often than not, and others often enough that they must
#: never set two lines apart: one joins a company ("Leo joined Acme") but also a club, a team,
#: a gym ("joined Northside Rovers for the new season" against "plays for Riverside FC").
#: They bring lines of their attribute closer, and decide nothing else.
HINTS: dict[str, re.Pattern[str]] = {
    "work": re.compile(_words(r"join(?:s|ed|ing)?"), re.IGNORECASE),
}


@lru_cache(maxsize=4096)
def hinted_attributes(text: str) -> frozenset[str]:
    """The attributes ``text``'s cue words or :data:`HINTS` name."""
    return attributes_of(text) | frozenset(
        name for name, pattern in HINTS.items() if pattern.search(text))


@lru_cache(maxsize=4096)
def attributes_of(text: str) -> frozenset[str]:
    """The attributes whose cue words ``text`` holds."""
    return frozenset(name for name, pattern in ATTRIBUTES.items() if pattern.search(text))
