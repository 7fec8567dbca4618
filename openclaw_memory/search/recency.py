"""When each hit's fact was learned, and the newer of two hits about one subject first.

Each hit's *fact line* is the cited line holding most of the question's words (a hit cites a
few lines around its best one).

``as_of``: a daily log's date (its file name), else the ``(as of YYYY-MM-DD)`` stamp on the
fact line (curation stamps what it writes; a person's undated line has none).

A question asking for the present value ("Where does Ada live now?"): the hits answering it
first, newest first (search/present_value.py). Other questions:

newer wins between two dated hits whose fact lines are about one subject and say different things:
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

from openclaw_memory.files.notes import DATE_STAMP
from openclaw_memory.files.workspace import dated_name
from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.search.earlier_value import earlier_value_first
from openclaw_memory.search.present_value import (
    conversation_only,
    present_value_first,
    unit_rows,
)
from openclaw_memory.search.question import Question
from openclaw_memory.search.snippets import without_source_line
from openclaw_memory.search.subject_lines import CuratedText, SubjectText, learned_on
from openclaw_memory.types import SearchHit

__all__ = ["LOOKAHEAD", "SAME_MEANING", "SAME_WORDS", "as_of", "fact_line", "looks_wider",
           "newer_first"]

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
    return [line for line in without_source_line(hit.snippet).split("\n") if line.strip()]


def fact_line(hit: SearchHit, asked: set[str]) -> str:
    """The cited line holding most of the question's words (the first of equals)."""
    lines = _cited_lines(hit)
    if not lines:
        return ""
    return max(lines, key=lambda line: len(_words(line) & asked))


def as_of(hit: SearchHit, line: str | None = None) -> date | None:
    """The day the hit's fact was learned, when the notes say."""
    text = line if line is not None else "\n".join(_cited_lines(hit))
    # A transcript is named by its session, not its day: only its stamps date it.
    return learned_on(hit.path if hit.source == "memory" else "", text)


def newer_first(hits: Sequence[SearchHit], asked_question: Question, embed: Embed | None = None,
                *, reorder: bool = True, curated_text: CuratedText | None = None,
                subject_text: SubjectText | None = None) -> tuple[SearchHit, ...]:
    """``hits`` with dates and, with ``reorder``, the newer of two same-subject hits first,
    the older marked. ``asked_question``: the question as the pipeline read it
    (search/question.py: its text, the time it asks about, and the later value a question
    about what came before names, whose earlier values then come first:
    search/earlier_value.py). ``curated_text``: the lines of the curated files among the hits,
    read when a present-value question needs them (present_value.py); ``subject_text``: a
    named subject's lines anywhere in memory, read by the same questions."""
    question, asked, anchor = asked_question.text, asked_question.asked, asked_question.anchor
    words_asked = _words(question)
    now = reorder and asked.now
    lines = [fact_line(hit, words_asked) for hit in hits]
    dated = [replace(hit, as_of=day.isoformat() if (day := as_of(hit, line)) else None)
             for hit, line in zip(hits, lines, strict=True)]
    if not reorder or any(hit.explanation.date_match for hit in dated):
        return tuple(dated)  # (or the question names the time it asks about: that one)
    if embed is not None and anchor is not None:
        return earlier_value_first(dated, question, anchor, [_cited_lines(h) for h in dated],
                                   embed, _line_day, curated_text=curated_text,
                                   subject_text=subject_text)
    if embed is not None and (now or asked.present):
        return present_value_first(dated, question, [_cited_lines(h) for h in dated], embed,
                                   _line_day, now=now, curated_text=curated_text,
                                   subject_text=subject_text)
    words = [_words(line) for line in lines]
    pairs = [(i, j) for i in range(len(dated)) for j in range(len(dated))
             if _candidates(dated[i], dated[j], words[i], words[j], words_asked, logs=now)]
    if not pairs:
        return tuple(dated)
    close = _meaning(lines, pairs, words_asked, embed) if embed is not None else {}
    order = list(range(len(dated)))
    superseded: dict[int, str] = {}
    for i, j in pairs:  # i is older than j
        a, b = words[i] - words_asked, words[j] - words_asked
        similar = bool(a and b) and len(a & b) / min(len(a), len(b)) >= SAME_WORDS
        if not (similar or close.get((i, j), 0.0) >= SAME_MEANING):
            continue
        superseded.setdefault(i, dated[j].citation or dated[j].path)
        at_old, at_new = order.index(i), order.index(j)
        if at_new > at_old:  # the newer ranked lower: it moves right above the older
            order.pop(at_new)
            order.insert(at_old, j)
    return tuple(replace(dated[k], superseded_by=superseded.get(k)) for k in order)


def looks_wider(asked_question: Question, hits: Sequence[SearchHit]) -> bool:
    """Whether ``asked_question``, with these first ``hits``, should look at :data:`LOOKAHEAD`
    times as many, so that a newer answer just past them is found (benchmarks/
    knowledge_update.py: current@1 88 -> 94 on its first template family): it asks how things
    are, and (without "now") is not about a conversation's logs alone, where nothing moves."""
    if any(hit.explanation.date_match for hit in hits):
        return False  # the question names its period: the dates ranked it, nothing moves
    asked = asked_question.asked
    if asked.now or asked_question.anchor is not None:
        return True
    return asked.present and not conversation_only(
        asked_question.text, [_cited_lines(h) for h in hits], hits)


#: How many times ``max_results`` hits a question about how things are looks at.
LOOKAHEAD = 3


def _line_day(hit: SearchHit, line: str) -> str | None:
    day = as_of(hit, line)
    return day.isoformat() if day else None


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
        unit = dict(zip(used, unit_rows(embed(texts)), strict=True))
    except Exception:  # an embedding outage must not fail a search that already has its hits
        return {}
    return {(i, j): float(unit[i] @ unit[j]) for i, j in pairs}


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)
