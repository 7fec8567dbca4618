"""The pure ranking math: BM25 mapping, fusion modes, decay and MMR."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime

import pytest

from openclaw_memory.search.ranking import (
    Candidate,
    bm25_to_score,
    decay_multiplier,
    fuse,
    jaccard,
    mmr_order,
    mmr_tokens,
)


def test_bm25_rank_maps_into_unit_interval_and_better_ranks_score_higher() -> None:
    assert bm25_to_score(-3.0) == pytest.approx(0.75)
    assert bm25_to_score(-9.0) > bm25_to_score(-1.0)
    assert bm25_to_score(0.0) == 1.0
    assert bm25_to_score(float("nan")) == pytest.approx(0.001)


def test_weighted_fusion_is_openclaws_raw_sum() -> None:
    out = fuse([(1, 0.8), (2, 0.5)], [(2, -3.0)], mode="weighted", vector_weight=0.7,
               text_weight=0.3)
    scores = {c.key: c.fused for c in out}
    assert scores[1] == pytest.approx(0.7 * 0.8)
    assert scores[2] == pytest.approx(0.7 * 0.5 + 0.3 * 0.75)


def test_rrf_gives_exactly_one_to_a_chunk_first_in_both_lists() -> None:
    out = fuse([(7, 0.9), (8, 0.1)], [(7, -5.0)], mode="rrf", vector_weight=0.5,
               text_weight=0.5, rrf_k=60)
    assert out[0].key == 7 and out[0].fused == pytest.approx(1.0)
    assert 0 < out[1].fused < 1


def test_single_sided_fusion_uses_that_side_alone() -> None:
    out = fuse([], [(3, -3.0)], mode="weighted", vector_weight=0.7, text_weight=0.3)
    assert out[0].fused == pytest.approx(0.75)


def test_fusion_records_both_ranks_for_explanations() -> None:
    out = fuse([(1, 0.9), (2, 0.4)], [(2, -2.0), (3, -1.0)], mode="calibrated",
               vector_weight=0.5, text_weight=0.5)
    by_key = {c.key: c for c in out}
    assert (by_key[2].vector_rank, by_key[2].text_rank) == (2, 1)
    assert by_key[3].vector_rank is None and by_key[3].vector_score is None


def test_decay_halves_score_after_one_half_life_and_spares_evergreen_files() -> None:
    now = datetime(2026, 3, 31, tzinfo=UTC)
    assert decay_multiplier(date(2026, 3, 1), now, 30) == pytest.approx(0.5)
    assert decay_multiplier(None, now, 30) == 1.0
    assert decay_multiplier(date(2026, 4, 5), now, 30) == 1.0  # future dates do not boost


def test_mmr_tokens_include_cjk_unigrams_and_bigrams() -> None:
    assert {"缓", "存", "缓存", "redis"} <= mmr_tokens("Redis 缓存")


def test_jaccard_edge_cases() -> None:
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(frozenset({"a"}), frozenset()) == 0.0
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)


def test_mmr_pushes_a_near_duplicate_below_a_diverse_hit() -> None:
    texts = {1: "deploy the billing service to frankfurt", 2: "deploy the billing service to "
             "frankfurt today", 3: "coffee preference dark roast"}
    items = [Candidate(1, fused=1.0), Candidate(2, fused=0.95), Candidate(3, fused=0.9)]
    order = mmr_order(items, texts.__getitem__, 0.5)
    assert [c.key for c in order] == [1, 3, 2]
    assert order[2].mmr_penalty > 0
    assert [c.score for c in order] == [1.0, 0.9, 0.95]  # MMR reorders, never rescales


def test_mmr_with_lambda_one_is_a_plain_sort() -> None:
    items = [Candidate(1, fused=1.0), Candidate(2, fused=0.5)]
    assert mmr_order(items, lambda k: "same text", 1.0) == items


def test_decay_formula_matches_spec() -> None:
    now = datetime(2026, 1, 11, tzinfo=UTC)
    got = decay_multiplier(date(2026, 1, 1), now, 30)
    assert got == pytest.approx(math.exp(-math.log(2) / 30 * 10))
