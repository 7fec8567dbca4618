"""Keyword query building: stop words, CJK pairs, and FTS5 syntax neutralised."""

from __future__ import annotations

import pytest

from openclaw_memory.language.textsearch import fts_body, keyword_terms, match_expression


def test_stop_words_are_dropped_from_questions() -> None:
    assert keyword_terms("What did we decide about the API?") == ["decide", "api"]


def test_query_of_only_stop_words_keeps_its_words() -> None:
    assert keyword_terms("what is it") == ["what", "is", "it"]


def test_chinese_run_becomes_adjacent_character_pairs() -> None:
    assert keyword_terms("缓存方案") == ["缓 存", "存 方", "方 案"]


def test_korean_word_with_particle_still_yields_the_stem_pair() -> None:
    assert "회 의" in keyword_terms("회의를")


def test_fts_body_splits_cjk_characters_but_not_latin_words() -> None:
    assert fts_body("Redis 集群").split() == ["Redis", "集", "群"]


@pytest.mark.parametrize("query", ['"', "*", "AND", "NEAR(a b)", "col:x", "((", "a OR", "-x", "^"])
def test_fts_syntax_is_quoted_into_plain_terms(query: str) -> None:
    expr = match_expression(query)
    if expr is not None:
        for term in expr.split(" OR "):
            assert term.startswith('"') and term.endswith('"')


def test_punctuation_only_query_has_no_keyword_search() -> None:
    assert match_expression("?!... ()") is None
