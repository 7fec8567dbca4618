"""Pure ranking math: score mapping, fusion, temporal decay and MMR. No I/O here.

Every function is deterministic and small enough to test alone; ``search.py`` wires them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime

__all__ = [
    "Candidate",
    "bm25_to_score",
    "decay_multiplier",
    "fuse",
    "jaccard",
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
    fused: float = 0.0
    decay: float = 1.0
    mmr_penalty: float = 0.0

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


def _merge(vector_hits: Sequence[tuple[int, float]],
           text_hits: Sequence[tuple[int, float]]) -> dict[int, Candidate]:
    merged: dict[int, Candidate] = {}
    for rank, (key, score) in enumerate(vector_hits, 1):
        merged[key] = Candidate(key, vector_score=score, vector_rank=rank)
    for rank, (key, bm25) in enumerate(text_hits, 1):
        prev = merged.get(key, Candidate(key))
        merged[key] = replace(prev, text_score=bm25_to_score(bm25), text_rank=rank)
    return merged


def _weighted(c: Candidate, vw: float, tw: float) -> float:
    return vw * (c.vector_score or 0.0) + tw * (c.text_score or 0.0)


def _rrf(c: Candidate, vw: float, tw: float, k: int) -> float:
    # Normalised so a chunk ranked first by both retrievers scores exactly 1.0, which keeps
    # RRF compatible with a min_score threshold in [0, 1].
    raw = (vw / (k + c.vector_rank) if c.vector_rank else 0.0) + (
        tw / (k + c.text_rank) if c.text_rank else 0.0)
    return raw / ((vw + tw) / (k + 1))


def _minmax(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if hi - lo < 1e-12:
        return {k: 1.0 for k in values}
    return {k: (v - lo) / (hi - lo) for k, v in values.items()}


def _calibrated(merged: dict[int, Candidate], vw: float, tw: float) -> dict[int, float]:
    vec = _minmax({k: c.vector_score for k, c in merged.items() if c.vector_score is not None})
    txt = _minmax({k: c.text_score for k, c in merged.items() if c.text_score is not None})
    return {k: vw * vec.get(k, 0.0) + tw * txt.get(k, 0.0) for k in merged}


def fuse(vector_hits: Sequence[tuple[int, float]], text_hits: Sequence[tuple[int, float]], *,
         mode: str, vector_weight: float, text_weight: float, rrf_k: int = 60) -> list[Candidate]:
    """Union both candidate lists by chunk and score them; best first.

    ``vector_hits`` are (key, cosine) best first; ``text_hits`` are (key, bm25 rank) best first.
    With only one side present, that side's weight becomes 1 so scores stay comparable to
    ``min_score`` (keyword-only and vector-only modes).
    """
    merged = _merge(vector_hits, text_hits)
    vw, tw = vector_weight, text_weight
    if not vector_hits:
        vw, tw = 0.0, 1.0
    elif not text_hits:
        vw, tw = 1.0, 0.0
    if mode == "weighted":
        scores = {k: _weighted(c, vw, tw) for k, c in merged.items()}
    elif mode == "rrf":
        scores = {k: _rrf(c, vw, tw, rrf_k) for k, c in merged.items()}
    else:
        scores = _calibrated(merged, vw, tw)
    out = [replace(c, fused=scores[k]) for k, c in merged.items()]
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
    remaining, chosen = list(items), []
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
