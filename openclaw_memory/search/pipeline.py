"""The query pipeline, as stages over what the ones before produced: the question read once
(bounded, dates spelled out, the anchor of "before X" taken out), candidates from both sides,
fusion into one ranking (decay and MMR when on), the relevance gates (search/gates.py), the
time stage (search/recency.py) and presentation (search/hits.py: snippets, the budget).

Keyword and vector candidates are gathered independently (a failure of either side degrades
the mode, it never raises). Every hit carries a :class:`HitExplanation`, so an empty or
surprising result can be diagnosed from the response alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

import numpy as np

from openclaw_memory.config import SearchSettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.errors import EmbeddingError, IndexCorruptError, StoreError
from openclaw_memory.files.workspace import is_daily
from openclaw_memory.language.dates import (
    DateWindow,
    in_windows,
    mentions_windows,
)
from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.language.translation import QueryTranslation, present, translate_query
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.coverage import coverages
from openclaw_memory.search.gates import Gated, Ranked, gate_candidates
from openclaw_memory.search.hits import build_hits, focus_snippets
from openclaw_memory.search.keywords import candidate_query, keyword_candidates
from openclaw_memory.search.querylines import (
    best_line_cosines,
    blend,
    line_vectors,
    query_lines,
)
from openclaw_memory.search.question import Question, read_question
from openclaw_memory.search.ranking import Candidate, decay_multiplier, evidence, fuse, mmr_order
from openclaw_memory.search.recency import LOOKAHEAD, looks_wider, newer_first
from openclaw_memory.search.request import Mode, SearchRequest
from openclaw_memory.search.subject_reads import curated_reader, subject_reader
from openclaw_memory.store import ChunkRow
from openclaw_memory.types import SearchHit

__all__ = ["SearchOutcome", "SearchRequest", "run_search"]  # SearchRequest: search/request.py



@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: tuple[SearchHit, ...]
    mode: Mode
    notes: tuple[str, ...] = ()
    embedding_error: EmbeddingError | None = None
    best_score: float | None = None
    extra: dict[str, object] = field(default_factory=dict)
    # Hits the relevance gate turned away that still scored search.low_confidence_gate:
    # never in ``hits``; a caller shows them, if at all, as "nothing relevant, but maybe".
    low_confidence: tuple[SearchHit, ...] = ()


def _query_vector(provider: EmbeddingProvider, query: str) -> np.ndarray | None:
    vector = np.asarray(provider.embed_query(query), dtype=np.float32)
    if vector.size == 0 or not np.any(vector):
        return None  # a zero query vector carries no signal; cosine would be undefined
    return vector


def _apply_decay(items: list[Candidate], rows: dict[int, ChunkRow], request: SearchRequest,
                 half_life: float) -> list[Candidate]:
    out = []
    for c in items:
        row = rows[c.key]
        day = is_daily(row.path) if row.source == "memory" else None
        out.append(replace(c, decay=decay_multiplier(day, request.now, half_life)))
    return out


@dataclass
class _Candidates:
    vector_hits: list[tuple[int, float]] = field(default_factory=list)
    text_hits: list[tuple[int, float]] = field(default_factory=list)
    query_vector: np.ndarray | None = None
    error: EmbeddingError | None = None
    dated: dict[int, float] = field(default_factory=dict)
    """Chunks of the daily files of the periods the question names, with their cosines."""
    lines: Future[np.ndarray] | None = None
    """The vectors of a dialogue's lines, embedded beside the question (a costly provider)."""

    def keys(self) -> list[int]:
        return sorted({k for k, _ in self.vector_hits} | {k for k, _ in self.text_hits}
                      | set(self.dated))


#: A question naming a period whose daily files hold more chunks than this (a whole year of
#: a busy log) gets the date bonus among its candidates but adds no candidates of its own.
_DATED_MAX = 5000


def _dated_candidates(store: SearchBackend, found: _Candidates, request: SearchRequest,
                      windows: Sequence[DateWindow], limit: int) -> dict[int, float]:
    """The ``limit`` chunks closest in meaning among the daily files of ``windows``: a note
    of the day asked about is a candidate even when it shares no word with the question."""
    if not windows or found.query_vector is None:
        return {}
    try:
        listed = store.daily_paths(windows, request.path_prefix)
        if len(listed) > _DATED_MAX:  # each daily file holds a chunk at least
            return {}
        paths = [p for p in listed if in_windows(p, windows)
                 and (request.path_filter is None or request.path_filter(p))]
        keys = store.chunk_keys(paths, _DATED_MAX + 1) if paths else []
        if not keys or len(keys) > _DATED_MAX:
            return {}
        cosines = store.cosines(found.query_vector, keys)
    except IndexCorruptError:
        raise
    except StoreError:
        return {}
    return dict(sorted(cosines.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])


def _alongside(store: SearchBackend, work: Callable[[SearchBackend], list[tuple[int, float]]],
               ) -> Future[list[tuple[int, float]]] | None:
    """``work`` started where the backend can run it beside this thread (PostgreSQL: a
    second connection in the same snapshot walks the vector index while this thread runs the
    keyword side's statements); None where it cannot, or could not this time (the second
    connection failed to open): then the caller runs it itself."""
    alongside = getattr(store, "alongside", None)
    if alongside is None:
        return None
    try:
        later: Future[list[tuple[int, float]]] | None = alongside(work)
    except StoreError:
        return None
    return later


def _gather(store: SearchBackend, provider: EmbeddingProvider | None, request: SearchRequest,
            settings: SearchSettings, notes: list[str]) -> _Candidates:
    limit = min(200, max(1, request.max_results * settings.candidate_multiplier))
    found = _Candidates()
    if provider is not None and settings.query_lines_weight > 0 and settings.fusion == "absolute":
        found.lines = line_vectors(provider, query_lines(request.query))
    if provider is not None:
        try:
            found.query_vector = _query_vector(provider, request.query)
        except EmbeddingError as exc:
            found.error = exc
            notes.append(f"vector search unavailable: {exc}")
    vector = found.query_vector

    def vector_side(backend: SearchBackend) -> list[tuple[int, float]]:
        assert vector is not None
        return backend.vector_search(vector, limit, request.sources,
                                     path_prefix=request.path_prefix)
    later = _alongside(store, vector_side) if vector is not None else None
    # Renderings only where absolute scores will weigh them: without a query vector the
    # keyword side answers alone, by BM25, and searches the question as asked.
    renderings = request.translation.text if request.translation and vector is not None else ""
    if provider is None or settings.hybrid or found.error is not None:
        found.text_hits = keyword_candidates(store, request.keywords, limit,
                                              request.sources, notes,
                                              settings.query_timeout_seconds,
                                              path_prefix=request.path_prefix,
                                              renderings=renderings)
    if vector is not None:
        try:
            found.vector_hits = later.result() if later is not None else vector_side(store)
        except IndexCorruptError:
            raise
        except StoreError as exc:  # answer from the keyword side rather than not at all
            notes.append(f"{exc}; answering keyword-only")
            found.query_vector = None
            if not found.text_hits or request.translation is not None:
                found.text_hits = keyword_candidates(store, request.keywords, limit,
                                                      request.sources, notes,
                                                      path_prefix=request.path_prefix)
    return found


def _lookups(store: SearchBackend, found: _Candidates, query: str, *,
             bm25: bool) -> tuple[dict[int, float], dict[int, float]]:
    """The other side's score for one-sided candidates, so fusion sees both for all.

    ``bm25``: look up the BM25 of vector-only candidates too. Only calibrated fusion reads
    it; absolute fusion scores words by coverage, and FTS5's bm25() walks every term's
    whole doclist to count it (15 ms of a search at 30k chunks), so it is skipped there.
    """
    vector_keys = {k for k, _ in found.vector_hits}
    text_keys = {k for k, _ in found.text_hits}
    extra_vector: dict[int, float] = {k: v for k, v in found.dated.items() if k not in vector_keys}
    extra_text: dict[int, float] = {}
    if found.query_vector is not None:
        extra_vector |= store.cosines(found.query_vector,
                                      sorted(text_keys - vector_keys - set(found.dated)))
    # The candidate query's own terms (common words left out), over the whole index.
    plan = candidate_query(store, keyword_terms(query)) if found.vector_hits and bm25 else None
    if plan is not None and plan.expression is not None:
        try:
            extra_text = store.keyword_scores(plan.expression, sorted(vector_keys - text_keys))
        except IndexCorruptError:
            raise
        except StoreError:
            extra_text = {}
    return extra_vector, extra_text


def _coverage(store: SearchBackend, query: str, translation: QueryTranslation | None,
              found: _Candidates, settings: SearchSettings) -> tuple[Mapping[int, float], set[int]]:
    """Each candidate's keyword coverage, and the candidates whose coverage is their
    translated words' (times ``translation_weight``) because it exceeds their own words'."""
    try:
        own, concepts = coverages(store, query, translation, found.keys())
    except IndexCorruptError:
        raise
    except StoreError:
        return {}, set()  # vectors alone then; the keyword side already said why in its note
    weighted = {k: settings.translation_weight * v for k, v in concepts.items()}
    better = {k for k, v in weighted.items() if v > own.get(k, 0.0)}
    return {**own, **{k: weighted[k] for k in better}}, better


def _translation(store: SearchBackend, query: str, provider: EmbeddingProvider | None,
                 settings: SearchSettings) -> QueryTranslation | None:
    """The question's words in the other language, where absolute scores weigh them.

    Only absolute fusion counts a translated word at ``translation_weight`` of the question's
    own; BM25 (keyword-only search, the other fusions) would rank a chunk holding a rendering
    like one holding the word asked for, so there the question is searched as asked.
    """
    if (not settings.translate_queries or settings.translation_weight <= 0 or provider is None
            or settings.fusion != "absolute"):
        return None
    translation = translate_query(query)
    if translation is None:
        return None
    try:
        return present(translation, _counted_until_found(store, translation.terms))
    except IndexCorruptError:
        raise
    except StoreError:
        return None  # the keyword side will say what is wrong


#: How many renderings one count of chunks asks about: :func:`_translation` needs one that
#: a chunk holds, not how many hold each (an English question has a hundred Chinese
#: renderings; counting all was most of its translation's cost on a new question).
_RENDERINGS_AT_ONCE = 16


def _counted_until_found(store: SearchBackend, terms: Sequence[str]) -> dict[str, int]:
    """Chunks per term for ``terms`` in batches, until a batch holds a term some chunk has."""
    counted: dict[str, int] = {}
    for start in range(0, len(terms), _RENDERINGS_AT_ONCE):
        _, containing = store.term_statistics(terms[start:start + _RENDERINGS_AT_ONCE])
        counted |= containing
        if any(containing.values()):
            break
    return counted


def _line_cosines(store: SearchBackend, provider: EmbeddingProvider | None,
                  request: SearchRequest, found: _Candidates, settings: SearchSettings,
                  notes: list[str]) -> dict[int, float]:
    """Each candidate's best cosine with one line of a question of several lines (a
    dialogue): search/querylines.py. Empty for one-line questions; on failure the whole
    question's cosines stand alone."""
    parts = query_lines(request.query) if settings.query_lines_weight > 0 else []
    if not parts or provider is None or found.query_vector is None:
        return {}
    try:
        return best_line_cosines(store, provider, parts, found.keys(), found.lines)
    except IndexCorruptError:
        raise
    except (EmbeddingError, StoreError) as exc:
        notes.append(f"comparing the question's lines one by one failed: {exc}")
        return {}


#: The least room worth a cut-short snippet; below it the remaining hits are left out.
_MIN_SNIPPET = 200


def within_budget(hits: Sequence[SearchHit], budget: int, notes: list[str],
                  ) -> tuple[SearchHit, ...]:
    """The hits whose snippets fit ``budget`` characters together, in rank order: a model is
    never handed more than the budget, however many hits were asked for."""
    if budget <= 0 or sum(len(h.snippet) for h in hits) <= budget:
        return tuple(hits)
    kept: list[SearchHit] = []
    used = cut = 0
    for hit in hits:
        room = budget - used
        if len(hit.snippet) > room:
            if room < _MIN_SNIPPET and kept:
                break
            # Its first part: the citation still names every line, for memory_get to read.
            hit = replace(hit, snippet=hit.snippet[:max(1, room - 1)].rstrip() + "\u2026")
            cut += 1
        kept.append(hit)
        used += len(hit.snippet)
    notes.append(f"the hits' text is kept within search.max_injected_chars ({budget} "
                 f"characters): {cut} snippet(s) cut short, {len(hits) - len(kept)} hit(s) "
                 "left out")
    return tuple(kept)


def _mode(provider: EmbeddingProvider | None, settings: SearchSettings,
          error: EmbeddingError | None) -> Mode:
    if provider is None or error is not None:
        return "keyword-only"
    return "hybrid" if settings.hybrid else "vector-only"


def run_search(store: SearchBackend, provider: EmbeddingProvider | None, request: SearchRequest,
               settings: SearchSettings) -> SearchOutcome:
    """Answer one query. Never raises for bad query text; store errors surface as notes.

    Stages, each over what the ones before produced: the question read once, candidates from
    both sides, fusion into one ranking, the relevance gates, the time stage (which of a
    subject's facts is newer), and presentation (snippets within the budget)."""
    notes: list[str] = []
    question = read_question(request, settings, notes)
    if question is None:
        return SearchOutcome((), _mode(provider, settings, None), (*notes, "empty query"))
    request = question.request
    translation = _translation(store, request.keywords, provider, settings)
    if translation is not None:
        request = replace(request, translation=translation)
        question = replace(question, request=request)
    found = _gather(store, provider, request, settings, notes)
    ranked = _fused(store, provider, question, settings, found, translation, notes)
    gated = gate_candidates(store, question, settings, ranked, notes)
    hits = build_hits(gated.kept, gated.scores, ranked.rows, request, settings, gated.rescued)
    hits = _time_stage(store, provider, question, settings, ranked, gated, hits)
    budget = (settings.max_injected_chars if request.max_injected_chars is None
              else request.max_injected_chars)
    hits = within_budget(focus_snippets(hits, ranked.rows, request, settings.snippet_chars),
                         budget, notes)
    fused = ranked.fused
    best = gated.scores[fused[0].key] if fused else None
    if not hits and not any(n.startswith("nothing relevant") for n in notes):
        notes.append(
            "nothing relevant: no chunk scored at least min_score "
            f"{ranked.min_score:.2f}" + (f" (best {best:.3f})" if best is not None else ""))
    if gated.weak:
        notes.append(f"low confidence: the best score reached low_confidence_gate "
                     f"{settings.low_confidence_gate:.2f}; {len(gated.weak)} hit(s) shown apart")
    return SearchOutcome(hits, ranked.mode, tuple(notes), found.error, best,
                         low_confidence=gated.weak)


def _fused(store: SearchBackend, provider: EmbeddingProvider | None, question: Question,
           settings: SearchSettings, found: _Candidates,
           translation: QueryTranslation | None, notes: list[str]) -> Ranked:
    request = question.request
    mode = _mode(provider, settings, found.error)
    absolute = settings.fusion == "absolute" and bool(found.vector_hits)
    windows = question.windows if absolute and settings.date_weight > 0 else ()
    found.dated = _dated_candidates(store, found, request, windows,
                                    min(200, request.max_results * settings.candidate_multiplier))
    extra_vector, extra_text = ({}, {}) if settings.fusion not in ("calibrated", "absolute") else (
        _lookups(store, found, request.keywords, bm25=settings.fusion == "calibrated"))
    coverage, translated = (_coverage(store, request.keywords, translation, found, settings)
                            if absolute else ({}, set()))
    lines = _line_cosines(store, provider, request, found, settings, notes) if absolute else {}
    if lines:
        found.vector_hits = list(blend(dict(found.vector_hits), lines,
                                       settings.query_lines_weight).items())
        extra_vector = blend(extra_vector, lines, settings.query_lines_weight)
    vw, tw = settings.weights
    fused = fuse(found.vector_hits, found.text_hits, mode=settings.fusion, vector_weight=vw,
                 text_weight=tw, rrf_k=settings.rrf_k, extra_vector=extra_vector,
                 extra_text=extra_text, coverage=coverage,
                 strength_weight=settings.strength_weight, extra_keys=sorted(found.dated))
    rows = store.chunks([c.key for c in fused])
    fused = [c for c in fused if c.key in rows]  # rows deleted by a concurrent sync
    if windows:  # a daily file of the period asked about, or a note that names a day of it
        fused = [replace(c, fused=c.fused + settings.date_weight, date_match=True)
                 if in_windows(rows[c.key].path, windows)
                 or mentions_windows(rows[c.key].text, windows, settings.date_order) else c
                 for c in fused]
    if lines:
        fused = [replace(c, line_cosine=lines.get(c.key)) for c in fused]
    if translated:
        fused = [replace(c, translated=True) if c.key in translated else c for c in fused]
    if request.path_filter is not None:
        fused = [c for c in fused if request.path_filter(rows[c.key].path)]
    if settings.temporal_decay:
        fused = _apply_decay(fused, rows, request, settings.half_life_days)
    # Ties are broken by place (path, line), not by rowid: an index updated incrementally
    # numbers its rows differently from a fresh build, and must rank the same.
    fused.sort(key=lambda c: (-c.score, rows[c.key].path, rows[c.key].start_line))
    if settings.mmr:
        fused = mmr_order(fused, lambda k: rows[k].text, settings.mmr_lambda)
    min_score = settings.default_min_score(mode) if request.min_score is None else request.min_score
    # A hit's score is its evidence: the bonuses that order candidates (keyword strength, a
    # date the question names) say how it compares with the others, not how relevant it is.
    scores = {c.key: evidence(c, settings.strength_weight, settings.date_weight) for c in fused}
    return Ranked(fused, rows, scores, mode, absolute, windows, min_score)


def _time_stage(store: SearchBackend, provider: EmbeddingProvider | None,
                question: Question, settings: SearchSettings, ranked: Ranked,
                gated: Gated, hits: tuple[SearchHit, ...]) -> tuple[SearchHit, ...]:
    """Every hit dated; with ``search.newer_first``, the newer of a subject's facts first."""
    request = question.request
    embed = None if provider is None or ranked.mode != "hybrid" else provider.embed_for_search
    under: set[str] = set()  # chunks from under the relevance gate
    if settings.newer_first and embed is not None and looks_wider(question, hits):
        # A question about how things are looks further, so that a newer answer just past
        # the first k is found; what newer_first does not move up is cut back to k. The
        # first k stay as built: further chunks would fold into their passages. Past them,
        # candidates under the relevance gate too (when the gate let any hit through): a
        # change is often worded unlike the question ("Cancelled the gym membership, climbing
        # instead" for "Where does she work out now?"), and shows only if it answers.
        kept = {c.key for c in gated.kept}
        below = [c for c in ranked.fused if c.key not in kept] if hits else []
        under = {ranked.rows[c.key].id for c in below}
        further = build_hits([*gated.kept, *below], {**ranked.scores, **gated.scores},
                             ranked.rows, replace(request, max_results=request.max_results
                                                  * LOOKAHEAD), settings, gated.rescued)
        hits = (*hits, *further[len(hits):])
    ordered = newer_first(hits, question, embed, reorder=settings.newer_first,
                          curated_text=curated_reader(store, hits),
                          subject_text=subject_reader(store, request))
    return _moved_or_passed(ordered, under)[:request.max_results]


def _moved_or_passed(hits: tuple[SearchHit, ...], under: set[str]) -> tuple[SearchHit, ...]:
    """``hits`` without those led by a chunk from under the relevance gate (``under``: chunk
    ids) that the time stage left below every hit that passed it: such a hit shows only as
    an answer moved up, never to fill the k places the gate left empty (its low-confidence
    band is shown apart)."""
    if not under:
        return hits
    last = max((i for i, hit in enumerate(hits) if hit.chunk_id not in under), default=-1)
    return tuple(hit for i, hit in enumerate(hits) if hit.chunk_id not in under or i < last)
