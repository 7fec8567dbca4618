"""What one query may cost: its text is made encodable and its size bounded, saying what was cut.

A query is text from anywhere (a model, a user, a fuzzer): lone surrogates that no encoder
accepts, NUL and control characters, 100 000 characters, a CJK run that becomes thousands of
character pairs, thousands of distinct words. Each would otherwise turn into an exception or
into an FTS5 OR of thousands of terms (tens of seconds at 100k chunks). The bounds are far
above any question a person or an agent asks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from openclaw_memory.language.textsearch import keyword_terms

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "BoundedQuery", "bound_query", "encodable"]

MAX_QUERY_CHARS = 2_000
MAX_QUERY_TERMS = 400
_UNENCODABLE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class BoundedQuery:
    text: str
    """What the embedder reads (encodable, at most MAX_QUERY_CHARS)."""
    keyword_text: str
    """What the keyword side searches: ``text`` cut to at most MAX_QUERY_TERMS terms."""
    notes: tuple[str, ...] = ()


def encodable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD: any encoder (UTF-8, SQLite, HTTP
    JSON, a tokenizer) accepts the result, and nothing else changes."""
    return _UNENCODABLE.sub("\ufffd", text) if _UNENCODABLE.search(text) else text


def bound_query(text: str) -> BoundedQuery:
    """The query as it will be searched, and a note for each bound that cut it."""
    notes: list[str] = []
    clean = _CONTROL.sub(" ", encodable(text))
    if len(clean) > MAX_QUERY_CHARS:
        clean = clean[:MAX_QUERY_CHARS]
        notes.append(f"query cut to its first {MAX_QUERY_CHARS} characters")
    keywords = clean
    if len(keyword_terms(clean)) > MAX_QUERY_TERMS:
        # Only the keyword side is cut (an OR of thousands of terms is what costs); the
        # embedder still reads the whole question, a long Chinese dialogue included.
        keywords = _cut_to_terms(clean, MAX_QUERY_TERMS)
        notes.append(f"keyword search used the first {MAX_QUERY_TERMS} search terms of the query")
    return BoundedQuery(clean, keywords, tuple(notes))


def _cut_to_terms(text: str, limit: int) -> str:
    # The longest prefix with at most ``limit`` terms (terms only grow with the prefix).
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(keyword_terms(text[:mid])) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]
