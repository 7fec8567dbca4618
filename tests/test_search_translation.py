"""A question in one language over notes in the other, through query translation
(``search.translate_queries``), with the real default model and real index files: found,
marked in ``explain``, cited at the line holding the translated words; questions in the
notes' own language are searched as before."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import EmbeddingError
from openclaw_memory.language import translation

CHINESE_DAY = """# 2026-03-02

- 上午和房东讨论了续租合同，租金不变。
- 下午去超市买了牛奶、鸡蛋和面包。
- 女儿的生日派对定在六月十二日，在公园里举行。
- 晚上读完了一本关于宇宙的科普书。
- 车子的保险下个月到期，需要续保。
- 同事推荐了一家新开的川菜馆。
- 周末计划去爬山，天气预报说会下雨。
"""
ENGLISH_MEMORY = """# Memory

- The user's favourite tea is oolong.
- Monthly budget review happens on the first Monday.
- 2026-02: the kitchen sink was repaired by a plumber.
- The office moved to the fifth floor.
- Backups run every night at 02:00.
- Passport renewal is due in August.
- The cat's name is Miso.
"""


@pytest.fixture()
def bilingual(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-03-02.md").write_text(CHINESE_DAY, encoding="utf-8")
    (ws / "MEMORY.md").write_text(ENGLISH_MEMORY, encoding="utf-8")
    return ws


def _open(ws: Path, tmp_path: Path, **search: Any) -> MemoryIndex:
    memory = MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", search=search)
    memory.sync()
    return memory


@pytest.fixture()
def memory(bilingual: Path, tmp_path: Path) -> Iterator[MemoryIndex]:
    with _open(bilingual, tmp_path) as index:
        yield index


def test_an_english_question_finds_a_chinese_note_at_its_line(memory: MemoryIndex) -> None:
    top = memory.search("When is my daughter's birthday party?").results[0]
    assert top.citation == "memory/2026-03-02.md#L3-L7"  # line 5, the party, at the centre
    assert top.explanation is not None and top.explanation.translated
    assert top.explanation.text_score is not None and 0 < top.explanation.text_score <= 0.4


def test_a_chinese_question_finds_an_english_note_at_its_line(memory: MemoryIndex) -> None:
    top = memory.search("谁修好了厨房水槽？").results[0]
    assert top.citation == "MEMORY.md#L3-L7"  # line 5, the kitchen sink
    assert top.explanation is not None and top.explanation.translated


def test_without_translation_the_english_question_finds_nothing(bilingual: Path,
                                                                tmp_path: Path) -> None:
    with _open(bilingual, tmp_path, translate_queries=False) as memory:
        response = memory.search("When is my daughter's birthday party?")
        assert response.results == ()
        # and the Chinese one is found by meaning alone, cited whole
        top = memory.search("谁修好了厨房水槽？").results[0]
        assert top.citation == "MEMORY.md#L1-L9" and not top.explanation.translated


def test_a_translation_weight_of_zero_turns_translation_off(
        bilingual: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _open(bilingual, tmp_path, translation_weight=0.0) as memory:
        searched: list[str] = []
        keyword_search = memory.store.keyword_search

        def recorded(match: str, *args: Any, **kwargs: Any) -> list[tuple[int, float]]:
            searched.append(match)
            return keyword_search(match, *args, **kwargs)
        monkeypatch.setattr(memory.store, "keyword_search", recorded)
        assert memory.search("When is my daughter's birthday party?").results == ()
        # not even candidates: the keyword side searched the question's own words only
        assert searched and not any(re.search(r"[\u4e00-\u9fff]", m) for m in searched)
        top = memory.search("谁修好了厨房水槽？").results[0]
        assert top.citation == "MEMORY.md#L1-L9" and not top.explanation.translated


def test_a_question_in_the_notes_language_is_not_marked_translated(memory: MemoryIndex) -> None:
    hits = memory.search("kitchen sink plumber").results
    assert hits[0].citation == "MEMORY.md#L3-L7"
    assert not any(h.explanation.translated for h in hits if h.explanation)


def test_off_topic_questions_in_either_language_still_get_nothing(memory: MemoryIndex) -> None:
    for question in ("How tall is Mount Everest?", "珠穆朗玛峰有多高？"):
        assert memory.search(question).results == ()


def test_a_dictionary_file_other_than_the_pinned_one_is_not_used(
        memory: MemoryIndex, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(translation, "DATA_SHA256", "0" * 64)
    translation._dictionary.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger=translation.__name__):
            assert memory.search("When is my daughter's birthday party?").results == ()
        assert "not translating questions" in caplog.text
    finally:
        translation._dictionary.cache_clear()


def test_explain_reports_the_translation(memory: MemoryIndex) -> None:
    hit = memory.search("When is my daughter's birthday party?").results[0]
    assert hit.as_dict(explain=True)["explain"]["translated"] is True


def test_keyword_only_search_is_not_translated(bilingual: Path, tmp_path: Path) -> None:
    # BM25 would rank a chunk holding a rendering like one holding the word asked for.
    with MemoryIndex.open(bilingual, index_path=tmp_path / "k.sqlite",
                          embedding={"provider": "none"}) as memory:
        memory.sync()
        hits = memory.search("When is my daughter's birthday party?").results
        assert "memory/2026-03-02.md" not in {h.path for h in hits}
        assert memory.search("女儿的生日").results[0].path == "memory/2026-03-02.md"


def test_with_the_embedder_down_the_keyword_side_searches_the_question_as_asked(
        memory: MemoryIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = memory._provider
    assert provider is not None

    def down(text: str) -> list[float]:
        raise EmbeddingError("embedding server unreachable")
    monkeypatch.setattr(provider, "embed_query", down)
    response = memory.search("When is my daughter's birthday party?")
    assert response.mode == "keyword-only"
    assert "memory/2026-03-02.md" not in {h.path for h in response.results}


def test_notes_in_one_language_are_not_searched_for_the_other_languages_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "en"
    ws.mkdir()
    (ws / "MEMORY.md").write_text(ENGLISH_MEMORY, encoding="utf-8")
    with _open(ws, tmp_path) as memory:
        looked_up: list[str] = []
        terms_in = memory.store.terms_in

        def counted(terms: Sequence[str], rowids: Sequence[int]) -> dict[str, set[int]]:
            looked_up.extend(terms)
            return terms_in(terms, rowids)
        monkeypatch.setattr(memory.store, "terms_in", counted)
        assert translation.translate_query("Who repaired the kitchen sink?") is not None
        top = memory.search("Who repaired the kitchen sink?").results[0]
        assert top.citation == "MEMORY.md#L3-L7" and not top.explanation.translated
        assert looked_up and not any(re.search(r"[\u4e00-\u9fff]", t) for t in looked_up)
