"""The relevance gates: which ranked candidates are hits.

A candidate is a hit when its evidence reaches ``min_score``, or when it holds every term of
the question (keyword evidence is never thrown away by a threshold). With absolute scores,
a question whose names or rare words memory never holds, or whose best candidate is neither
close in meaning nor in words, gets nothing, and the candidates that still reach
``low_confidence_gate`` are shown apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openclaw_memory.config import SearchSettings
from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.language.dates import DateWindow
from openclaw_memory.search.absent import absent_gate, absent_terms
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.hits import build_hits, focus_snippets
from openclaw_memory.search.question import Question
from openclaw_memory.search.ranking import Candidate, evidence
from openclaw_memory.search.request import Mode, SearchRequest
from openclaw_memory.store import ChunkRow
from openclaw_memory.types import SearchHit

__all__ = ["Gated", "Ranked", "exact_keyword_keys", "gate_candidates"]


@dataclass(frozen=True, slots=True)
class Ranked:
    """Fusion's output: candidates in rank order, their rows and evidence scores."""

    fused: list[Candidate]
    rows: Mapping[int, ChunkRow]
    scores: Mapping[int, float]
    mode: Mode
    absolute: bool
    windows: tuple[DateWindow, ...]
    min_score: float


@dataclass(frozen=True, slots=True)
class Gated:
    kept: list[Candidate]
    rescued: set[int]
    weak: tuple[SearchHit, ...]
    scores: Mapping[int, float]
    """The candidates' evidence as the gates left it (lowered when what the question names is
    absent from memory): what hits are scored with."""


def gate_candidates(store: SearchBackend, question: Question, settings: SearchSettings,
           ranked: Ranked, notes: list[str]) -> Gated:
    """The candidates that are hits: over min_score, or holding every query term; nothing
    when what the question names is absent from memory or the gate finds nothing relevant
    (then the low-confidence band, shown apart). Scores may be lowered here."""
    request = question.request
    fused, rows, absolute = ranked.fused, ranked.rows, ranked.absolute
    scores = dict(ranked.scores)
    min_score = ranked.min_score
    absent = absent_terms(store, request, question.names, settings) if fused else ()
    if absent and absolute:
        # What the question names, or its rare words, memory never holds: evidence that it is
        # about something else. Every score is lowered so that a candidate reaching the absent
        # gate reaches the relevance gate (and an explicit min_score sees lowered scores).
        factor = min(1.0, settings.relevance_gate / max(absent_gate(absent, settings), 1e-9))
        scores = {key: score * factor for key, score in scores.items()}
    # A question about a period and nothing else ("what did we do yesterday?") is answered by
    # that period's notes, however little their words or meaning say about the question.
    period_only = bool(ranked.windows) and question.period_only
    passing = [c for c in fused if scores[c.key] >= min_score or (period_only and c.date_match)]
    below = [c for c in fused if scores[c.key] < min_score and c.text_rank is not None]
    # Keyword evidence is never thrown away by the threshold: any chunk containing every query
    # term stays (OpenClaw complaint: 0.35 dropped exact hits), and so does the best keyword
    # hit, except where absolute scores decide relevance (an off-topic question's best
    # keyword hit shares a common word, nothing more).
    rescued = exact_keyword_keys(store, question.terms, [c.key for c in below])
    weak: tuple[SearchHit, ...] = ()
    if (absent and request.min_score is None
            and not (absolute and max(scores.values()) >= settings.relevance_gate)):
        # Everyone the question names (or a rare word of one naming nobody) is missing from
        # memory: what matched is most likely about something else. Shown apart, as low
        # confidence, like any question turned away.
        notes.append(f"nothing relevant: {', '.join(absent)} "
                     f"appear{'s' if len(absent) == 1 else ''} nowhere in memory")
        weak = _low_confidence(passing, scores, rows, request, settings) if absolute else ()
        passing, rescued = [], set()
    elif absolute:
        closed = _gate(fused, settings, period_only) if request.min_score is None else None
        if closed is not None:
            notes.append(closed)
            # A chunk holding every query term is still a hit; only without one is there
            # nothing relevant, and room for the low-confidence band.
            weak = () if rescued else _low_confidence(passing, scores, rows, request, settings)
            passing = []
    else:
        rescued |= {c.key for c in below if c.text_rank == 1}
    kept_keys = {c.key for c in passing} | rescued
    return Gated([c for c in fused if c.key in kept_keys], rescued, weak, scores)


def exact_keyword_keys(store: SearchBackend, terms: Sequence[str],
                       keys: Sequence[int]) -> set[int]:
    """Chunks among ``keys`` that contain every one of the question's search ``terms`` (as
    the keyword index tokenises them), matched among those chunks alone rather than by an
    AND query over the whole index."""
    if not terms or not keys:
        return set()
    try:
        found = store.terms_in(terms, keys)
    except IndexCorruptError:
        raise
    except StoreError:
        return set()
    return set.intersection(*(found[t] for t in terms)) & set(keys)


def _gate(fused: Sequence[Candidate], settings: SearchSettings, period_only: bool) -> str | None:
    """Why nothing is relevant (None when something is): too little evidence on either side.

    Off-topic questions still have nearest chunks; what they lack is a chunk close in meaning
    and words (the absolute score) or one that holds most of the question's rare words.
    Keyword strength and the date bonus are left out: an off-topic question has a best
    keyword match too, and may name a date. A question about a period and nothing else
    ("what did we do yesterday?") is answered by the notes of that period.
    """
    if period_only and any(c.date_match for c in fused):
        return None
    best = max((evidence(c, settings.strength_weight, settings.date_weight) for c in fused),
               default=0.0)
    best_cov = max((c.text_score for c in fused if c.text_score is not None), default=0.0)
    if best >= settings.relevance_gate or best_cov >= settings.keyword_gate:
        return None
    return (f"nothing relevant: best score {best:.2f} < {settings.relevance_gate:.2f} "
            f"and best keyword coverage {best_cov:.2f} < {settings.keyword_gate:.2f}")


def _low_confidence(passing: Sequence[Candidate], scores: Mapping[int, float],
                    rows: Mapping[int, ChunkRow], request: SearchRequest,
                    settings: SearchSettings) -> tuple[SearchHit, ...]:
    """The gated-away candidates, when the best of them still reaches ``low_confidence_gate``.

    A paraphrase or a question in another language can be about a note and still score under
    the gate, beside off-topic questions (an encoder limit, docs/retrieval.md). The
    gate's verdict stands; these are what a model may check, marked as such.
    """
    floor = settings.low_confidence_gate
    if floor >= settings.relevance_gate or max(scores.values(), default=0.0) < floor:
        return ()
    # As above the gate: the best candidate decides, then every candidate over min_score.
    return focus_snippets(build_hits(passing, scores, rows, request, settings, set()), rows, request,
                          settings.snippet_chars) if passing else ()
