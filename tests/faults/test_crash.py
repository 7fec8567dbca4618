"""A sync SIGKILLed at any point leaves whole files, and the next sync repairs the index.

Each test indexes version 1 of a workspace cleanly, changes it (edits, a new file, a deleted
file, a rename), then runs the sync in a child process that kills itself at one point. While
the child is stopped at that point, this process (another SQLite connection in another
process) reads the live index; after the kill it reads it again. Each time every file must
hold exactly its old rows or exactly its new rows. A normal sync must then bring the index
to exactly the state of a fresh full index of the same files built at another path.
"""

from __future__ import annotations

import functools
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

from faults.embedders import HashingEmbedder
from faults.indexstate import IndexState, fresh_state, read_state
from faults.procs import run_child, start_child
from faults.workspaces import SMALL_CHUNKS, write_note, write_workspace
from openclaw_memory import MemoryIndex
from openclaw_memory.embeddings.base import EmbeddingProvider


def _embedder(name: str) -> EmbeddingProvider | None:
    if name == "hashing":
        return HashingEmbedder()
    return _local() if name == "local" else None


@functools.cache
def _local() -> EmbeddingProvider:
    """One loaded model for the whole module: loading it costs more than this test's embeds."""
    from openclaw_memory.embeddings.local import LocalProvider

    return LocalProvider()


def _open_kwargs(embedder: str, backend: str, **settings: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {**SMALL_CHUNKS, "store": {"vector_backend": backend}, **settings}
    if embedder == "none":
        kwargs["embedding"] = {"provider": "none"}
    kwargs["embedder"] = _embedder(embedder)
    return kwargs


def _index(ws: Path, index: Path, kwargs: dict[str, Any]) -> IndexState:
    with MemoryIndex.open(ws, index_path=index, **kwargs) as memory:
        memory.sync()
    return read_state(index)


def _change(ws: Path) -> None:
    """Edits, an addition, a deletion and a rename: every kind of per-file transaction."""
    write_note(ws, "MEMORY.md", 2, lines=14)
    write_note(ws, "memory/2026-02-01.md", 2, lines=6)
    write_note(ws, "memory/2026-02-04.md", 2, lines=20)
    write_note(ws, "memory/new/added.md", 2)
    (ws / "memory" / "2026-02-02.md").unlink()
    (ws / "memory" / "topics" / "t3.md").rename(ws / "memory" / "renamed.md")


def _assert_whole_files(seen: IndexState, old: IndexState, new: IndexState) -> None:
    """Every file has all of its old rows or all of its new rows, never a mix or a part."""
    for path in set(seen.chunks) | set(old.chunks) | set(new.chunks):
        rows = seen.chunks.get(path)
        assert rows in (old.chunks.get(path), new.chunks.get(path)), f"{path} is half-written"
        row = seen.files.get(path)
        assert row is None or row[1] in {r[1] for r in (old.files.get(path), new.files.get(path))
                                         if r is not None}, path


def _crash_and_repair(tmp_path: Path, kill: dict[str, Any], *, embedder: str = "hashing",
                      backend: str = "auto", files: int = 8, lines: int = 12) -> dict[str, Any]:
    ws, live = tmp_path / "ws", tmp_path / "live.sqlite"
    write_workspace(ws, files, lines=lines)
    kwargs = _open_kwargs(embedder, backend)
    old = _index(ws, live, kwargs)
    _change(ws)
    new = fresh_state(ws, tmp_path / "fresh.sqlite", **_open_kwargs(embedder, backend))
    assert old.chunks != new.chunks
    spec = {"workspace": ws, "index": live, "embedder": embedder, "kill": kill,
            "settings": {**SMALL_CHUNKS, "store": {"vector_backend": backend}}}
    views: list[IndexState] = []
    result = run_child(spec, while_paused=lambda _info: views.append(read_state(live)))
    assert result.killed, f"the child was not killed at {kill}: rc={result.returncode}\n{result.stderr}"
    after_kill = read_state(live)
    for view in (*views, after_kill):
        _assert_whole_files(view, old, new)
    with MemoryIndex.open(ws, index_path=live, **kwargs) as memory:
        memory.sync()
    assert read_state(live) == new
    return result.paused or {}


def test_kill_between_files_then_sync_equals_a_fresh_index(tmp_path: Path,
                                                           vector_backend: str) -> None:
    _crash_and_repair(tmp_path, {"at": "progress", "n": 3}, backend=vector_backend)


def test_kill_during_embedding_with_the_real_local_model(tmp_path: Path) -> None:
    info = _crash_and_repair(tmp_path, {"at": "embed", "n": 2}, embedder="local", files=4, lines=4)
    assert info["texts"] >= 1


def test_kills_inside_write_transactions_at_successive_inserts(tmp_path: Path) -> None:
    """Three kills in a row, each mid-file; the index between them is whole files only."""
    ws, live = tmp_path / "ws", tmp_path / "live.sqlite"
    write_workspace(ws, 8)
    kwargs = _open_kwargs("hashing", "auto")
    before = _index(ws, live, kwargs)
    _change(ws)
    new = fresh_state(ws, tmp_path / "fresh.sqlite", **_open_kwargs("hashing", "auto"))
    spec = {"workspace": ws, "index": live, "embedder": "hashing", "settings": SMALL_CHUNKS}
    for n in (1, 7, 23):
        kill = {"at": "sql", "match": "insert into chunks_fts", "n": n}
        views: list[IndexState] = []
        result = run_child({**spec, "kill": kill},
                           while_paused=lambda _i, v=views: v.append(read_state(live)))
        assert result.killed and result.paused is not None, result.stderr
        assert result.paused["sql"].lower().startswith("insert into chunks_fts")
        for view in (*views, read_state(live)):
            _assert_whole_files(view, before, new)
        assert read_state(live) != new  # the kill really left work for the next sync
        before = read_state(live)
    with MemoryIndex.open(ws, index_path=live, **kwargs) as memory:
        memory.sync()
    assert read_state(live) == new


def test_kill_as_a_file_transaction_commits(tmp_path: Path) -> None:
    _crash_and_repair(tmp_path, {"at": "sql", "match": "commit", "n": 3})


def test_kill_after_a_number_of_sqlite_vm_steps_inside_a_transaction(tmp_path: Path) -> None:
    _crash_and_repair(tmp_path, {"at": "vm", "n": 60})


def test_kill_during_a_keyword_only_sync(tmp_path: Path) -> None:
    _crash_and_repair(tmp_path, {"at": "sql", "match": "delete from chunks", "n": 2},
                      embedder="none")


def test_kill_halfway_through_the_rebuild_swap_leaves_the_old_index(tmp_path: Path) -> None:
    """A settings change rebuilds into a temp file and copies it over the live index; killed
    halfway through that copy, the live index is still exactly the old one (readers during
    the copy see it too), and the next sync rebuilds it to the fresh state."""
    ws, live = tmp_path / "ws", tmp_path / "live.sqlite"
    write_workspace(ws, 8)
    old = _index(ws, live, _open_kwargs("hashing", "auto"))
    _change(ws)
    bigger = {"chunking": {"tokens": 64, "overlap": 8}}
    kwargs = {**_open_kwargs("hashing", "auto"), **bigger}
    new = fresh_state(ws, tmp_path / "fresh.sqlite", **kwargs)
    spec = {"workspace": ws, "index": live, "embedder": "hashing", "settings": bigger,
            "kill": {"at": "backup"}}
    views: list[IndexState] = []
    result = run_child(spec, while_paused=lambda _info: views.append(read_state(live)))
    assert result.killed and result.paused is not None, result.stderr
    assert 0 < result.paused["copied"] < result.paused["total"]
    assert result.paused["wal_bytes"] > 0  # copied pages were really written, uncommitted
    assert views == [old]
    assert read_state(live) == old
    with MemoryIndex.open(ws, index_path=live, **kwargs) as memory:
        report = memory.sync()
        assert report.full_rebuild and "chunk_tokens" in (report.rebuild_reason or "")
    assert read_state(live) == new
    assert not list(tmp_path.glob("live.sqlite.rebuild-*")), "temp files of the killed rebuild"


def test_kills_at_random_moments_never_leave_an_index_the_next_sync_cannot_repair(
        tmp_path: Path) -> None:
    rng = random.Random(20261123)
    ws, live = tmp_path / "ws", tmp_path / "live.sqlite"
    rels = write_workspace(ws, 30)
    kwargs = _open_kwargs("hashing", "auto")
    spec = {"workspace": ws, "index": live, "embedder": "hashing", "settings": SMALL_CHUNKS,
            "announce": True}
    for round_ in range(4):
        for rel in rng.sample(rels, 8):
            write_note(ws, rel, round_ + 2, lines=rng.randint(3, 20))
        old = read_state(live) if live.exists() else None
        new = fresh_state(ws, tmp_path / f"fresh{round_}.sqlite", **_open_kwargs("hashing", "auto"))
        proc = start_child(spec)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "STARTED"
        time.sleep(rng.uniform(0.0, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        seen = read_state(live)  # consistent: integrity, FTS and vec0 mirror chunks
        if old is not None:
            _assert_whole_files(seen, old, new)
    with MemoryIndex.open(ws, index_path=live, **kwargs) as memory:
        memory.sync()
    assert read_state(live) == new
