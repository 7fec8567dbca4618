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

import json
import re
from importlib import resources
from typing import Any

__all__ = ["CHANGE", "CJK_CHANGE", "NOW", "PAST", "PRESENT_AUXILIARIES", "WHEN"]


#: What an empty group matches: nothing (an empty pattern would match everywhere).
_NOTHING = r"(?!)"


def _load() -> dict[str, Any]:
    text = resources.files("openclaw_memory").joinpath("data/time_words.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _words(group: dict[str, Any]) -> re.Pattern[str]:
    """A group's English forms as whole words in any case, its Chinese words as written."""
    parts = [r"(?i:\b(?:" + "|".join(group["en"]) + r")\b)"] if group.get("en") else []
    parts.extend(group.get("zh", ()))
    return re.compile("|".join(parts) or _NOTHING)


_DATA = _load()
#: A question asking for the present value in words ("now", "currently", 现在).
NOW = _words(_DATA["now"])
#: A question asking about the past ("Where did she live before Berlin?", 以前).
PAST = _words(_DATA["past"])
#: Phrases saying when, not what: never a question's subject.
WHEN = _words({"en": _DATA["when"]["en"]})
#: The auxiliaries after a question word that ask how things are ("Where does Ada live?",
#: "What should I order for Sam?"), as one alternation.
PRESENT_AUXILIARIES = "|".join(_DATA["present"]["en"]) or _NOTHING


#: A verb of change at the start of an anchor ("moving to", "switching over to"): the value
#: is what follows. Other verbs name events ("before meeting Samantha").
CHANGE = re.compile(r"(?i)^(?:" + ("|".join(_DATA["change"]["en"]) or _NOTHING) + r")"
                    r"(?:\s+(?:over\s+)?(?:to|into|in|by|on|at))?\s+")


#: A Chinese anchor: a verb of change or use, the value, 之前/以前 ("搬到西安之前",
#: "用Jenkins之前"). The verb is what tells the value from the subject (Chinese writes no
#: spaces): without one the question is searched as asked.
CJK_CHANGE = re.compile("(?:" + ("|".join(_DATA["change"]["zh"]) or _NOTHING) + ")"
                        r"(?P<anchor>[^\uff0c\u3002\uff1f?\s的]{1,12}?)(?:之前|以前)")
