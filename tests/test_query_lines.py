"""Questions of several lines (the conversation so far): each line is compared with the
candidates too, and a candidate's vector score blends its cosine with the whole question and
with its best line; one-line questions are untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.search.querylines import MAX_LINES, blend, query_lines

DIALOGUE = ("Bart: I had a long day at school today.\n"
            "Assistant: Oh no, what happened?\n"
            "Bart: We had a maths test and I think I did fine.\n"
            "Assistant: That's great to hear!\n"
            "Bart: Grandma is coming over this weekend, maybe she will bake with me again.")


def test_a_question_of_several_lines_is_split_into_its_lines() -> None:
    assert query_lines("What did we decide about the database?") == []
    assert query_lines("first turn\n\n  ---  \nsecond turn") == ["first turn", "second turn"]
    many = "\n".join(f"turn {n}" for n in range(40))
    assert query_lines(many) == [f"turn {n}" for n in range(40 - MAX_LINES, 40)]


def test_the_blend_weighs_the_whole_and_the_best_line() -> None:
    assert blend({1: 0.2, 2: 0.5}, {1: 0.6}, 0.3) == pytest.approx({1: 0.32, 2: 0.5})


@pytest.fixture()
def child(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    notes = {"2023-01-05": "Bart baked an apple pie with his grandma and burned his finger.",
             "2023-02-11": "Bart scored a goal at his first football match.",
             "2023-03-20": "Bart got lost at the zoo and found the giraffes."}
    for day, note in notes.items():
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n- {note}\n", encoding="utf-8")
    return ws


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_each_hit_of_a_dialogue_blends_the_whole_and_its_best_line(
        child: Path, tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "postgres":
        from openclaw_memory.postgres import PostgresMemory

        memory: Any = PostgresMemory.open(request.getfixturevalue("pg_dsn"),
                                          workspace="lines", timezone="UTC")
        memory.publish(child)
    else:
        memory = MemoryIndex.open(child, index_path=tmp_path / "i.sqlite")
        memory.sync()
    with memory:
        hits = memory.search(DIALOGUE, min_score=0.0).results
        provider = memory.provider
        assert provider is not None
        whole = provider.embed_query(DIALOGUE)
        lines = np.asarray(provider.embed_documents(query_lines(DIALOGUE)))
        for hit in hits:
            chunk = provider.embed_documents([(child / hit.path).read_text("utf-8").rstrip("\n")])[0]
            e = hit.explanation
            assert e.line_cosine == pytest.approx(float((lines @ chunk).max()), abs=1e-4)
            assert e.vector_score == pytest.approx(0.7 * float(whole @ chunk) + 0.3 * e.line_cosine,
                                                   abs=1e-4)
        assert hits[0].path == "memory/2023-01-05.md"  # the grandma-baking turn finds its memory


def test_one_line_questions_and_weight_zero_are_untouched(child: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(child, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        assert all(h.explanation.line_cosine is None
                   for h in memory.search("baking with grandma", min_score=0.0).results)
    with MemoryIndex.open(child, index_path=tmp_path / "i.sqlite",
                          search={"query_lines_weight": 0.0}) as memory:
        assert all(h.explanation.line_cosine is None
                   for h in memory.search(DIALOGUE, min_score=0.0).results)


def test_with_a_costly_provider_a_dialogues_lines_are_embedded_beside_the_question(
        child: Path, tmp_path: Path, local_openai: Any) -> None:
    # Two requests that overlap instead of following each other: the question's (slowed
    # here) and its lines'. The result is the same as embedding them one after the other.
    from openai_server import embeddings

    settings = {"embedding": {"provider": "openai", "base_url": local_openai.base_url,
                              "api_key": "sk-test", "timeout_seconds": 5.0}}
    with MemoryIndex.open(child, index_path=tmp_path / "i.sqlite", **settings) as memory:
        memory.sync()
        assert memory.provider is not None and memory.provider.costly
        local_openai.max_in_flight = 0
        local_openai.script(embeddings(dims=16, delay=0.3), embeddings(dims=16, delay=0.3))
        hits = memory.search(DIALOGUE, min_score=0.0).results
        assert local_openai.max_in_flight == 2
        texts = [r.json["input"] for r in local_openai.requests_to()[-2:]]
        assert sorted(len(t) if isinstance(t, list) else 1 for t in texts) == [
            1, len(query_lines(DIALOGUE))]
        assert all(h.explanation.line_cosine is not None for h in hits)
