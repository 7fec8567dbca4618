"""A note that says what memory already says, in other words.

``memory_write`` skips a note already present word for word (``files/notes.py``); this finds
one present in other words: the note is searched, each cited line of the best hits compared
with it by meaning (the query embedder), and a line at least ``threshold`` alike whose names
and numbers the note shares is a restatement (:data:`NAMED_MARGIN` less alike when those are
a person's names and a value's). A changed fact is not one: "lives in Paris"
against "moved to Berlin" differ in a name, and "ships on 12 March" against "ships on 30
April" in a number, whatever their cosine; a note saying something changed ("became
vegetarian" against "is vegan", "换成了太平洋保险" against "人寿保险"), where no capital tells
the new value, is one only if it brings no word the line lacks.

The candidates are the best few hits whatever they score: the threshold decides, not the
search's relevance gate (a one-line note scores low against a long chunk of a curated file).
Measured by benchmarks/duplicates.py on every template family of the knowledge-update set
(restatements caught, changes taken for restatements) and on the dev sets' distinct notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.notes import DATE_STAMP, WriteResult
from openclaw_memory.files.workspace import dated_name
from openclaw_memory.search.textsearch import CJK_CHAR, STOP_WORDS
from openclaw_memory.types import SearchHit

if TYPE_CHECKING:
    from openclaw_memory.memory_base import ChatType, Memory

__all__ = ["NAMED_MARGIN", "Restatement", "find_restatement", "restated_note"]

_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CANDIDATES = 4
#: How much lower the threshold is for a note whose names (at least :data:`_NAMES_FOR_MARGIN`:
#: a person's two and a value's, "Ada Park ... Quentin") a line holds all of: the same person
#: and the same named value in other words ("books Quentin for a trim" / "started going to
#: Quentin for haircuts", cosine 0.55-0.64). On benchmarks/duplicates.py restatements caught
#: on families f / g / i went 81.6 / 96.1 / 84.4 -> 92.1 / 100 / 98.4 %, changes taken for
#: restatements and false alarms on the dev sets' distinct notes unchanged (0.15: the same;
#: two names, a project and its tool, took 5-15 % of changes on families c and e).
NAMED_MARGIN = 0.1
_NAMES_FOR_MARGIN = 3
#: Words by which a note says something changed ("became", "took up", "换成了"), or that it
#: is recent ("lately", "since the spring", "最近"): a state just begun is a change.
_CHANGE = re.compile(
    r"(?i)\b(?:bec[oa]mes?|switch(?:ed|es)?|chang(?:ed|es)|mov(?:ed|es)|transferred|replaced|"
    r"swapped|traded|upgraded|downgraded|handed|passed|gave up|gives up|dropped|quit|left|"
    r"t[oa]ok(?:es)? (?:up|over)|picked up|enrolled|joined|started|stopped|no longer|any ?more|"
    r"instead|new|now|hooked|adopted|bought|sold|signed up|registered|hired|fired|promoted|"
    r"reorg|went|since|recently|lately|these days|nowadays)\b|换|改|转|迁|搬|退|新|成了|选了|不再|开始|"
    r"现在|最近|近来|如今|这阵子|刚|迷上|领养|报了|进了|买了|卖了|加入|入职|跳槽")
#: CJK characters that link or mark a change rather than say what changed.
_CJK_LINKS = frozenset("了的在到是把给成着过去来也都就又还和与跟让被换改转迁搬退新选不再开始现")


@dataclass(frozen=True, slots=True)
class Restatement:
    path: str
    line: int
    text: str
    similarity: float


def _bare(line: str) -> str:
    return _MARKER.sub("", DATE_STAMP.sub("", line)).strip()


def _pinned(text: str) -> set[str]:
    """The tokens a restatement must keep: numbers, and names (capitalised words; the first
    word of the note too unless it is a common word: "Kestrel switched to MongoDB" is about
    Kestrel, "The team..." is not about "the")."""
    tokens = _TOKEN.findall(text)
    out = set()
    for n, token in enumerate(tokens):
        named = token[:1].isupper() and (n > 0 or token.lower() not in STOP_WORDS)
        if any(ch.isdigit() for ch in token) or named:
            out.add(token.lower())
    return out


def _names_value(pinned: set[str]) -> bool:
    """Whether a note's names are more than whom it is about: :data:`_NAMES_FOR_MARGIN` or
    more (a person's two and a value's), so that a line holding them all is most likely the
    fact."""
    return len({t for t in pinned if len(t) > 1}) >= _NAMES_FOR_MARGIN


def _brings(note: str, line: str) -> bool:
    """Whether a ``note`` saying something changed brings a word ``line`` lacks: the new
    value of the fact ("became vegetarian" against "is vegan", "换成了太平洋保险" against
    "人寿保险"), which a name check misses in lower case and in Chinese. A note that says
    nothing changed may use other words freely."""
    if not _CHANGE.search(note):
        return False
    plain = _CHANGE.sub(" ", note)
    have = {t.lower() for t in _TOKEN.findall(line)}
    words = {t.lower() for t in _TOKEN.findall(plain) if not CJK_CHAR.search(t)}
    if any(w not in have and w not in STOP_WORDS and len(w) > 1 for w in words):
        return True
    return bool(set(CJK_CHAR.findall(plain)) - set(line) - _CJK_LINKS)


def _hit_lines(memory: Memory, hit: SearchHit) -> list[str]:
    """Every line a hit cites, read from its file (a snippet is cut short at its character
    bound, and a long chunk's other lines would go unchecked)."""
    if hit.source != "memory":
        return hit.snippet.split("\n\nSource: ", 1)[0].split("\n")
    try:
        note = memory.get(hit.path, hit.start_line, hit.end_line - hit.start_line + 1)
    except OpenClawMemoryError:  # gone meanwhile: what the snippet shows is all there is
        return hit.snippet.split("\n\nSource: ", 1)[0].split("\n")
    return note.text.split("\n")


def find_restatement(memory: Memory, note: str, *, threshold: float,
                     path_prefix: str | None = None, only_in: str | None = None,
                     daily_only: bool = False) -> Restatement | None:
    """The line of memory that ``note`` restates, if any: the same words in any file (its
    date stamp and list marker aside), or, with an embedding provider, the same meaning.
    ``only_in``: look in that file alone (a fact promoted from a daily log to ``MEMORY.md``
    is not a copy of the log's line); ``daily_only``: look in the daily logs alone."""
    provider = memory.provider
    bare = _bare(note)
    if not bare or "\n" in bare.strip():
        return None  # a multi-line note is a document, not one fact to compare
    # Every candidate, however low it scores: a one-line note against a long chunk of a
    # curated file scores below the relevance gate, and the comparison below decides.
    response = memory.search(bare, max_results=_CANDIDATES, min_score=0.0, path_prefix=path_prefix,
                             path_filter=_looked_in(only_in, daily_only))
    lines: list[tuple[str, int, str]] = []
    for hit in response.results:
        lines += [(hit.path, hit.start_line + k, text) for k, text in enumerate(_hit_lines(memory, hit))
                  if _bare(text)]
    same = next(((p, n, t) for p, n, t in lines if _bare(t).casefold() == bare.casefold()), None)
    if same is not None:
        return Restatement(*same, 1.0)
    if provider is None or not lines:
        return None
    try:
        vectors = np.asarray(provider.embed_documents([bare, *(_bare(t) for _p, _n, t in lines)]),
                             dtype=np.float32)
    except Exception:  # no restatement check during an outage: the exact check still runs
        return None
    pinned = _pinned(bare)
    bar = threshold - NAMED_MARGIN if _names_value(pinned) else threshold
    best: Restatement | None = None
    for (path, number, text), vector in zip(lines, vectors[1:], strict=True):
        similarity = float(vector @ vectors[0])
        words = {t.lower() for t in _TOKEN.findall(text)}
        if similarity >= bar and pinned <= words and not _brings(bare, _bare(text)) and (
                best is None or similarity > best.similarity):
            best = Restatement(path, number, text, similarity)
    return best


def _looked_in(only_in: str | None, daily_only: bool) -> Callable[[str], bool] | None:
    if only_in is not None:
        return only_in.__eq__
    return (lambda path: dated_name(path) is not None) if daily_only else None


def restated_note(memory: Memory, content: str, *, target: Literal["daily", "memory"],
                  area: str | None, chat_type: ChatType = "direct") -> WriteResult | None:
    """What ``memory.write`` answers instead of writing ``content`` when memory already says
    it (in any file, or in the curated file for a note meant for it; outside a direct chat
    in the daily logs alone), with the ``write.restatement_similarity`` setting; None: write
    it. Both backends ask this first."""
    threshold = memory.settings.write.restatement_similarity
    if threshold is None:
        return None
    curated = (f"{area}/MEMORY.md" if area is not None else memory.curated_name()
               ) if target == "memory" else None
    found = find_restatement(memory, content, threshold=threshold,
                             path_prefix=None if area is None else area + "/", only_in=curated,
                             daily_only=chat_type != "direct")
    return None if found is None else WriteResult(found.path, found.line, found.line, False,
                                                  "duplicate", existing=found.text)

