"""Frozen value types passed between the engine's steps."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

__all__ = [
    "Chunk",
    "HitExplanation",
    "MemoryFile",
    "SearchHit",
    "SearchResponse",
    "SkippedFile",
    "SyncReport",
]

Source = Literal["memory", "sessions"]


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """A discovered file. ``path`` is workspace-relative with ``/`` separators."""

    path: str
    abs_path: str
    source: Source
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a file with 1-based inclusive line numbers (JSONL lines for transcripts)."""

    path: str
    source: Source
    start_line: int
    end_line: int
    text: str
    hash: str


@dataclass(frozen=True, slots=True)
class HitExplanation:
    """Why a hit has its score: every factor that went into it."""

    vector_score: float | None
    text_score: float | None
    vector_rank: int | None
    text_rank: int | None
    fused: float
    #: FTS5's bm25 of the keyword side's candidates; calibrated fusion also looks it up for
    #: chunks only the vector side found (absolute fusion does not use it: None there).
    bm25: float | None = None
    decay: float = 1.0
    mmr_penalty: float = 0.0
    rescued: bool = False
    #: absolute fusion: this chunk's BM25 over the best BM25 of the query's keyword candidates
    #: (1.0 for the best keyword match; None for chunks only the vector side found).
    keyword_strength: float | None = None
    #: the whole chunk's (start, end) lines when the citation names only some of them
    #: (``search.citation_lines``); None when the hit cites its whole chunk.
    chunk_lines: tuple[int, int] | None = None
    #: a daily file of a period the question names (``search.date_weight`` was added)
    date_match: bool = False
    #: questions of several lines: the chunk's best cosine with one line of the question
    #: (``vector_score`` blends it with the whole question's, ``search.query_lines_weight``)
    line_cosine: float | None = None
    #: chunks of the same passage folded into this hit (their cited lines overlapped it)
    folded: tuple[str, ...] = ()
    #: ``text_score`` is the coverage of the question's words translated into the other
    #: language (``search.translate_queries``, times ``search.translation_weight``), which
    #: covered this chunk more than the question's own words
    translated: bool = False
    #: a line of the subject the question names that no hit of the search cited, made a hit
    #: of its own because it answers (``search.newer_first``: a newer value, or the one
    #: before the value a question names); ``fused`` is the score it was given
    surfaced: bool = False
    #: the cited line holding most of the question's words (the first of equals); a snippet
    #: too long for ``search.snippet_chars`` shows the lines around it. None when no line
    #: holds one (the chunk is cited whole) or the chunk is short.
    best_line: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "vector_score": self.vector_score,
            "text_score": self.text_score,
            "vector_rank": self.vector_rank,
            "text_rank": self.text_rank,
            "bm25": self.bm25,
            "fused": self.fused,
            "decay": self.decay,
            "mmr_penalty": self.mmr_penalty,
            "rescued": self.rescued,
            "keyword_strength": self.keyword_strength,
            "chunk_lines": None if self.chunk_lines is None else list(self.chunk_lines),
            "date_match": self.date_match,
            "line_cosine": self.line_cosine,
            "folded": list(self.folded),
            "translated": self.translated,
            "surfaced": self.surfaced,
            "best_line": self.best_line,
        }


@dataclass(frozen=True, slots=True)
class SearchHit:
    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    source: Source
    citation: str | None
    chunk_id: str
    explanation: HitExplanation
    #: the day the hit's fact was learned (a daily log's date, or the "(as of ...)" stamp on
    #: its lines), ISO; None when the notes do not say
    as_of: str | None = None
    #: the citation of a newer hit about the same subject that says something else
    superseded_by: str | None = None

    def as_dict(self, *, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 6),
            "snippet": self.snippet,
            "source": self.source,
        }
        if self.citation is not None:
            out["citation"] = self.citation
        if self.as_of is not None:
            out["as_of"] = self.as_of
        if self.superseded_by is not None:
            out["superseded_by"] = self.superseded_by
        if explain:
            out["explain"] = self.explanation.as_dict()
        return out


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """What ``memory_search`` answers; ``disabled`` responses carry ``error`` and ``action``."""

    results: tuple[SearchHit, ...]
    provider: str
    model: str | None
    mode: Literal["hybrid", "keyword-only", "vector-only"]
    citations: Literal["auto", "on", "off"]
    vector_path: str
    fallback: dict[str, str] | None = None
    stale: bool = False
    disabled: bool = False
    error: str | None = None
    warning: str | None = None
    action: str | None = None
    notes: tuple[str, ...] = ()
    low_confidence_results: tuple[SearchHit, ...] = ()
    """Set only when ``results`` is empty because nothing passed the relevance gate: the
    candidates that still scored ``search.low_confidence_gate``. Not evidence of anything;
    show them, if at all, as "nothing relevant, but possibly related"."""

    def as_dict(self, *, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "results": [h.as_dict(explain=explain) for h in self.results],
            "provider": self.provider,
            "model": self.model,
            "mode": self.mode,
            "citations": self.citations,
            "vector_path": self.vector_path,
        }
        if self.fallback:
            out["fallback"] = dict(self.fallback)
        if self.stale:
            out["stale"] = True
        if self.disabled:
            out.update(disabled=True, unavailable=True)
        for key in ("error", "warning", "action"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.notes:
            out["notes"] = list(self.notes)
        if self.low_confidence_results:
            out["low_confidence_results"] = [h.as_dict(explain=explain)
                                             for h in self.low_confidence_results]
        return out


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync did."""

    scanned: int = 0
    unchanged: int = 0
    indexed: int = 0
    deleted: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0
    cache_hits: int = 0
    full_rebuild: bool = False
    rebuild_reason: str | None = None
    duration_s: float = 0.0
    skipped: tuple[SkippedFile, ...] = field(default_factory=tuple)
    warnings: tuple[str, ...] = field(default_factory=tuple)
    #: Transcripts that grew but stay below the delta thresholds (left for a later sync).
    sessions_deferred: int = 0
    #: Damaged JSONL lines skipped in the transcripts read by this sync.
    malformed_lines: int = 0
    #: Chunks indexed without vectors because the embedding provider failed (backfilled later).
    vectors_missing: int = 0
    #: Chunks whose missing vectors this sync added.
    vectors_backfilled: int = 0
    #: Vectors the provider returned invalid (NaN, infinite, overflowing, zero): not stored.
    vectors_rejected: int = 0
    #: Chunks indexed without vectors on request (``defer_vectors``): later syncs embed them.
    vectors_deferred: int = 0
    #: Chunks of the index still without a vector after this sync.
    vectors_pending: int = 0

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out.update(duration_s=round(self.duration_s, 4), warnings=list(self.warnings),
                   skipped=[{"path": s.path, "reason": s.reason} for s in self.skipped])
        return out
