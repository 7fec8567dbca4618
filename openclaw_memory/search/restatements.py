"""A note memory already holds, and the lines of memory a new note is alike to.

``memory_write`` never loses a note that says something: it refuses only **the same
statement**, a line whose words, in order, are the note's (case, punctuation, spacing, a list
marker and the ``(as of ...)`` stamp aside; ``files/notes.py`` skips a copy in the same file
first). Any other note is written, and the answer names the lines most alike in meaning (cosine
of the query embedder at least ``write.restatement_similarity``), each with its citation and
the day it was learned, so that the model (or the person at the CLI) can correct a line the
note makes stale with ``memory_edit``, or leave both when the note adds a fact.

Why no judgment by meaning: a refusal loses a write unless the model acts on a hint, and
meaning alone cannot tell a restatement from a change. "Carlos is not allergic to peanuts."
reads like "Carlos is allergic to peanuts." (the negation is one word); "Leo is also allergic
to shellfish" like "Leo is allergic to peanuts". The word lists once used to tell them apart
(change words, CJK link characters, look-behinds) fitted our templates and lost 7 of 20 real
changes phrased close to the old line (issue 46). A restatement in other words is now written
with the line it restates named: one extra line that consolidation folds, never a lost fact.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.notes import DATE_STAMP, RelatedLine, WriteResult
from openclaw_memory.files.workspace import dated_name
from openclaw_memory.language.textsearch import CJK_CHAR
from openclaw_memory.search.snippets import without_source_line
from openclaw_memory.search.subject_lines import learned_on
from openclaw_memory.types import SearchHit

if TYPE_CHECKING:
    from openclaw_memory.memory_base import ChatType, Memory

__all__ = ["MOST_RELATED", "NoteCheck", "check_note", "duplicate_of", "note_check", "same_statement",
           "statement_words"]

_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)]|\[[ xX]\])\s+")
_UNIT = re.compile(f"{CJK_CHAR.pattern}|[^\\W_]+", re.UNICODE)
#: Hits whose lines are compared with a note (each cites a few lines).
_CANDIDATES = 4
#: The most related lines an answer names, most alike first.
MOST_RELATED = 3


@dataclass(frozen=True, slots=True)
class NoteCheck:
    """What memory holds of a note: the line saying the same (``same``; then the note is not
    written) and the lines alike in meaning (``related``, most alike first)."""

    same: RelatedLine | None
    related: tuple[RelatedLine, ...] = ()


def _bare(line: str) -> str:
    return _MARKER.sub("", DATE_STAMP.sub("", line)).strip()


def statement_words(text: str) -> list[str]:
    """A line's words in order, as a statement compares them: NFKC, lower case, each CJK
    character a word, punctuation and spacing dropped, no list marker, no date stamp."""
    return _UNIT.findall(unicodedata.normalize("NFKC", _bare(text)).casefold())


def same_statement(note: str, line: str) -> bool:
    """Whether ``line`` says ``note`` word for word ("- Ada lives in Paris (as of 2026-01-02)"
    and "ada lives in paris." do; "Ada does not live in Paris" does not)."""
    words = statement_words(note)
    return bool(words) and words == statement_words(line)


def _learned(path: str, text: str) -> str | None:
    day = learned_on(path, text)
    return day.isoformat() if day else None


def _hit_lines(memory: Memory, hit: SearchHit) -> list[str]:
    """Every line a hit cites, read from its file (a snippet is cut short at its character
    bound, and a long chunk's other lines would go unchecked)."""
    if hit.source != "memory":
        return without_source_line(hit.snippet).split("\n")
    try:
        note = memory.get(hit.path, hit.start_line, hit.end_line - hit.start_line + 1)
    except OpenClawMemoryError:  # gone meanwhile: what the snippet shows is all there is
        return without_source_line(hit.snippet).split("\n")
    return note.text.split("\n")


def check_note(memory: Memory, note: str, *, threshold: float | None,
               path_prefix: str | None = None, only_in: str | None = None,
               daily_only: bool = False) -> NoteCheck:
    """The line of memory saying ``note`` (any file), and the lines alike in meaning (cosine
    at least ``threshold``; None: none are looked for). ``only_in``: look in that file alone
    (a fact promoted from a daily log to ``MEMORY.md`` is not a copy of the log's line);
    ``daily_only``: look in the daily logs alone."""
    bare = _bare(note)
    if not bare or "\n" in bare.strip():
        return NoteCheck(None)  # a multi-line note is a document, not one fact to compare
    # Every candidate, however low it scores: a one-line note against a long chunk of a
    # curated file scores below the relevance gate, and the comparison below decides.
    response = memory.search(bare, max_results=_CANDIDATES, min_score=0.0, path_prefix=path_prefix,
                             path_filter=_looked_in(only_in, daily_only))
    lines: list[tuple[str, int, str]] = []
    for hit in response.results:
        lines += [(hit.path, hit.start_line + k, text)
                  for k, text in enumerate(_hit_lines(memory, hit)) if _bare(text)]
    same = next((RelatedLine(p, n, t, _learned(p, t), 1.0) for p, n, t in lines
                 if same_statement(bare, t)), None)
    if same is not None:
        return NoteCheck(same)
    provider = memory.provider
    if threshold is None or provider is None or not lines:
        return NoteCheck(None)
    try:
        vectors = np.asarray(provider.embed_for_search([bare, *(_bare(t) for _p, _n, t in lines)]),
                             dtype=np.float32)
    except Exception:  # an embedding outage: the note is written, without related lines
        return NoteCheck(None)
    alike = [RelatedLine(p, n, t, _learned(p, t), float(vector @ vectors[0]))
             for (p, n, t), vector in zip(lines, vectors[1:], strict=True)]
    kept = sorted((r for r in alike if r.similarity >= threshold),
                  key=lambda r: (-r.similarity, r.path, r.line))
    return NoteCheck(None, tuple(kept[:MOST_RELATED]))


def duplicate_of(same: RelatedLine) -> WriteResult:
    """What ``memory.write`` answers for a note memory holds word for word: that line."""
    return WriteResult(same.path, same.line, same.line, False, "duplicate", existing=same.text)


def _looked_in(only_in: str | None, daily_only: bool) -> Callable[[str], bool] | None:
    if only_in is not None:
        return only_in.__eq__
    return (lambda path: dated_name(path) is not None) if daily_only else None


def note_check(memory: Memory, content: str, *, target: Literal["daily", "memory"],
               area: str | None, chat_type: ChatType = "direct") -> NoteCheck:
    """:func:`check_note` of what ``memory.write`` is about to write: in any file, or in the
    curated file for a note meant for it; outside a direct chat in the daily logs alone.
    Both backends ask this first."""
    curated = (f"{area}/MEMORY.md" if area is not None else memory.curated_name()
               ) if target == "memory" else None
    return check_note(memory, content, threshold=memory.settings.write.restatement_similarity,
                      path_prefix=None if area is None else area + "/", only_in=curated,
                      daily_only=chat_type != "direct")
