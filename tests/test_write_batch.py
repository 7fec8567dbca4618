"""A sync commits many files at once, never holds the write lock while embedding, and a file
that moved before the commit is rolled back alone and read again."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.embeddings.base import EmbeddingProvider, provider_key_for
from openclaw_memory.errors import StoreError
from openclaw_memory.indexing.batch import PendingWrite, WriteBatch
from openclaw_memory.store import StaleReadError, Store
from openclaw_memory.types import Chunk, MemoryFile


def _file(path: str) -> MemoryFile:
    return MemoryFile(path, f"/ws/{path}", "memory", 1, 10)


def _write(store: Store, path: str, text: str) -> PendingWrite:
    chunk = Chunk(path, "memory", 1, 1, text, f"h-{path}")
    return PendingWrite(
        write=lambda conn: store.replace_file_rows(conn, _file(path), "x", [chunk], None, "m"),
        done=lambda result: None, stale=lambda: None, chunks=1)


def _paths(store: Store) -> list[str]:
    return sorted(r[0] for r in store.query("select path from files"))


def test_files_of_one_batch_commit_together(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite")
    batch = WriteBatch(store, max_files=3)
    for name in "abcde":
        batch.add(_write(store, f"{name}.md", f"note {name}"))
    assert batch.commits == 1 and _paths(store) == ["a.md", "b.md", "c.md"]
    batch.finish()
    assert batch.commits == 2 and len(_paths(store)) == 5
    assert store.keyword_search('"note"', 10, ["memory"])  # FTS rows committed with them
    store.close()


def test_a_stale_file_is_rolled_back_alone_and_handed_back(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite")
    handed_back: list[str] = []
    done: list[str] = []

    def stale(conn: object) -> object:
        store.replace_file_rows(conn, _file("b.md"), "x", [Chunk("b.md", "memory", 1, 1, "b",
                                                                 "h-b")], None, "m")
        raise StaleReadError("b.md changed after it was read")

    batch = WriteBatch(store)
    batch.add(_write(store, "a.md", "alpha"))
    batch.add(PendingWrite(write=stale, done=lambda r: done.append("b"),
                           stale=lambda: handed_back.append("b.md")))
    batch.add(PendingWrite(write=_write(store, "c.md", "gamma").write,
                           done=lambda r: done.append("c"), stale=lambda: None))
    batch.finish()
    assert handed_back == ["b.md"] and done == ["c"]
    assert _paths(store) == ["a.md", "c.md"]
    assert store.query("select count(*) from chunks where path = 'b.md'")[0][0] == 0
    store.close()


def test_a_batch_commits_when_its_oldest_file_waited_long_enough(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite")
    now = [0.0]
    batch = WriteBatch(store, max_age_s=0.5, clock=lambda: now[0])
    batch.add(_write(store, "a.md", "alpha"))
    now[0] = 0.4
    batch.add(_write(store, "b.md", "beta"))
    assert batch.commits == 0
    now[0] = 0.6
    batch.add(_write(store, "c.md", "gamma"))
    assert batch.commits == 1 and len(_paths(store)) == 3
    store.close()


def test_an_error_other_than_a_stale_read_writes_nothing_of_the_batch(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite")

    def broken(conn: object) -> object:
        raise RuntimeError("disk on fire")

    batch = WriteBatch(store)
    batch.add(_write(store, "a.md", "alpha"))
    batch.add(PendingWrite(write=broken, done=lambda r: None, stale=lambda: None))
    with pytest.raises(RuntimeError):
        batch.finish()
    assert _paths(store) == []
    store.close()


class WritesWhileEmbedding(EmbeddingProvider):
    """While embedding each file, another connection writes to the same index."""

    id = "probe"
    model = "probe-8"
    max_input_tokens = 10_000

    def __init__(self, index: Path) -> None:
        super().__init__(dims=8)
        self.provider_key = provider_key_for(self.id)
        self.index = index
        self.outcomes: list[str] = []

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self.index.exists():
            other = Store(self.index, busy_timeout_ms=0)  # no waiting: a held lock fails at once
            try:
                other.set_meta({"probe": str(len(self.outcomes))})
                self.outcomes.append("written")
            except StoreError as exc:  # the lock held by the sync
                self.outcomes.append(f"blocked: {exc}")
            finally:
                other.close()
        rng = np.random.default_rng(len(texts))
        return rng.standard_normal((len(texts), 8)).astype(np.float32) + 0.1


def test_no_write_lock_is_held_while_a_file_is_embedded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 9):
        (ws / "memory" / f"2026-02-0{day}.md").write_text(f"- note {day} about otters\n")
    index = tmp_path / "index.sqlite"
    provider = WritesWhileEmbedding(index)
    with MemoryIndex.open(ws, index_path=index, embedder=provider) as memory:
        report = memory.sync()
        assert report.indexed == 8
    assert len(provider.outcomes) >= 7 and set(provider.outcomes) == {"written"}


def test_concurrent_writer_sees_whole_files_only(tmp_path: Path) -> None:
    """A reader polling during a bulk sync sees, per file, all of its rows or none."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day in range(1, 29):
        lines = "".join(f"- day {day} line {i} about badgers and " + "words " * 40 + "\n"
                        for i in range(30))
        (ws / "memory" / f"2026-02-{day:02d}.md").write_text(lines)
    index = tmp_path / "index.sqlite"
    seen: list[str] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set() and index.exists():
            reader = Store(index)
            try:
                rows = reader.query("select f.path, f.chunks, count(c.rowid) from files f "
                                    "left join chunks c on c.path = f.path group by f.path")
                seen.extend(f"{p}:{n}!={m}" for p, n, m in rows if n != m)
            finally:
                reader.close()

    with MemoryIndex.open(ws, index_path=index, embedding={"provider": "none"}) as memory:
        assert memory.store.path.exists()  # before the poller starts
        thread = threading.Thread(target=poll)
        thread.start()
        try:
            assert memory.sync().indexed == 28
        finally:
            stop.set()
            thread.join()
    assert seen == []
