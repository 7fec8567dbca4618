"""Pure ranking math: score mapping, fusion, temporal decay and MMR. No I/O here.

Every function is deterministic and small enough to test alone; ``search.py`` wires them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

__all__ = [
    "Candidate",
    "bm25_to_score",
    "decay_multiplier",
    "evidence",
    "fuse",
    "jaccard",
    "keyword_strengths",
    "mmr_order",
    "mmr_tokens",
]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One chunk seen by either retriever, with everything that produced its score."""

    key: int
    vector_score: float | None = None
    text_score: float | None = None
    vector_rank: int | None = None
    text_rank: int | None = None
    bm25: float | None = None
    fused: float = 0.0
    decay: float = 1.0
    mmr_penalty: float = 0.0
    keyword_strength: float | None = None
    date_match: bool = False
    line_cosine: float | None = None
    translated: bool = False

    @property
    def score(self) -> float:
        return self.fused * self.decay


def bm25_to_score(rank: float) -> float:
    """Map FTS5's bm25() (negative, lower is better) into [0, 1): ``|r| / (1 + |r|)``."""
    if not math.isfinite(rank):
        return 0.001
    if rank < 0:
        r = -rank
        return r / (1 + r)
    return 1 / (1 + rank)


def _merge(vector_hits: Sequence[tuple[int, float]], text_hits: Sequence[tuple[int, float]],
           extra_vector: Mapping[int, float], extra_text: Mapping[int, float],
           extra_keys: Sequence[int] = ()) -> dict[int, Candidate]:
    # Fields are gathered in plain dicts and each Candidate is built once: dataclasses.replace
    # per step was a measurable share of a query's time at 100k chunks.
    fields: dict[int, dict[str, Any]] = {}
    for rank, (key, score) in enumerate(vector_hits, 1):
        fields[key] = {"vector_score": score, "vector_rank": rank}
    for rank, (key, bm25) in enumerate(text_hits, 1):
        fields.setdefault(key, {}).update(bm25=bm25, text_rank=rank)
    for key in extra_keys:  # candidates of neither side (a dated file's chunks)
        fields.setdefault(key, {})
    # Scores looked up for candidates that only one retriever returned (calibrated mode).
    for key, f in fields.items():
        if f.get("vector_score") is None and key in extra_vector:
            f["vector_score"] = extra_vector[key]
        if f.get("bm25") is None and key in extra_text:
            f["bm25"] = extra_text[key]
    return {key: Candidate(key, **f) for key, f in fields.items()}


def _weighted(c: Candidate, vw: float, tw: float) -> tuple[float, float | None]:
    text = None if c.bm25 is None else bm25_to_score(c.bm25)
    return vw * (c.vector_score or 0.0) + tw * (text or 0.0), text


def _rrf(c: Candidate, vw: float, tw: float, k: int) -> tuple[float, float | None]:
    # Normalised so a chunk ranked first by both retrievers scores exactly 1.0, which keeps
    # RRF compatible with a min_score threshold in [0, 1].
    text = 1 / (k + c.text_rank) if c.text_rank else 0.0
    raw = (vw / (k + c.vector_rank) if c.vector_rank else 0.0) + tw * text
    return raw / ((vw + tw) / (k + 1)), None if c.text_rank is None else text * (k + 1)


def _calibrated(merged: dict[int, Candidate], vw: float, tw: float,
                ) -> dict[int, tuple[float, float | None]]:
    """Per-query normalisation (measured on LoCoMo-dev, see docs/retrieval.md).

    Text: ``t = |bm25| / max |bm25|`` over the candidates, so the best keyword hit gets 1.
    Vector: min-max of the cosine over the candidates. When some chunk has keyword evidence,
    a chunk without any scores at most ``vector_weight``: raw cosines of a small model are
    not comparable across queries, BM25 evidence is.
    """
    strengths = {k: -c.bm25 for k, c in merged.items() if c.bm25 is not None and c.bm25 < 0}
    top = max(strengths.values(), default=0.0)
    cos = {k: c.vector_score for k, c in merged.items() if c.vector_score is not None}
    lo, hi = min(cos.values(), default=0.0), max(cos.values(), default=0.0)
    out: dict[int, tuple[float, float | None]] = {}
    for key in merged:
        t = strengths.get(key, 0.0) / top if top > 0 else 0.0
        v = 0.0 if key not in cos else 1.0 if hi - lo < 1e-12 else (cos[key] - lo) / (hi - lo)
        out[key] = (vw * v + tw * t, t if key in strengths else None)
    return out


def keyword_strengths(merged: Mapping[int, Candidate]) -> dict[int, float]:
    """Each keyword candidate's BM25 over the best one's: 1.0 for the query's best match."""
    strengths = {k: -c.bm25 for k, c in merged.items() if c.bm25 is not None and c.bm25 < 0}
    top = max(strengths.values(), default=0.0)
    return {k: v / top for k, v in strengths.items()} if top > 0 else {}


def _absolute(merged: dict[int, Candidate], vw: float, tw: float,
              coverage: Mapping[int, float]) -> dict[int, tuple[float, float | None]]:
    """Scores on a fixed scale, comparable across queries and workspaces.

    ``vw * cosine + tw * coverage``: the raw cosine of a multilingual sentence encoder
    already separates related from unrelated text in absolute terms (it is what the
    relevance gate reads), and keyword coverage (``coverage.py``) is an absolute share of the
    query's information. Nothing is rescaled per query, so the best candidate of an
    off-topic question scores low instead of 1.0, and a strong vector match can outrank a
    chunk that only shares common words with the question.
    """
    out: dict[int, tuple[float, float | None]] = {}
    for key, c in merged.items():
        cov = coverage.get(key, 0.0)
        out[key] = (vw * max(0.0, c.vector_score or 0.0) + tw * cov,
                    cov if key in coverage else None)
    return out


def evidence(c: Candidate, strength_weight: float, date_weight: float = 0.0) -> float:
    """A candidate's absolute score without its keyword-strength and date bonuses (what the
    relevance gate reads)."""
    bonus = strength_weight * (c.keyword_strength or 0.0) + (date_weight if c.date_match else 0.0)
    return (c.fused - bonus) * c.decay


def fuse(vector_hits: Sequence[tuple[int, float]], text_hits: Sequence[tuple[int, float]], *,
         mode: str, vector_weight: float, text_weight: float, rrf_k: int = 60,
         extra_vector: Mapping[int, float] | None = None,
         extra_text: Mapping[int, float] | None = None,
         coverage: Mapping[int, float] | None = None,
         strength_weight: float = 0.0, extra_keys: Sequence[int] = ()) -> list[Candidate]:
    """Union both candidate lists by chunk and score them; best first.

    ``vector_hits`` are (key, cosine) best first; ``text_hits`` are (key, bm25 rank) best
    first. ``extra_*`` hold the other side's score for candidates only one list returned.
    Without a vector side (keyword-only mode) the text side gets all the weight.
    ``coverage`` (mode ``absolute``): keyword coverage per candidate. ``strength_weight``
    (mode ``absolute``): added times each keyword candidate's :func:`keyword_strengths`.
    Coverage counts which of the question's words a chunk holds, once each; a long question
    (a whole dialogue) spreads its mass over many words, and BM25's term frequencies and
    length normalisation then tell its real match from chunks sharing a few of them.
    ``extra_keys``: candidates neither list returned, scored from ``extra_vector``.
    """
    merged = _merge(vector_hits, text_hits, extra_vector or {}, extra_text or {}, extra_keys)
    vw, tw = vector_weight, text_weight
    if mode == "absolute" and vector_hits:
        scores = _absolute(merged, vw, tw, coverage or {})
        strengths = keyword_strengths(merged) if strength_weight > 0 else {}
        merged = {k: replace(c, keyword_strength=strengths.get(k)) for k, c in merged.items()}
        scores = {k: (s + strength_weight * strengths.get(k, 0.0), t)
                  for k, (s, t) in scores.items()}
        return _ordered(merged, scores)
    if mode == "absolute":
        mode = "calibrated"  # no vectors: BM25 ranks, calibrated per query as before
    if not vector_hits:
        vw, tw = 0.0, 1.0
    elif not text_hits:
        # No keyword evidence at all (a pure paraphrase): the vector side alone decides, or
        # such queries could never pass the threshold.
        vw, tw = 1.0, 0.0
    if mode == "weighted":
        scores = {k: _weighted(c, vw, tw) for k, c in merged.items()}
    elif mode == "rrf":
        scores = {k: _rrf(c, vw, tw, rrf_k) for k, c in merged.items()}
    else:
        scores = _calibrated(merged, vw, tw)
    return _ordered(merged, scores)


def _ordered(merged: dict[int, Candidate],
             scores: Mapping[int, tuple[float, float | None]]) -> list[Candidate]:
    out = [Candidate(k, c.vector_score, scores[k][1], c.vector_rank, c.text_rank, c.bm25,
                     scores[k][0], c.decay, c.mmr_penalty, c.keyword_strength, c.date_match,
                     c.line_cosine)
           for k, c in merged.items()]
    out.sort(key=lambda c: (-c.fused, c.key))
    return out


_DAY = 86_400.0


def decay_multiplier(file_date: date | None, now: datetime, half_life_days: float) -> float:
    """``exp(-ln2 / half_life * age_days)`` for dated files; 1.0 for evergreen ones."""
    if file_date is None or half_life_days <= 0:
        return 1.0
    midnight = datetime(file_date.year, file_date.month, file_date.day, tzinfo=now.tzinfo)
    age_days = max(0.0, (now - midnight).total_seconds() / _DAY)
    return math.exp(-math.log(2) / half_life_days * age_days)


_ASCII_TOKEN = re.compile(r"[a-z0-9_]+")
_CJK_RUN = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def mmr_tokens(text: str) -> frozenset[str]:
    """Tokens for MMR similarity: ASCII words plus CJK unigrams and bigrams."""
    lowered = text.lower()
    tokens = set(_ASCII_TOKEN.findall(lowered))
    for run in _CJK_RUN.findall(lowered):
        tokens.update(run)
        tokens.update(run[i:i + 2] for i in range(len(run) - 1))
    return frozenset(tokens)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def mmr_order(items: Sequence[Candidate], text_of: Callable[[int], str],
              lam: float) -> list[Candidate]:
    """Greedy MMR reordering; scores are kept, ``mmr_penalty`` records the diversity cost."""
    if len(items) < 2 or lam >= 1.0:
        return list(items)
    tokens = {c.key: mmr_tokens(text_of(c.key)) for c in items}
    lo, hi = min(c.score for c in items), max(c.score for c in items)
    def rel(c: Candidate) -> float:
        return 1.0 if hi - lo < 1e-12 else (c.score - lo) / (hi - lo)
    remaining, chosen = list(items), list[Candidate]()
    while remaining:
        best, best_val, best_pen = remaining[0], -math.inf, 0.0
        for c in remaining:
            sim = max((jaccard(tokens[c.key], tokens[s.key]) for s in chosen), default=0.0)
            val = lam * rel(c) - (1 - lam) * sim
            if val > best_val or (val == best_val and c.score > best.score):
                best, best_val, best_pen = c, val, (1 - lam) * sim
        remaining.remove(best)
        chosen.append(replace(best, mmr_penalty=best_pen))
    return chosen
