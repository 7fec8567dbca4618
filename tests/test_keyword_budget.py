"""The keyword side scores a bounded number of chunks: common words leave the candidate query,
a question of common words only is scored among the newest chunks, and small indexes keep the
full query. Budgets are lowered here so that a small index shows what 100k chunks do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.search import keywords
from openclaw_memory.search.keywords import candidate_query, keyword_candidates


@pytest.fixture()
def memory(tmp_path: Path) -> Iterator[MemoryIndex]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 41):
        extra = " The zebra migration plan was approved." if day == 7 else ""
        (ws / "memory" / f"2026-01-{day:02d}.md" if day <= 31 else
         ws / "memory" / f"2026-02-{day - 31:02d}.md").write_text(
            f"# Day {day}\n\nTeam meeting notes: project status update number {day}.{extra}\n",
            encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"}) as index:
        index.sync()
        yield index


def test_a_small_index_keeps_the_full_query(memory: MemoryIndex) -> None:
    plan = candidate_query(memory.store, keyword_terms("zebra meeting project"))
    assert plan.expression == '"zebra" OR "meeting" OR "project"' and plan.min_rowid is None


def test_words_found_everywhere_leave_the_candidate_query(memory: MemoryIndex,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keywords, "MATCH_BUDGET", 10)
    store = memory.store
    plan = candidate_query(store, keyword_terms("zebra meeting project"))
    assert plan.expression == '"zebra"' and plan.min_rowid is None
    pool = keyword_candidates(store, "zebra meeting project", 5, ("memory",), [])
    top = store.chunks([pool[0][0]])[pool[0][0]]
    assert top.path == "memory/2026-01-07.md"


def test_a_question_of_common_words_only_is_scored_among_the_newest_chunks(
        memory: MemoryIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keywords, "MATCH_BUDGET", 10)
    monkeypatch.setattr(keywords, "WINDOW_BUDGET", 10)
    store = memory.store
    plan = candidate_query(store, keyword_terms("meeting project status"))
    assert plan.min_rowid is not None and plan.min_rowid > 0
    pool = keyword_candidates(store, "meeting project status", 5, ("memory",), [])
    assert len(pool) == 5 and all(rowid >= plan.min_rowid for rowid, _ in pool)


def test_the_source_filter_without_a_join_returns_what_the_join_did(memory: MemoryIndex) -> None:
    store = memory.store
    assert store.sources_present() == {"memory"}
    plain = store.keyword_search('"meeting" OR "zebra"', 10, ("memory",))
    joined = store.keyword_search('"meeting" OR "zebra"', 10, ("memory", "sessions"))
    assert plain == joined and plain
    assert store.keyword_search('"meeting"', 10, ("sessions",)) == []


def test_terms_among_candidates_are_those_the_index_itself_matches(
        memory: MemoryIndex) -> None:
    store = memory.store
    keys = [rowid for rowid, _ in store.keyword_search('"meeting"', 40, ("memory",))]
    terms = ["zebra", "meeting", "status", "meetings", "no-such-word"]
    found = store.terms_in(terms, keys)
    for term in terms:
        quoted = '"' + term + '"'
        everywhere = {r[0] for r in store.query(
            "select rowid from chunks_fts where chunks_fts match ?", (quoted,))}
        assert found[term] == everywhere & set(keys), term
    assert found["meeting"] == set(keys) and found["no-such-word"] == set()
    assert found["meetings"] == found["meeting"]  # the same stem, as the index tokenises it


@pytest.fixture()
def bilingual(tmp_path: Path) -> Iterator[MemoryIndex]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    days = ["The incident report was filed.", "Another incident at the depot.",
            "A third incident, minor.", "昨天发生了一起事变。", "双方的事端已经平息。",
            "路途遥远。", "他住得很远。", "Lunch with Sam."]
    for day, text in enumerate(days, start=1):
        (ws / "memory" / f"2026-01-{day:02d}.md").write_text(f"# Day {day}\n\n{text}\n",
                                                             encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite",
                          embedding={"provider": "none"}) as index:
        index.sync()
        yield index


def _terms(plan: keywords.CandidateQuery) -> set[str]:
    assert plan.expression is not None
    return {t.strip('"') for t in plan.expression.split(" OR ")}


def test_renderings_never_push_the_questions_own_words_out_of_the_budget(
        bilingual: MemoryIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each rendering is rarer than "incident" (3 chunks): ranked together by rarity, they
    # filled a budget of 3 and the word the user wrote was left out.
    store, renderings = bilingual.store, keyword_terms("事变 事端 远")
    monkeypatch.setattr(keywords, "MATCH_BUDGET", 3)
    assert _terms(candidate_query(store, ["incident"], renderings)) == {"incident"}
    monkeypatch.setattr(keywords, "MATCH_BUDGET", 5)  # what "incident" leaves, rarest first
    assert _terms(candidate_query(store, ["incident"], renderings)) == {"incident", "事 变",
                                                                         "事 端"}


def test_a_rendering_no_chunk_holds_is_left_out_of_the_candidate_query(
        bilingual: MemoryIndex) -> None:
    plan = candidate_query(bilingual.store, ["incident"], keyword_terms("事變 事端"))
    assert _terms(plan) == {"incident", "事 端"}  # the small index's full OR, less 事變
    assert candidate_query(bilingual.store, [], keyword_terms("事變")).expression is None


def test_a_question_of_common_words_only_takes_its_renderings_into_the_newest_chunks(
        bilingual: MemoryIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keywords, "MATCH_BUDGET", 2)  # "incident" (3 chunks) does not fit
    monkeypatch.setattr(keywords, "WINDOW_BUDGET", 1)
    plan = candidate_query(bilingual.store, ["incident"], keyword_terms("事变 事變"))
    assert _terms(plan) == {"incident", "事 变"}
    assert plan.min_rowid is not None and plan.min_rowid > 0
