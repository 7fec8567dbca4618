"""The words by which a question says what time it asks about, kept as data.

``data/time_words.json`` holds five small groups in English and Chinese: "now" (现在), the
past ("used to", 以前), phrases saying when ("every week", "yesterday"), the auxiliaries of a
present question ("does", "should") and the verbs of a change before a later value ("before
moving to Berlin?", "搬到西安之前"). Each group records
what it earned on the hand-written knowledge-update dev set. They are the only language data
the time stage reads besides the dates (language/dateforms.py) and the user's words
(``data/user_words.json``).
"""

from __future__ import annotations

import re
from typing import Any

from openclaw_memory.language.wordlists import NOTHING, load, word_pattern

__all__ = ["ASKING", "AUXILIARIES", "CHANGE", "CJK_CHANGE", "NOW", "PAST", "PRESENT_AUXILIARIES",
           "WHEN"]


def _words(group: dict[str, Any]) -> re.Pattern[str]:
    return word_pattern(group.get("en", ()), group.get("zh", ()))


_DATA = load("time_words")
#: A question asking for the present value in words ("now", "currently", 现在).
NOW = _words(_DATA["now"])
#: A question asking about the past ("Where did she live before Berlin?", 以前).
PAST = _words(_DATA["past"])
#: Phrases saying when, not what: never a question's subject.
WHEN = _words(_DATA["when"])
#: The auxiliaries after a question word that ask how things are ("Where does Ada live?",
#: "What should I order for Sam?"), as one alternation.
PRESENT_AUXILIARIES = "|".join(_DATA["present"]["en"]) or NOTHING
#: The words that begin a question ("what", "where") and the auxiliaries its grammatical
#: subject follows ("does", "was"), as alternations.
ASKING = "|".join(_DATA["asking"]["en"]) or NOTHING
AUXILIARIES = "|".join(_DATA["asking"]["auxiliaries"]) or NOTHING


#: A verb of change at the start of an anchor ("moving to", "switching over to"): the value
#: is what follows. Other verbs name events ("before meeting Samantha").
CHANGE = re.compile(r"(?i)^(?:" + ("|".join(_DATA["change"]["en"]) or NOTHING) + r")"
                    r"(?:\s+(?:over\s+)?(?:to|into|in|by|on|at))?\s+")


#: A Chinese anchor: a verb of change or use, the value, 之前/以前 ("搬到西安之前",
#: "用Jenkins之前"). The verb is what tells the value from the subject (Chinese writes no
#: spaces): without one the question is searched as asked.
CJK_CHANGE = re.compile("(?:" + ("|".join(_DATA["change"]["zh"]) or NOTHING) + ")"
                        r"(?P<anchor>[^\uff0c\u3002\uff1f?\s的]{1,12}?)(?:之前|以前)")
