"""A search never writes the index: with a costly embedding provider (the real OpenAI client
against a local server) the lines a search compares are embedded but never stored, so the
index generation and the embedding cache stay as they were, a search works on an index it may
only read, and it never waits for another process's write lock."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.embeddings import cache
from tests.openai_server import FakeOpenAIServer
from tests.privileges import CAN_TEST_PERMISSIONS, unprivileged_copy

QUESTIONS = ["Where does Ada Park live now?", "Where does Ada Park live?",
             "Who is Omar's manager now?", "Which database does billing use?",
             "What did Ada Park do before Berlin?", "王芳现在住在哪里？",
             "Which editor does Ravi use these days?", "What car does Dad drive?"]


@pytest.fixture()
def server(local_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    return local_openai


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Facts\n\n- Ada Park lives in Paris.\n- Omar's manager is Sarah Kim.\n"
        "- Billing runs on MySQL 8.\n- Ravi uses VS Code.\n- 王芳住在上海。\n", encoding="utf-8")
    (ws / "memory" / "2026-03-02.md").write_text(
        "# 2026-03-02\n\n- Ada Park moved to Berlin last week.\n- Omar now reports to Raj.\n",
        encoding="utf-8")
    (ws / "memory" / "2026-04-10.md").write_text(
        "# 2026-04-10\n\n- Billing cut over to Postgres 16.\n- Ravi is living in Neovim.\n"
        "- 王芳搬到了杭州。\n- Dad picked up a silver Prius.\n", encoding="utf-8")
    return ws


def _settings(server: FakeOpenAIServer) -> dict[str, Any]:
    return {"embedding": {"provider": "openai", "base_url": server.base_url,
                          "api_key": "sk-test", "timeout_seconds": 5.0},
            "timezone": "UTC"}


def _cache_rows(index: Path) -> int:
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        return int(conn.execute("select count(*) from embedding_cache").fetchone()[0])


def test_searches_with_a_costly_provider_leave_the_generation_and_the_cache_alone(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    index = tmp_path / "i.sqlite"
    with MemoryIndex.open(_workspace(tmp_path), index_path=index, **_settings(server)) as memory:
        memory.sync()
        assert memory.provider is not None and memory.provider.costly
        generation, rows = memory.store.generation(), _cache_rows(index)
        embedded_before = len(server.requests)
        for _ in range(3):
            for question in QUESTIONS:
                memory.search(question)
        assert len(server.requests) > embedded_before  # the searches did embed
        assert memory.store.generation() == generation
        assert _cache_rows(index) == rows


def _search_read_only(ws: Path, index: Path, settings: dict[str, Any]) -> list[list[str]]:
    with MemoryIndex.open(ws, index_path=index, **settings) as memory:
        memory.store._postings.min_chunks = 0  # the keyword postings are read from it too
        found = [[hit.citation or hit.path for hit in memory.search(q).results] for q in QUESTIONS]
        assert memory.store.wait_for_keyword_postings(60), memory.store.keyword_path()
        return found


@pytest.mark.skipif(not CAN_TEST_PERMISSIONS, reason="root without an unprivileged user")
def test_a_search_works_on_an_index_it_may_only_read(server: FakeOpenAIServer,
                                                      tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    settings = _settings(server)
    with MemoryIndex.open(_workspace(tree), index_path=tree / "index" / "i.sqlite",
                          **settings) as memory:
        memory.sync()
        expected = [[hit.citation or hit.path for hit in memory.search(q).results]
                    for q in QUESTIONS]
    with unprivileged_copy(tree) as (copy, run):
        for path in [copy / "index", *(copy / "index").iterdir(), copy / "ws",
                     *(copy / "ws").rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        found = run(lambda: _search_read_only(copy / "ws", copy / "index" / "i.sqlite", settings))
    assert found == expected and any(found)


def _hold_write_lock(index: str, held: Any, release: Any) -> None:
    conn = sqlite3.connect(index, timeout=30)
    conn.execute("begin immediate")
    conn.execute("update meta set value = value where key = 'generation'")
    held.set()
    release.wait(120)
    conn.rollback()
    conn.close()


def test_a_search_never_waits_for_another_processs_write_lock(server: FakeOpenAIServer,
                                                             tmp_path: Path) -> None:
    index = tmp_path / "i.sqlite"
    with MemoryIndex.open(_workspace(tmp_path), index_path=index, **_settings(server)) as memory:
        memory.sync()
        ctx = multiprocessing.get_context("spawn")
        held, release = ctx.Event(), ctx.Event()
        writer = ctx.Process(target=_hold_write_lock, args=(str(index), held, release))
        writer.start()
        try:
            assert held.wait(60)
            answers: list[list[str]] = []
            # The lock is held until every search has answered: a search that needed it would
            # wait out the busy timeout and fail, or hang until the writer gives up.
            worker = threading.Thread(target=lambda: answers.extend(
                [h.path for h in memory.search(q).results] for q in QUESTIONS))
            worker.start()
            worker.join(100)
            assert not worker.is_alive() and len(answers) == len(QUESTIONS)
            assert any(answers)
        finally:
            release.set()
            writer.join(30)


def test_the_next_sync_keeps_what_searches_paid_for_and_a_new_process_reads_it(
        server: FakeOpenAIServer, tmp_path: Path) -> None:
    # A costly provider's vectors of the lines a search compared are written by the next
    # sync (which writes anyway), without moving the generation: a restarted worker reads
    # them from the cache instead of paying for them again.
    index = tmp_path / "i.sqlite"
    ws = _workspace(tmp_path)
    written = time.time() - 3600  # notes written earlier (a fresh one is read again)
    for note in ws.rglob("*.md"):
        os.utime(note, (written, written))
    with MemoryIndex.open(ws, index_path=index, **_settings(server)) as memory:
        memory.sync()
        rows = _cache_rows(index)
        for question in QUESTIONS:
            memory.search(question)
        assert _cache_rows(index) == rows  # the searches wrote nothing
        generation = memory.store.generation()
        memory.sync()  # nothing changed in the files
        saved = _cache_rows(index) - rows
        assert saved > 0 and memory.store.generation() == generation
        memory.sync()
        assert _cache_rows(index) == rows + saved  # each is written once
    cache._SHARED.clear()  # a new process: nothing in memory
    with MemoryIndex.open(ws, index_path=index, **_settings(server)) as memory:
        memory.search(QUESTIONS[0])  # the postings are read, the provider chosen
        before = len(server.requests_to())
        for question in QUESTIONS[1:]:
            memory.search(question)
        asked = server.requests_to()[before:]
    # Only the questions themselves went to the provider: every line was in the cache.
    assert all(len(_inputs(body)) == 1 for body in asked), [_inputs(b) for b in asked]
    assert len(asked) == len(QUESTIONS) - 1


def _inputs(request: Any) -> list[str]:
    texts = request.json["input"]
    return [texts] if isinstance(texts, str) else list(texts)
