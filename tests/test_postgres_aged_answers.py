"""PostgreSQL: an aged workspace answers like a fresh one. After any sequence of document
writes, appends, deletes and folder publishes, a search's hits, their order and their scores
equal those of a new workspace holding the same documents (its keyword statistics are
counted from the live rows; this process's own writes must not leave stale counts behind)."""

from __future__ import annotations

import itertools
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openclaw_memory.postgres import PostgresMemory

pytestmark = pytest.mark.slow

NAMES = ["MEMORY.md", "memory/a.md", "memory/b.md", "memory/2026-03-01.md"]
WORDS = ("invoice billing postgres redis lisbon coffee peanut deploy ticket cluster budget "
         "roadmap sprint backlog the a of").split()
QUERIES = ["postgres billing", "coffee in lisbon", "deploy ticket backlog", "redis",
           "budget roadmap sprint"]
NOW = datetime(2026, 3, 10, tzinfo=UTC)
OPTS: dict[str, Any] = {"embedding": {"provider": "none"}}
line = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join)
ops = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(NAMES), st.lists(line, min_size=1, max_size=10)),
    st.tuples(st.just("append"), line),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("search")),  # counts remembered before the next writes
    st.tuples(st.just("publish"), st.sampled_from(NAMES), st.lists(line, min_size=1,
                                                                   max_size=10)),
)
_names = itertools.count()


def _apply(memory: PostgresMemory, op: tuple[Any, ...], folder: Path) -> None:
    if op[0] == "put":
        memory.put_document(op[1], ("\n".join(op[2]) + "\n").encode())
    elif op[0] == "append":
        memory.write(op[1], now=NOW)
    elif op[0] == "delete":
        memory.delete_document(op[1])
    elif op[0] == "search":
        _answers(memory)
    else:  # a person's folder published over the workspace (its other documents stay)
        target = folder / op[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(op[2]) + "\n")
        memory.publish(folder)


def _answers(memory: PostgresMemory) -> list[list[tuple[str | None, float]]]:
    return [[(h.citation, h.score) for h in memory.search(q, now=NOW, min_score=0.0).results]
            for q in QUERIES]


def test_any_history_of_writes_and_deletes_answers_like_a_fresh_workspace(pg_dsn: str) -> None:
    @settings(max_examples=15, deadline=None, suppress_health_check=[
        HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.lists(ops, min_size=1, max_size=10))
    def check(sequence: list[tuple[Any, ...]]) -> None:
        n = next(_names)
        with tempfile.TemporaryDirectory() as tmp, \
                PostgresMemory.open(pg_dsn, workspace=f"aged{n}", **OPTS) as aged:
            for op in sequence:
                _apply(aged, op, Path(tmp) / "folder")
            got = _answers(aged)
            aged.export(Path(tmp) / "final")
            with PostgresMemory.open(pg_dsn, workspace=f"fresh{n}", **OPTS) as fresh:
                if (Path(tmp) / "final").exists():
                    fresh.publish(Path(tmp) / "final")
                want = _answers(fresh)
        assert [[c for c, _s in hits] for hits in got] == [[c for c, _s in hits] for hits in want]
        assert [s for hits in got for _c, s in hits] == pytest.approx(
            [s for hits in want for _c, s in hits], abs=1e-6)

    check()


def test_common_word_questions_rank_an_edited_workspace_as_a_fresh_one(pg_dsn: str) -> None:
    # Questions of words every chunk holds are scored among the newest chunks; by row id
    # (the order of writes) the edited workspace answered 0 of 20 as the fresh one. Small
    # budgets here stand for a workspace of thousands of chunks.
    import random

    rng = random.Random(3)
    words = ("billing database cutover invoice ticket redis cluster team export nightly "
             "finance staging password rotate kestrel launch review budget").split()
    docs = {f"memory/n{d:03d}.md": "- " + " ".join(rng.sample(words, 9)) + f" item{d}.\n"
            for d in range(240)}
    questions = [" ".join(rng.sample(words, 2)) for _ in range(12)]
    with PostgresMemory.open(pg_dsn, workspace="fresh-order", **OPTS) as fresh, \
            PostgresMemory.open(pg_dsn, workspace="edited-order", **OPTS) as edited:
        for path, text in docs.items():
            fresh.put_document(path, text.encode())
        for path, text in reversed(docs.items()):  # written in another order, then edited
            edited.put_document(path, text.encode())
        for path, text in list(docs.items())[::3]:
            edited.put_document(path, b"- scratch\n")
            edited.put_document(path, text.encode())
        for memory in (fresh, edited):
            memory.index.keyword_budgets = (60, 20)
        for question in questions:
            ours = [(h.path, h.start_line, h.score) for h in fresh.search(question).results]
            assert ours and ours == [(h.path, h.start_line, h.score)
                                     for h in edited.search(question).results], question
