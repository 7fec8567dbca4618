"""When each hit's fact was learned, and the newer of two hits about one subject first.

Each hit's *fact line* is the cited line holding most of the question's words (a hit cites a
few lines around its best one).

``as_of``: a daily log's date (its file name), else the ``(as of YYYY-MM-DD)`` stamp on the
fact line (curation stamps what it writes; a person's undated line has none, and is never
reordered: counting it older than any dated fact about its subject made unchanged facts lose
to newer notes about other things, benchmarks/knowledge_update.py unchanged@1 66.7 -> 42.9).

Newer wins: two dated hits whose fact lines are about one subject and say different things:
the newer one is moved right above the older, and the older one is marked ``superseded_by``
the newer's citation. About one subject: the fact lines share the question's words, and
either most of their own words beyond the question's, or, with an embedder, their meaning
once the question's words are taken out (cosine at least :data:`SAME_MEANING`): "Ada lives
in Paris" and "Ada moved to Berlin" share only the name. The same text is a restatement, not a
change. Only hits already returned are reordered: the set of hits (recall at k) never changes,
and a question about the past still gets the older fact, marked, next to the newer; a
question that names a period ("on 3 March", "last week") is left as the dates ranked it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

import numpy as np

from openclaw_memory.files.notes import DATE_STAMP
from openclaw_memory.files.workspace import dated_name, valid_date
from openclaw_memory.search.textsearch import keyword_terms
from openclaw_memory.types import SearchHit

__all__ = ["SAME_MEANING", "SAME_WORDS", "as_of", "fact_line", "newer_first"]

#: Share of the shorter fact line's content words, the question's aside (a name shared by
#: every fact about a person says nothing of which fact), two lines must share.
SAME_WORDS = 0.4
#: Cosine of two fact lines' vectors, the question's words (the subject's name) taken out, that
#: makes them about one subject (with an embedder). With the bundled model "is vegetarian" /
#: "became vegan" 0.70, "lives in Paris" / "moved to Berlin" 0.44, "lives in Paris" / "joined
#: Globex" 0.22; on benchmarks/knowledge_update.py lower thresholds caught more changes but
#: marked unchanged facts superseded (0.3: their recall@1 45.7 -> 20.0).
SAME_MEANING = 0.5
_TOKEN = re.compile(r"[^\W_]+|[\u3400-\u9fff]", re.UNICODE)

Embed = Callable[[list[str]], Any]


def _words(text: str) -> set[str]:
    """Content words and CJK character pairs, as the keyword side reads them."""
    return {term.lower() for term in keyword_terms(DATE_STAMP.sub("", text))}


def _cited_lines(hit: SearchHit) -> list[str]:
    # The snippet ends with a "Source: path#L.." line when citations are on.
    return [line for line in hit.snippet.split("\n\nSource: ", 1)[0].split("\n") if line.strip()]


def fact_line(hit: SearchHit, asked: set[str]) -> str:
    """The cited line holding most of the question's words (the first of equals)."""
    lines = _cited_lines(hit)
    if not lines:
        return ""
    return max(lines, key=lambda line: len(_words(line) & asked))


def as_of(hit: SearchHit, line: str | None = None) -> date | None:
    """The day the hit's fact was learned, when the notes say."""
    if hit.source == "memory":
        named = dated_name(hit.path)
        if named is not None:
            return named
    return valid_date(DATE_STAMP.search(line if line is not None else "\n".join(_cited_lines(hit))))


#: Words by which a question asks for the present value ("Where does she live now?"). Only
#: such questions let a newer daily log move above an older one.
_NOW = re.compile(r"(?i)\b(?:now|currently|current|these days|nowadays|at the moment|at present|"
                  r"any ?more|latest|most recent(?:ly)?)\b|现在|目前|如今|当前|眼下")
#: A question is a sentence: longer text (a pasted dialogue) is never read as asking "now".
_QUESTION_WORDS = 30


def asks_now(question: str) -> bool:
    """Whether ``question`` asks for the current value of something."""
    return len(question.split()) <= _QUESTION_WORDS and bool(_NOW.search(question))


def _closest_lines(hits: Sequence[SearchHit], asked: set[str], question: str,
                   embed: Embed) -> list[str]:
    """Each hit's fact line, ties on the question's words broken by meaning: in a curated
    chunk every line names the person, and the one about what was asked is the fact."""
    tied = []
    for hit in hits:
        lines = _cited_lines(hit)
        best = max((len(_words(line) & asked) for line in lines), default=0)
        tied.append([line for line in lines if len(_words(line) & asked) == best])
    texts = [DATE_STAMP.sub("", line) for group in tied if len(group) > 1 for line in group]
    if not texts:
        return [group[0] if group else "" for group in tied]
    try:
        vectors = np.asarray(embed([question, *texts]), dtype=np.float32)
    except Exception:  # an embedding outage: the first of equals, as without an embedder
        return [group[0] if group else "" for group in tied]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    scores = iter(unit[1:] @ unit[0])
    chosen = []
    for group in tied:
        if len(group) > 1:
            chosen.append(max(zip([float(next(scores)) for _ in group], group, strict=True))[1])
        else:
            chosen.append(group[0] if group else "")
    return chosen


def newer_first(hits: Sequence[SearchHit], question: str, embed: Embed | None = None, *,
                reorder: bool = True) -> tuple[SearchHit, ...]:
    """``hits`` with dates and, with ``reorder``, the newer of two same-subject hits first,
    the older marked."""
    asked = _words(question)
    now = reorder and asks_now(question)
    lines = (_closest_lines(hits, asked, question, embed) if now and embed is not None
             else [fact_line(hit, asked) for hit in hits])
    dated = [replace(hit, as_of=day.isoformat() if (day := as_of(hit, line)) else None)
             for hit, line in zip(hits, lines, strict=True)]
    if not reorder or any(hit.explanation.date_match for hit in dated):
        return tuple(dated)  # (or the question names the time it asks about: that one)
    if now and embed is not None:
        return present_value_first(dated, lines, question, asked, embed)
    words = [_words(line) for line in lines]
    pairs = [(i, j) for i in range(len(dated)) for j in range(len(dated))
             if _candidates(dated[i], dated[j], words[i], words[j], asked, logs=now)]
    if not pairs:
        return tuple(dated)
    close = _meaning(lines, pairs, asked, embed) if embed is not None else {}
    order = list(range(len(dated)))
    superseded: dict[int, str] = {}
    for i, j in pairs:  # i is older than j
        a, b = words[i] - asked, words[j] - asked
        similar = bool(a and b) and len(a & b) / min(len(a), len(b)) >= SAME_WORDS
        if not (similar or close.get((i, j), 0.0) >= SAME_MEANING):
            continue
        superseded.setdefault(i, dated[j].citation or dated[j].path)
        at_old, at_new = order.index(i), order.index(j)
        if at_new > at_old:  # the newer ranked lower: it moves right above the older
            order.pop(at_new)
            order.insert(at_old, j)
    return tuple(replace(dated[k], superseded_by=superseded.get(k)) for k in order)


#: An answer to a "now" question: its fact line's cosine with the question, both without the
#: subject's name and the "now" words, at least this share of the best line's, and at least
#: :data:`ANSWER_FLOOR`. On benchmarks/knowledge_update.py (answers first) 0.55 gave
#: current@1 68.3 and unchanged@1 57.1 (more unchanged facts taken for answers of another
#: kind), 0.7: 66.2 and 69.0, 0.85: 62.8 and 81.0; score order: 44.8 and 66.7.
ANSWER_SHARE = 0.7
ANSWER_FLOOR = 0.12
#: The subject of a question: its terms found in at least this share of the hits' fact lines
#: (the person's name is in every line about them; the thing asked about in few).
SUBJECT_SHARE = 0.6


def present_value_first(hits: Sequence[SearchHit], lines: Sequence[str], question: str,
                        asked: set[str], embed: Embed) -> tuple[SearchHit, ...]:
    """For a question asking the present value: the hits whose fact lines answer it (about
    its subject, and close in meaning once the subject's name is left out) first, newest
    first; an undated curated line counts as older than any dated note. The older answers are
    marked ``superseded_by`` the newest. The other hits follow in their order."""
    about = [k for k, line in enumerate(lines) if (_words(line) - _now_terms(line)) & asked]
    if len(about) < 2:
        return tuple(hits)
    counts: dict[str, int] = {}
    for k in about:
        for term in _words(lines[k]) & asked:
            counts[term] = counts.get(term, 0) + 1
    subject = {t for t, n in counts.items() if n >= SUBJECT_SHARE * len(about)}
    if not subject:
        return tuple(hits)
    texts = [_without(question, subject), *(_without(lines[k], subject) for k in about)]
    try:
        vectors = np.asarray(embed(texts), dtype=np.float32)
    except Exception:  # an embedding outage must not fail a search that already has its hits
        return tuple(hits)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    closeness = unit[1:] @ unit[0]
    floor = max(ANSWER_FLOOR, ANSWER_SHARE * float(closeness.max()))
    answers = [k for k, c in zip(about, closeness, strict=True) if float(c) >= floor]
    if not answers:
        return tuple(hits)
    newest = sorted(answers, key=lambda k: (hits[k].as_of or "", -k), reverse=True)
    # Answers before the rest: a note on another of the subject's facts ("Ada became keto")
    # scored as high as the one asked about is no answer to "where does Ada live now?".
    order = [*newest, *(k for k in range(len(hits)) if k not in answers)]
    top = hits[newest[0]]
    marked = {k: top.citation or top.path for k in newest[1:]
              if (hits[k].as_of or "") < (top.as_of or "")}
    return tuple(replace(hits[k], superseded_by=marked.get(k)) for k in order)


def _now_terms(text: str) -> set[str]:
    return {m.group(0).lower() for m in _NOW.finditer(text)}


def _without(text: str, subject: set[str]) -> str:
    """``text`` without the subject's terms, the "now" words and the date stamp."""
    out = _NOW.sub(" ", DATE_STAMP.sub("", text))
    for term in sorted(subject, key=len, reverse=True):
        out = re.sub(rf"(?i)\b{re.escape(term)}(?:'s)?\b" if term.isascii() else re.escape(term),
                     " ", out)
    return " ".join(out.split()) or "-"


def _candidates(old: SearchHit, new: SearchHit, a: set[str], b: set[str],
                asked: set[str], *, logs: bool = False) -> bool:
    """Both dated, the second newer, the first a curated fact (not a daily log), different
    text, and sharing a word of the question. Two daily logs are never reordered: a log is a
    record of its day, and conversation logs mention the same people every day (LoCoMo dev
    recall@1 fell from 63.2 to 52.0 when logs were ordered newer first; recall@6 unchanged)."""
    if new.as_of is None or old.as_of is None or new.as_of <= old.as_of:
        return False
    if old.source != "memory" or (dated_name(old.path) is not None and not logs):
        return False
    return bool(a) and bool(b) and a != b and bool(a & b & asked)


def _meaning(lines: list[str], pairs: list[tuple[int, int]], asked: set[str],
             embed: Embed) -> dict[tuple[int, int], float]:
    """Each pair's cosine of its two fact lines with the question's words taken out (what is
    left is what each says of the subject: one embedding per line, not per pair); empty when
    the embedder fails (words decide alone)."""
    used = sorted({k for pair in pairs for k in pair})
    texts = []
    for k in used:
        kept = [t for t in _tokens(DATE_STAMP.sub("", lines[k])) if t.lower() not in asked]
        texts.append(" ".join(kept) or "-")
    try:
        vectors = np.asarray(embed(texts), dtype=np.float32)
    except Exception:  # an embedding outage must not fail a search that already has its hits
        return {}
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = dict(zip(used, vectors / np.where(norms == 0, 1.0, norms), strict=True))
    return {(i, j): float(unit[i] @ unit[j]) for i, j in pairs}


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)
