"""When each hit's fact was learned, and the newer of two hits about one subject first.

``as_of``: a daily log's date (its file name), else the latest ``(as of YYYY-MM-DD)`` stamp on
the hit's cited lines (curation stamps what it writes; a person's undated line has none).

Newer wins: two hits that say different things about one subject (their cited lines share most
of their content words, and the question's words, but are not the same text) and carry
different dates: the newer one is moved right above the older, and the older one is marked
``superseded_by`` the newer's citation. Only hits already returned are reordered: the set of
hits (recall at k) never changes, and a question about the past still gets the older fact,
marked, next to the newer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from openclaw_memory.files.workspace import dated_name
from openclaw_memory.search.textsearch import keyword_terms
from openclaw_memory.types import SearchHit

__all__ = ["SAME_SUBJECT", "as_of", "newer_first"]

_STAMP = re.compile(r"\(as of (\d{4})-(\d{2})-(\d{2})\)")
#: Share of the smaller hit's content words the two hits must share to be about one subject.
SAME_SUBJECT = 0.5


def as_of(hit: SearchHit) -> date | None:
    """The day the hit's fact was learned, when the notes say."""
    if hit.source == "memory":
        named = dated_name(hit.path)
        if named is not None:
            return named
    found = []
    for match in _STAMP.finditer(_cited_text(hit)):
        try:
            found.append(date(int(match[1]), int(match[2]), int(match[3])))
        except ValueError:
            continue
    return max(found) if found else None


def _cited_text(hit: SearchHit) -> str:
    # The snippet ends with a "Source: path#L.." line when citations are on.
    return hit.snippet.split("\n\nSource: ", 1)[0]


def _words(text: str) -> set[str]:
    """Content words and CJK character pairs, as the keyword side reads them."""
    return {term.lower() for term in keyword_terms(_STAMP.sub("", text))}


def _same_subject(a: set[str], b: set[str], question: set[str]) -> bool:
    if not a or not b or a == b:
        return False  # the same words: a restatement, not a change
    shared = a & b
    if question and not shared & question:
        return False
    return len(shared) / min(len(a), len(b)) >= SAME_SUBJECT


def newer_first(hits: Sequence[SearchHit], question: str) -> tuple[SearchHit, ...]:
    """``hits`` with dates, the newer of two same-subject hits first, the older marked."""
    dated = [replace(hit, as_of=day.isoformat() if (day := as_of(hit)) else None)
             for hit in hits]
    asked = _words(question)
    words = [_words(_cited_text(hit)) for hit in dated]
    order = list(range(len(dated)))
    superseded: dict[int, str] = {}
    for i in range(len(dated)):
        for j in range(len(dated)):
            old, new = dated[i], dated[j]
            if (old.as_of is None or new.as_of is None or new.as_of <= old.as_of
                    or not _same_subject(words[i], words[j], asked)):
                continue
            superseded.setdefault(i, new.citation or new.path)
            at_old, at_new = order.index(i), order.index(j)
            if at_new > at_old:  # the newer ranked lower: it moves right above the older
                order.pop(at_new)
                order.insert(at_old, j)
    return tuple(replace(dated[k], superseded_by=superseded.get(k)) for k in order)
