"""The question, read once: what every stage of the pipeline takes instead of reading the
query text again (bounded, dates spelled out, its search terms, the periods it names, the
time it asks about, and the later value a question about what came before names).

Before this value the pipeline's stages each re-read the text: the keyword side, the gates,
the date bonus and the time stage tokenised it, matched its dates and asked whether it wants
the present, up to a dozen times a search.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime

from openclaw_memory.config import SearchSettings
from openclaw_memory.errors import ContentError
from openclaw_memory.language.dateforms import spell_dates
from openclaw_memory.language.dates import DateWindow, about_a_period, question_dates
from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.language.time_words import NOW
from openclaw_memory.search.absent import asks_about, question_names
from openclaw_memory.search.before import split_anchor
from openclaw_memory.search.present_value import asks_now, asks_present
from openclaw_memory.search.querylimits import bound_query
from openclaw_memory.search.request import SearchRequest

__all__ = ["Asked", "Question", "ask", "read_question"]


@dataclass(frozen=True, slots=True)
class Asked:
    """The time a question asks about, as the time stage reads it."""

    now: bool
    """The present value, asked in words ("now", 现在)."""
    present: bool
    """How things are, without saying "now" ("Where does Ada live?")."""

    @classmethod
    def of(cls, question: str) -> Asked:
        return cls(asks_now(question), asks_present(question))


@dataclass(frozen=True, slots=True)
class Question:
    """The question as every stage reads it."""

    request: SearchRequest
    """Bounded, dates spelled out, without the anchor; ``keywords`` without the "now" words."""
    anchor: str | None
    """The later value a question about what came before it names ("...before Berlin?")."""
    terms: tuple[str, ...]
    """The keyword side's search terms (``keyword_terms`` of ``request.keywords``)."""
    windows: tuple[DateWindow, ...]
    """The periods it names ("on 3 March", "last week"), as of ``request.now``."""
    asked: Asked
    """The time it asks about: the present ("now"), how things are, or neither."""
    period_only: bool
    """It asks about a period and nothing else ("What did we do yesterday?")."""
    names: tuple[str, ...] = ()
    """The names it gives, lower case, in order (search/absent.py: capitalised words, a
    Chinese question's lead person, titles in book-title marks); () when it is not one
    question (a statement, a pasted dialogue), whose words name no one it asks about."""

    @property
    def text(self) -> str:
        return self.request.query


def read_question(request: SearchRequest, settings: SearchSettings,
                  notes: list[str]) -> Question | None:
    """``request``'s question read once; None when nothing searchable is left."""
    bounded = bound_query(request.query)
    notes.extend(bounded.notes)
    # Numeric dates spelled out: "10.01.2024" is searched as "10 January 2024".
    request = replace(request, query=spell_dates(bounded.text, settings.date_order),
                      keyword_query=None if bounded.keyword_text is None
                      else spell_dates(bounded.keyword_text, settings.date_order))
    if not request.query.strip():
        return None
    request = _without_now(request)
    today = request.now.date()
    windows = tuple(question_dates(request.query, today, settings.date_order))
    anchored = split_anchor(request.query)
    # An anchor that is a day ("the day before yesterday") names the period asked about and
    # stays: the question without it must name the same periods.
    if anchored is not None and tuple(
            question_dates(anchored.asked, today, settings.date_order)) == windows:
        # "...before Berlin?": Berlin's lines would crowd out the answer.
        request = replace(request, query=anchored.asked, keyword_query=anchored.asked)
        anchor: str | None = anchored.anchor
    else:
        anchor = None
    names = tuple(question_names(request.query)) if asks_about(request.query) else ()
    return Question(request, anchor, tuple(keyword_terms(request.keywords)), windows,
                    Asked.of(request.query), period_only=bool(windows) and about_a_period(request.query),
                    names=names)


def _without_now(request: SearchRequest) -> SearchRequest:
    """The keyword side searches the question without its words asking for the present
    ("now", 现在): they say when, which the time stage reads from ``query``, not what, and
    match no note's words about the subject. Kept, they held "小周现在的领导是谁" under the
    keyword coverage gate, and it found nothing (the knowledge-update dev set: current value
    shown 90 -> 93.3 %). The vector side embeds the question whole: without those words
    MADial en2zh recall@6 fell 40.2 -> 38.8, and the gate passed either way."""
    if not asks_now(request.query):
        return request
    # A CJK word goes without a gap: "小周现在的领导" reads as "小周的领导".
    def plain(text: str) -> str:
        return " ".join(NOW.sub(lambda m: " " if m.group(0).isascii() else "", text).split())
    keywords = plain(request.keywords)
    return replace(request, keyword_query=keywords) if keywords else request


def ask(text: str, *, anchor: str | None = None, now: datetime | None = None) -> Question:
    """``text`` read as the pipeline reads a question, with the default settings: for a caller
    holding hits and a question's text alone (the time stage run on its own). ``anchor``: the
    later value it asks what came before, when the text does not say it ("...before judo?")."""
    request = SearchRequest(text, max_results=6, min_score=None, sources=("memory",),
                            citations=True, now=now or datetime.now(UTC))
    question = read_question(request, SearchSettings(), [])
    if question is None:
        raise ContentError("a question needs searchable text")
    return question if anchor is None else replace(question, anchor=anchor)
