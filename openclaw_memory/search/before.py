"""A question about what came before a value names the later value as its anchor ("Where
did Ada live before Berlin?", "王芳搬到西安之前住在哪里"): searched with it, the anchor's
own lines (the move to Berlin, every other person in Berlin) fill the hits and the earlier
value is not among them. It is searched without the anchor: the subject's lines about the
attribute, of which the earlier value is one; the anchor then tells which of them came
before (search/earlier_value.py).

Only an anchor that is a value: a few words, no digits (a date anchors a period: "the Sunday
before October 25, 2022"), not an event ("before meeting Samantha", "before he adopted Toby").
The search pipeline also keeps an anchor whose removal changes the days the question names
("the day before yesterday").
"""

from __future__ import annotations

import re
from typing import NamedTuple

from openclaw_memory.language.time_words import CHANGE, CJK_CHANGE

__all__ = ["Anchored", "split_anchor"]

_BEFORE = re.compile(r"(?is)^(?P<asked>.*?\S)\s+(?:before|prior to)\s+(?P<anchor>[^?]{1,60}?)\s*\?\s*$")
_PRONOUNS = frozenset("i you he she it we they his her their my our its".split())
_MOST_WORDS = 4
_NAME_CHARS = 2
#: A Chinese question: short, and asking (a pasted dialogue that says 之前 is searched as is).
_MOST_CJK_CHARS = 40
_CJK_ASKS = re.compile(r"哪|什么|谁|吗|几|多少|怎么|[\uff1f?]")
_ARTICLE = re.compile(r"(?i)^(?:a|an|the)\s+")


class Anchored(NamedTuple):
    """A question split at its anchor."""

    asked: str
    """The question without the anchor ("Where did Ada live?")."""
    anchor: str
    """The later value ("Berlin", "a Honda" as "Honda", "西安")."""


def split_anchor(question: str) -> Anchored | None:
    """``question`` split at its "before <value>" anchor, or None when it has none."""
    found = _BEFORE.match(question)
    if found is not None:
        value = _ARTICLE.sub("", CHANGE.sub("", found["anchor"]))
        anchor = value.split() or [""]
        first = anchor[0].lower()
        # A verb with an object is an event ("meeting Samantha"); alone, an activity is a
        # value ("before cycling"), a verb of change is not ("before moving").
        event = first.endswith("ing") and (len(anchor) > 1 or CHANGE.match(first + " "))
        if (not first or len(anchor) > _MOST_WORDS or any(ch.isdigit() for ch in value)
                or event or first in _PRONOUNS):
            return None
        return Anchored(found["asked"] + "?", value.strip())
    # The question names its subject first, in two characters at least: a verb's character
    # inside a name ("张学友") is no verb.
    cjk = CJK_CHANGE.search(question, _NAME_CHARS)
    if cjk is None or len(question) > _MOST_CJK_CHARS or not _CJK_ASKS.search(question):
        return None
    return Anchored(question[:cjk.start()] + question[cjk.end():], cjk["anchor"])
