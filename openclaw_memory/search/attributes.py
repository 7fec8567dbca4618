"""What a fact is about: the common attributes of people and projects, by their cue words.

Why a word list: the question names an attribute ("Where does Ada live?") in words the note
that changes it does not ("Ada moved to Berlin", "Ada's new address is in Porto"), and a small
sentence encoder puts "where does ... live" and "moved to Berlin" far apart (cosine 0.18,
against 0.34 for "lives in Paris"). A model reading both knows that moving changes where one
lives; this list is that knowledge for the attributes notes about people and projects change
most: where one lives, works, what one's role and manager are, what one drives, eats, uses;
a project's dates, versions, tools and decisions; family and pets. Each attribute is a pattern
of English word forms and Chinese words. Words that name several attributes as often as one
("switched", "upgraded", "left") are left out: they vetoed true answers on
benchmarks/knowledge_update.py's template families a and b, which the list was checked on;
family c was written after it, and is the figure to trust.

Only lines that already name the question's subject are compared (search/present_value.py),
so a general word ("moved", "joined") is read in that narrow context.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["ATTRIBUTES", "attributes_of"]


def _words(*forms: str) -> str:
    return r"\b(?:" + "|".join(forms) + r")\b"


#: Attribute -> pattern of its cue words (English word forms; CJK words as written).
ATTRIBUTES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE) for name, pattern in {
        "home": _words(r"li(?:ve|ves|ved|ving)", r"home", r"house", r"apartment",
                       r"address", r"mov(?:e|es|ed|ing)", r"relocat\w*", r"resid\w*",
                       r"settl\w*", r"based (?:in|out of)", r"hometown", r"city",
                       r"neighbou?rhood", r"rent\w*")
                + r"|住|搬|迁|定居|安家|地址|城市|老家|家在|的家",
        "work": _words(r"work(?:s|ed|ing)?", r"job", r"jobs", r"employ\w*", r"company",
                       r"hired", r"join(?:s|ed|ing)?", r"quit", r"resign\w*", r"laid off",
                       r"career", r"workplace", r"startup", r"firm")
                + r"|工作|上班|公司|跳槽|入职|加入|离职|就职|单位|辞职",
        "role": _words(r"title", r"role", r"roles", r"position", r"promot\w*", r"job title",
                       r"engineer", r"designer", r"scientist", r"analyst", r"developer")
                + r"|职位|职务|升职|晋升|岗位|职称",
        "manager": _words(r"manager", r"manages", r"managed", r"boss", r"supervisor",
                          r"reports? to", r"reporting to", r"team lead")
                   + r"|领导|上级|主管|经理|老板|归.{1,4}管|负责管理",
        "vehicle": _words(r"cars?", r"driv(?:e|es|ing|en)", r"drove", r"vehicle", r"suv",
                          r"truck", r"motorbike", r"motorcycle", r"scooter")
                   + r"|车|驾驶",
        "device": _words(r"phones?", r"smartphone", r"mobile", r"iphone", r"android",
                         r"laptop", r"computer", r"tablet")
                  + r"|手机|电脑|平板",
        "diet": _words(r"diet", r"eat(?:s|ing)?", r"ate", r"food", r"vegan", r"vegetarian",
                       r"pescatarian", r"keto", r"gluten\W?free", r"paleo", r"meat",
                       r"dairy", r"allerg\w*")
                + r"|吃|饮食|素食|纯素|忌口|过敏",
        "schedule": _words(r"due", r"deadline", r"ships?", r"shipping", r"launch\w*",
                           r"scheduled", r"postpon\w*", r"delay\w*", r"pushed back")
                    + r"|截止|交付|推迟|延期|上线|日期|什么时候|完成",
"version": _words(r"versions?", r"release[sd]?", r"v\d[\w.]*")
                   + r"|版本|版",
        "technology": _words(r"database", r"db", r"postgres\w*", r"mysql", r"sqlite",
                             r"mongo\w*", r"storage", r"stores (?:its|their) data", r"migrat\w*",
                             r"api", r"framework", r"library", r"stack", r"rest(?:ful)? api",
                             r"graphql", r"grpc")
                      + r"|数据库|框架|接口",
        "decision": _words(r"decid\w*", r"decision", r"revers\w*", r"instead", r"chose",
                           r"choose")
                    + r"|决定|改用|决策|方案",
        "family": _words(r"married", r"wife", r"husband", r"partner", r"girlfriend",
                         r"boyfriend", r"dating", r"engaged", r"divorc\w*", r"spouse")
                  + r"|结婚|老婆|妻子|丈夫|对象|女朋友|男朋友|离婚",
        "pet": _words(r"pets?", r"dogs?", r"cats?", r"puppy", r"kitten")
               + r"|宠物|狗|猫",
        "study": _words(r"school", r"stud(?:y|ies|ying)", r"university", r"college",
                        r"degree")
                 + r"|学校|大学|专业|学习|读书",
    }.items()
}


@lru_cache(maxsize=4096)
def attributes_of(text: str) -> frozenset[str]:
    """The attributes whose cue words ``text`` holds."""
    return frozenset(name for name, pattern in ATTRIBUTES.items() if pattern.search(text))
