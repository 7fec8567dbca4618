"""A note that says what memory already says, in other words.

``memory_write`` skips a note already present word for word (``files/notes.py``); this finds
one present in other words: the note is searched, each cited line of the best hits compared
with it by meaning (the query embedder), and a line at least ``threshold`` alike whose names
and numbers the note shares is a restatement (:data:`NAMED_MARGIN` less alike when those are
a person's names and a value's). A changed fact is not one: "lives in Paris"
against "moved to Berlin" differ in a name, and "ships on 12 March" against "ships on 30
April" in a number, whatever their cosine; a note saying something changed ("became
vegetarian" against "is vegan", "换成了太平洋保险" against "人寿保险"), where no capital tells
the new value, is one only if it brings no word the line lacks. Nor is the line's own frame
with another value in it ("is vegetarian" / "is keto", "王芳的导师是林老师" / "...老李"), a
Chinese note about someone else ("李强的家在杭州" / "刘洋住在杭州": Chinese names have no
capital to keep), or another fact of the same person (alike by meaning through the name alone:
"Bruno Silva spends weekends hiking" / "Bruno Silva is on the infra team"). What is still taken
for a restatement: the same lower-case kind of value in another frame ("is on the infra team" /
"belongs to the search team"), which nothing but the words' meaning tells apart.

The candidates are the best few hits whatever they score: the threshold decides, not the
search's relevance gate (a one-line note scores low against a long chunk of a curated file).
Measured by benchmarks/duplicates.py on every template family of the knowledge-update set
(restatements caught; changes, value swaps in the same and in another frame, and another
subject's fact taken for restatements) and on the dev sets' distinct notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.notes import DATE_STAMP, WriteResult
from openclaw_memory.files.workspace import dated_name
from openclaw_memory.search.textsearch import CJK_CHAR, STOP_WORDS
from openclaw_memory.types import SearchHit

if TYPE_CHECKING:
    from openclaw_memory.embeddings.base import EmbeddingProvider
    from openclaw_memory.memory_base import ChatType, Memory

__all__ = ["NAMED_MARGIN", "REWORDED", "Restatement", "find_restatement", "restated_note"]

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
    r"reorg|went|since|recently|lately|these days|nowadays|got|slipped|slips|postponed|delayed)\b|"
    r"换|改|转|迁|搬|退|新|成了|选了|不再|开始|"
    r"现在|最近|近来|如今|这阵子|刚|迷上|领养|报了|进了|买了|卖了|加入|入职|跳槽")
#: CJK characters that link or mark a change rather than say what changed.
_CJK_LINKS = frozenset("了的在到是把给成着过去来也都就又还和与跟让被换改转迁搬退新选不再开始现")
#: What a same-frame value change looks like: the line with one short span swapped for another
#: ("is vegetarian" / "is keto", "住在西安" / "住在北京", "王芳的导师是老李" / "...林老师"), the
#: rest, at least this share of the shorter text, word for word the same (a CJK character
#: weighs half a word). On benchmarks/duplicates.py such changes were taken for restatements
#: 21-52 % of the time (a lower-case or Chinese value has no capital for the name check to
#: keep); now 0-0.8 %, restatements caught unchanged on every family.
_FRAME_SHARE = 0.6
#: The longest swapped span taken for a value, in words (two CJK characters a word).
_SWAP_WORDS = 2.5
#: How alike in meaning (the embedder's cosine) two swapped spans must be to reword a line
#: rather than change its value. Of twelve synonym pairs, six reach it ("often" / "frequently"
#: 0.94, "住在" / "居住在" 0.86; "likes" / "loves" 0.67 does not: written, an extra line); of
#: twelve value pairs none ("vegetarian" / "keto" 0.46, "西安" / "北京" 0.47, "cat" / "dog"
#: 0.67; "Monday" / "Friday" 0.77, capitalised, is kept by the names anyway).
REWORDED = 0.8
_UNIT = re.compile(f"{CJK_CHAR.pattern}|[^\\W_]+", re.UNICODE)
_CJK_RUN = re.compile(f"(?:{CJK_CHAR.pattern})+")


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
    Kestrel, "The team..." is not about "the"; a capital inside a word, "gRPC", "iPhone")."""
    tokens = _TOKEN.findall(text)
    out = set()
    for n, token in enumerate(tokens):
        named = ((token[:1].isupper() and (n > 0 or token.lower() not in STOP_WORDS))
                 or any(ch.isupper() for ch in token[1:]))
        if any(ch.isdigit() for ch in token) or named:
            out.add(token.lower())
    return out


def _cjk_subject(text: str) -> str:
    """What a Chinese note is about: its first two CJK characters past any word saying that
    something changed ("刘洋住在杭州" is about 刘洋; "最近王芳..." about 王芳). A line about
    someone else ("李强的家在杭州") is not what the note restates, however alike the two read:
    Chinese names have no capital for :func:`_pinned` to keep. Empty for a note that does not
    open in CJK (its names are capitalised)."""
    rest = text.strip()
    while (found := _CHANGE.match(rest)) is not None and found.end() > 0:
        rest = rest[found.end():]
    head = rest[:2]
    return head if len(head) == 2 and all(CJK_CHAR.match(ch) for ch in head) else ""


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
    if set(CJK_CHAR.findall(plain)) - set(line) - _CJK_LINKS:
        return True
    # Pairs too: "工商银行" brings 工商 beside "工资卡在招商银行", which holds each character.
    return bool(_value_pairs(plain) - _value_pairs(line))


def _cjk_pairs(text: str) -> set[str]:
    """A text's pairs of adjacent CJK characters."""
    return {run[k:k + 2] for run in _CJK_RUN.findall(text) for k in range(len(run) - 1)}


def _value_pairs(text: str) -> set[str]:
    """:func:`_cjk_pairs` with neither character a link."""
    return {pair for pair in _cjk_pairs(text) if not _CJK_LINKS.intersection(pair)}


def _weight(units: Sequence[str]) -> float:
    return sum(0.5 if CJK_CHAR.match(u) else 1.0 for u in units)


def _text(units: Sequence[str]) -> str:
    """Units joined back as written: CJK characters run together, words spaced."""
    out = ""
    for u in units:
        out += u if CJK_CHAR.match(u) and (not out or CJK_CHAR.match(out[-1])) else " " + u
    return out.strip()


def _says_something(units: Sequence[str]) -> bool:
    """Whether a swapped span holds a word of its own, not a link word."""
    cjk = [u for u in units if CJK_CHAR.match(u)]
    # Two CJK characters are a word whatever they are ("成都" is two links alone).
    return len(cjk) > 1 or any(u not in _CJK_LINKS for u in cjk) or any(
        u not in STOP_WORDS and len(u) > 1 for u in units if not CJK_CHAR.match(u))


def _swapped(note: str, line: str) -> tuple[str, str] | None:
    """The (line's, note's) spans when ``note`` is ``line`` with one short span swapped for
    another, each saying something: the same frame with another value, a change however alike
    the two read ("王芳的导师是老李" / "王芳的导师是林老师"), unless the spans themselves mean
    the same (the caller asks :func:`_reworded`). A span saying that something changed
    ("became vegan" / "eats vegan", "刚提了" / "的座驾是") swaps how a fact is said, not the
    fact: :func:`_brings` judges those."""
    a, b = [u.lower() for u in _UNIT.findall(line)], [u.lower() for u in _UNIT.findall(note)]
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    old, new = a[head:len(a) - tail], b[head:len(b) - tail]
    if not old or not new or _CHANGE.search(_text(old)) or _CHANGE.search(_text(new)):
        return None
    same = _weight(a[:head]) + _weight(a[len(a) - tail:])
    if (max(_weight(old), _weight(new)) <= _SWAP_WORDS
            and same >= _FRAME_SHARE * min(_weight(a), _weight(b))
            and _says_something(old) and _says_something(new)):
        return _text(old), _text(new)
    return None


def _content(text: str) -> set[str]:
    """The words of a line that say what it is about: no link words, no words saying that
    something changed (numbers kept whole or not: "3.2"); CJK text as pairs of characters."""
    plain = _CHANGE.sub(" ", text.lower())
    words = {w for w in _TOKEN.findall(plain) if not CJK_CHAR.search(w)
             and (any(ch.isdigit() for ch in w) or (w not in STOP_WORDS and len(w) > 1))}
    return words | _cjk_pairs(plain)


def _lead(text: str) -> set[str]:
    """Whom a note is about, as :func:`_content` words: its opening capitalised words ("Bruno
    Silva"), or its CJK subject (:func:`_cjk_subject`)."""
    subject = _cjk_subject(text)
    if subject:
        return {subject}
    out = set()
    for token in _TOKEN.findall(text):
        if not token[:1].isupper():
            break
        out.add(token.lower())
    return out


def _told(note: str) -> set[str]:
    """What a note says besides whom it is about (:func:`_content` less :func:`_lead`)."""
    return _content(note) - _lead(note)


def _same_fact(note: str, told: set[str], line: str) -> bool:
    """Whether a ``line`` alike in meaning and holding the note's names may say the note's
    fact: no new value said to be a change, and a word in common with what the note tells
    (``told``, :func:`_told`) besides whom it is about. Two facts of one person read alike to
    the embedder through the name ("Bruno Silva is on the infra team" / "Bruno Silva spends
    weekends hiking", 0.66); a restatement keeps what the fact says. A value swapped in the
    same words is judged apart (:func:`_swapped`)."""
    return not _brings(note, line) and bool(told & _content(line))


def _reworded(provider: EmbeddingProvider, swaps: Sequence[tuple[str, str]]) -> list[bool]:
    """For each (line's, note's) swapped spans, whether the two mean the same: "often" /
    "frequently" rewords a line, "vegetarian" / "keto" changes it."""
    if not swaps:
        return []
    vectors = np.asarray(provider.embed_documents([t for pair in swaps for t in pair]),
                         dtype=np.float32)
    return [float(vectors[2 * k] @ vectors[2 * k + 1]) >= REWORDED for k in range(len(swaps))]


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
    pinned, subject, told = _pinned(bare), _cjk_subject(bare), _told(bare)
    bar = threshold - NAMED_MARGIN if _names_value(pinned) else threshold
    alike: list[Restatement] = []
    for (path, number, text), vector in zip(lines, vectors[1:], strict=True):
        similarity = float(vector @ vectors[0])
        words = {t.lower() for t in _TOKEN.findall(text)}
        if (similarity >= bar and pinned <= words and subject in text
                and _same_fact(bare, told, _bare(text))):
            alike.append(Restatement(path, number, text, similarity))
    swaps = {k: pair for k, r in enumerate(alike) if (pair := _swapped(bare, _bare(r.text)))}
    try:
        reworded = dict(zip(swaps, _reworded(provider, list(swaps.values())), strict=True))
    except Exception:  # the spans cannot be compared now: a swap is taken for a change
        reworded = dict.fromkeys(swaps, False)
    kept = [r for k, r in enumerate(alike) if reworded.get(k, True)]
    return max(kept, key=lambda r: r.similarity, default=None)


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

