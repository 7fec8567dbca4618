"""The search pipeline end to end, on real indexes, on both vector paths."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from openai_server import FakeOpenAIServer, server_error

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import OpenClawMemoryRetriever

FTS_SYNTAX = ['"', '"unbalanced', "*", "foo*", "AND", "OR NOT", "NEAR(a b)", "NEAR(", "col:x",
              ":", "(", ")", "((a)", "a -b", "^start", "{x y}", "'", "\\", "%_", "\x00"]


@pytest.fixture()
def hybrid(workspace: Path, tmp_path: Path, vector_backend: str) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, index_path=tmp_path / "h.sqlite",
                          embedding={"provider": "local"},
                          store={"vector_backend": vector_backend}) as memory:
        memory.sync()
        yield memory


@pytest.fixture()
def keyword(workspace: Path, tmp_path: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, index_path=tmp_path / "k.sqlite",
                          embedding={"provider": "none"}) as memory:
        memory.sync()
        yield memory


def test_hybrid_finds_a_paraphrase_with_no_shared_keyword(hybrid: MemoryIndex) -> None:
    response = hybrid.search("nut allergy")  # no shared word (and no shared stem)
    assert response.mode == "hybrid"
    assert response.results[0].path == "MEMORY.md"
    assert response.vector_path in ("vec0", "numpy")


def test_both_vector_paths_return_the_same_hits(workspace: Path, tmp_path: Path) -> None:
    seen = []
    for backend in ("vec0", "numpy"):
        with MemoryIndex.open(workspace, index_path=tmp_path / f"{backend}.sqlite",
                              embedding={"provider": "local"},
                              store={"vector_backend": backend}) as memory:
            memory.sync()
            response = memory.search("which database for billing?", min_score=0)
            assert response.vector_path == backend
            seen.append([(h.path, h.start_line, round(h.score, 4)) for h in response.results])
    assert seen[0] == seen[1] and seen[0]


@pytest.mark.parametrize("query,path", [
    ("缓存", "memory/2026-01-11.md"),     # Chinese, 2 characters inside a longer run
    ("方案", "memory/2026-01-11.md"),
    ("議事", "memory/2026-01-11.md"),     # Japanese
    ("회의", "memory/2026-01-11.md"),     # Korean, stem of 회의는
    ("Redis", "memory/2026-01-11.md"),
])
def test_cjk_two_character_queries_find_their_note(keyword: MemoryIndex, query: str,
                                                   path: str) -> None:
    results = keyword.search(query).results
    assert results and results[0].path == path


@pytest.mark.parametrize("query", FTS_SYNTAX)
def test_fts_syntax_in_queries_never_raises(keyword: MemoryIndex, hybrid: MemoryIndex,
                                            query: str) -> None:
    for memory in (keyword, hybrid):
        response = memory.search(query)
        assert isinstance(response.results, tuple)


def test_exact_keyword_hit_survives_any_threshold(hybrid: MemoryIndex) -> None:
    hits = hybrid.search("BILL-482", min_score=0.99).results
    assert hits and hits[0].path == "memory/2026-01-10.md"
    assert hits[0].explanation.rescued


def test_nothing_relevant_is_an_explicit_answer(keyword: MemoryIndex) -> None:
    response = keyword.search("xylophone quasar")
    assert response.results == ()
    assert any("nothing relevant" in n for n in response.notes)


def test_every_hit_explains_its_score(hybrid: MemoryIndex) -> None:
    hit = hybrid.search("PostgreSQL billing service").results[0]
    e = hit.explanation
    assert e.vector_score is not None and e.text_score is not None and e.bm25 is not None
    bonus = 0.1 * (e.keyword_strength or 0.0) + (0.2 if e.date_match else 0.0)
    assert hit.score == pytest.approx((e.fused - bonus) * e.decay)
    assert set(hit.as_dict(explain=True)["explain"]) >= {
        "vector_score", "text_score", "keyword_strength", "date_match", "decay", "mmr_penalty"}


def test_response_shape_and_citations_in_direct_chat(hybrid: MemoryIndex) -> None:
    data = hybrid.search("invoice renderer").as_dict()
    assert set(data) >= {"results", "provider", "model", "mode", "citations", "vector_path"}
    assert data["provider"] == "local" and data["mode"] == "hybrid"
    first = data["results"][0]
    assert set(first) - {"as_of"} == {"path", "start_line", "end_line", "score", "snippet",
                                      "source", "citation"}
    assert first.get("as_of") in (None, first["path"][-13:-3])  # a daily file's date
    assert first["citation"] == f"{first['path']}#L{first['start_line']}-L{first['end_line']}"
    assert first["snippet"].endswith("Source: " + first["citation"])
    json.dumps(data)


def test_group_chat_strips_citations_and_never_returns_memory_md(hybrid: MemoryIndex) -> None:
    response = hybrid.search("allergic to peanuts", chat_type="group", min_score=0)
    assert response.results
    assert all(h.path != "MEMORY.md" for h in response.results)
    assert all(h.citation is None and "Source:" not in h.snippet for h in response.results)


def test_snippets_are_clamped_to_700_characters(workspace: Path, tmp_path: Path) -> None:
    (workspace / "memory" / "wide.md").write_text("walrus " * 300 + "\n", encoding="utf-8")
    with MemoryIndex.open(workspace, index_path=tmp_path / "w.sqlite",
                          embedding={"provider": "none"}, search={"citations": "off"}) as m:
        hit = m.search("walrus").results[0]
        assert len(hit.snippet) == 700 and hit.citation is None


# MemoryScope writes a user's daily notes to an area, memory/<namespace>/YYYY-MM-DD.md.
@pytest.mark.parametrize("folder", ["memory", "memory/memories/alice"])
def test_temporal_decay_ages_daily_notes_but_not_evergreen_ones(workspace: Path, tmp_path: Path,
                                                                folder: str) -> None:
    (workspace / folder).mkdir(parents=True, exist_ok=True)
    (workspace / folder / "2025-01-10.md").write_text("- heron sighting at the lake\n")
    (workspace / folder / "birds.md").write_text("- heron sighting at the lake\n")
    daily, evergreen = f"{folder}/2025-01-10.md", f"{folder}/birds.md"
    with MemoryIndex.open(workspace, index_path=tmp_path / "d.sqlite",
                          embedding={"provider": "none"},
                          search={"temporal_decay": True, "half_life_days": 30}) as memory:
        now = datetime(2025, 3, 11, tzinfo=UTC)  # 60 days after the daily note
        hits = {h.path: h for h in memory.search("heron sighting", now=now,
                                                 min_score=0).results}
        assert hits[evergreen].explanation.decay == 1.0
        assert hits[daily].explanation.decay == pytest.approx(0.25)
        assert hits[evergreen].score > hits[daily].score
        retriever = OpenClawMemoryRetriever(index=memory, min_score=0, path_glob=f"{folder}/*")
        docs = retriever.invoke("heron sighting", date_from="2025-01-01", date_to="2025-01-31")
        assert [d.metadata["path"] for d in docs] == [daily]


def test_mmr_demotes_near_duplicates(workspace: Path, tmp_path: Path) -> None:
    mem = workspace / "memory"
    (mem / "a.md").write_text("- kayak trip planning with Anna on the river\n")
    (mem / "b.md").write_text("- kayak trip planning with Anna on the river again\n")
    (mem / "c.md").write_text("- kayak rental prices list\n")
    settings = {"embedding": {"provider": "none"}, "search": {"mmr": True, "mmr_lambda": 0.3}}
    with MemoryIndex.open(workspace, index_path=tmp_path / "m.sqlite", **settings) as memory:
        paths = [h.path for h in memory.search("kayak trip", min_score=0).results]
        assert paths.index("memory/c.md") == 1
        assert memory.search("kayak trip", min_score=0).results[2].explanation.mmr_penalty > 0


def test_keyword_only_mode_says_why(keyword: MemoryIndex) -> None:
    response = keyword.search("PostgreSQL")
    assert response.mode == "keyword-only" and response.provider == "none"
    assert any("keyword-only" in n for n in response.notes)
    assert response.results[0].path == "MEMORY.md"


@pytest.mark.parametrize("fusion", ["calibrated", "weighted", "rrf"])
def test_every_fusion_mode_ranks_the_obvious_answer_first(workspace: Path, tmp_path: Path,
                                                          fusion: str) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "f.sqlite",
                          embedding={"provider": "local"}, search={"fusion": fusion}) as m:
        m.sync()
        assert m.search("PDF job crash for zero-amount invoices").results[0].path == \
            "memory/2026-01-10.md"


def test_provider_failure_degrades_to_keywords_with_a_warning(workspace: Path,
                                                              tmp_path: Path) -> None:
    with FakeOpenAIServer(dims=8) as server, MemoryIndex.open(
            workspace, index_path=tmp_path / "o.sqlite",
            embedding={"provider": "openai", "base_url": server.base_url, "max_retries": 0,
                       "model": "text-embedding-3-small"}) as memory:
        memory.sync()
        server.script(*[server_error(500)] * 3)
        response = memory.search("PostgreSQL")
        assert response.mode == "keyword-only"
        assert response.results and response.results[0].path == "MEMORY.md"
        assert response.error and "500" in response.error
        assert response.warning and response.action
        assert response.as_dict()["warning"] == response.warning


def test_search_on_a_never_synced_index_syncs_first(workspace: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "n.sqlite",
                          embedding={"provider": "none"}) as memory:
        assert memory.search("PostgreSQL").results


def test_misconfigured_provider_answers_keyword_only_with_a_warning(workspace: Path,
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   ) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with MemoryIndex.open(workspace, index_path=tmp_path / "x.sqlite",
                          embedding={"provider": "openai"}) as memory:
        response = memory.search("PostgreSQL")
        assert response.mode == "keyword-only" and response.results
        assert response.warning and "key" in response.warning.lower()

