"""A question about what came before a value names the later value as its anchor ("Where
did Ada live before Berlin?", "王芳搬到西安之前住在哪里"): searched with it, the anchor's
own lines (the move to Berlin, every other person in Berlin) fill the hits and the earlier
value is not among them. It is searched without the anchor: the subject's lines about the
attribute, of which the earlier value is one.

Only an anchor that is a value: a few words, no digits (a date anchors a period: "the Sunday
before October 25, 2022"), not an event ("before meeting Samantha", "before he adopted Toby").
The search pipeline also keeps an anchor whose removal changes the days the question names
("the day before yesterday").
"""

from __future__ import annotations

import re

__all__ = ["without_anchor"]

_BEFORE = re.compile(r"(?is)^(?P<asked>.*?\S)\s+(?:before|prior to)\s+(?P<anchor>[^?]{1,60}?)\s*\?\s*$")
#: A Chinese anchor: a change verb, the value, 之前 ("搬到西安之前", "用Jenkins之前").
_CJK_BEFORE = re.compile(r"(?:搬到|搬去|改用|换到|换成|转到|挪到|加入|用|去|跟|找|进|到)"
                         r"[^\uff0c\u3002\uff1f?\s的]{1,12}?之前")
_PRONOUNS = frozenset("i you he she it we they his her their my our its".split())
_MOST_WORDS = 4


def without_anchor(question: str) -> str | None:
    """``question`` without its "before <value>" anchor, or None when it has none."""
    found = _BEFORE.match(question)
    if found is not None:
        anchor = found["anchor"].split()
        first = anchor[0].lower()
        if (len(anchor) > _MOST_WORDS or any(ch.isdigit() for ch in found["anchor"])
                or first.endswith("ing") or first in _PRONOUNS):
            return None
        return found["asked"] + "?"
    if "之前" in question:
        stripped = _CJK_BEFORE.sub("", question, count=1)
        return stripped if stripped != question else None
    return None
