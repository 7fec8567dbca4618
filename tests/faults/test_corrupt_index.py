"""A corrupt, truncated, foreign or newer-schema index is set aside and rebuilt from Markdown."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fs_snapshot import snapshot

from faults.indexstate import fresh_state, read_state
from faults.workspaces import write_workspace
from openclaw_memory import MemoryIndex
from openclaw_memory.errors import StoreError
from openclaw_memory.store import SCHEMA_VERSION
from openclaw_memory.store.schema import APPLICATION_ID

NONE = {"embedding": {"provider": "none"}}


def _garbage(index: Path) -> None:
    index.write_bytes(b"\x00\xffnot an index" * 4096)


def _truncated(index: Path) -> None:
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 3])


def _torn_header(index: Path) -> None:
    data = bytearray(index.read_bytes())
    data[0:16] = b"SQLite format 2\x00"  # what a torn write of page 1 looks like
    index.write_bytes(bytes(data))


def _foreign(index: Path) -> None:
    index.unlink()
    conn = sqlite3.connect(index)
    conn.execute("create table customers(id integer primary key, name text)")
    conn.execute("insert into customers(name) values ('ada')")
    conn.commit()
    conn.close()


def _newer_schema(index: Path) -> None:
    conn = sqlite3.connect(index)
    conn.execute(f"pragma user_version = {SCHEMA_VERSION + 1}")
    conn.close()


def _scrambled_pages(index: Path) -> None:
    """Valid header and schema page, garbage in the middle: only found when read."""
    data = bytearray(index.read_bytes())
    page = 4096
    for start in range(page * 2, len(data) - page, page * 2):
        data[start:start + page] = b"\xa5" * page
    index.write_bytes(bytes(data))


@pytest.mark.parametrize(("damage", "where"), [
    (_garbage, "state"), (_truncated, "explicit"), (_torn_header, "explicit"),
    (_newer_schema, "explicit"), (_scrambled_pages, "explicit"), (_scrambled_pages, "state")])
def test_damaged_index_is_set_aside_and_rebuilt_from_the_markdown(tmp_path: Path, damage,  # type: ignore[no-untyped-def]
                                                                  where: str) -> None:
    # Ours: the header still carries our application id, or the file is in our state folder.
    ws = tmp_path / "ws"
    index = (tmp_path / "state" / "indexes" if where == "state" else tmp_path) / "index.sqlite"
    write_workspace(ws, 12, lines=30)
    with MemoryIndex.open(ws, index_path=index, **NONE) as memory:
        memory.sync()
    expected = fresh_state(ws, tmp_path / "fresh.sqlite", **NONE)
    damage(index)
    damaged = index.read_bytes()
    markdown = snapshot(ws)
    with MemoryIndex.open(ws, index_path=index, **NONE) as memory:
        memory.sync()
        notes = memory.status()["notes"]
        assert memory.search("frankfurt invoice").results
    assert len(notes) == 1 and "moved it to" in notes[0] and "rebuilt" in notes[0], notes
    aside = list(index.parent.glob("index.sqlite.corrupt-*"))
    assert [p.name for p in aside if not p.name.endswith(("-wal", "-shm"))], aside
    assert any(p.read_bytes() == damaged for p in aside)  # the damaged file is kept, untouched
    assert read_state(index) == expected
    assert snapshot(ws) == markdown


@pytest.mark.parametrize("damage", [_garbage, _foreign])
def test_a_file_this_library_did_not_create_is_refused_and_left_untouched(
        tmp_path: Path, damage) -> None:  # type: ignore[no-untyped-def]
    ws, index = tmp_path / "ws", tmp_path / "index.sqlite"
    write_workspace(ws, 3)
    with MemoryIndex.open(ws, index_path=index, **NONE) as memory:
        memory.sync()
    damage(index)
    before = index.read_bytes()
    with pytest.raises(StoreError, match="not an openclaw-memory index"):
        MemoryIndex.open(ws, index_path=index, **NONE)
    assert index.read_bytes() == before and not list(tmp_path.glob("index.sqlite.corrupt-*"))


@pytest.mark.parametrize("name", ["MEMORY.md", "memory.md", "memory/index.sqlite", "notes.md"])
def test_an_index_path_among_the_memory_sources_is_refused(tmp_path: Path, name: str) -> None:
    from openclaw_memory.errors import OpenClawMemoryError

    ws = tmp_path / "ws"
    write_workspace(ws, 3)
    before = snapshot(ws)
    with pytest.raises(OpenClawMemoryError, match="memory"):
        MemoryIndex.open(ws, index_path=ws / name, **NONE)
    assert snapshot(ws) == before


def test_a_mistyped_index_pointing_at_a_text_file_is_refused_by_the_cli(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from openclaw_memory.cli.app import main

    ws = tmp_path / "ws"
    write_workspace(ws, 3)
    notes = tmp_path / "notes.txt"
    notes.write_text("my shopping list\n")
    code = main(["--workspace", str(ws), "--index", str(notes), "--provider", "none", "index"])
    err = capsys.readouterr().err
    assert code == 3 and "not an openclaw-memory index" in err
    assert notes.read_text() == "my shopping list\n" and not list(tmp_path.glob("notes.txt.*"))


def test_set_aside_message_reaches_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from openclaw_memory.cli.app import main

    ws, index = tmp_path / "ws", tmp_path / "state" / "indexes" / "index.sqlite"
    index.parent.mkdir(parents=True)
    write_workspace(ws, 3)
    _garbage(index)
    code = main(["--workspace", str(ws), "--index", str(index), "--provider", "none", "status"])
    out = capsys.readouterr()
    assert code == 0
    assert "corrupt" in (out.out + out.err) and "rebuilt" in (out.out + out.err)


def test_locked_index_is_not_mistaken_for_a_corrupt_one(tmp_path: Path) -> None:
    ws, index = tmp_path / "ws", tmp_path / "index.sqlite"
    write_workspace(ws, 3)
    with MemoryIndex.open(ws, index_path=index, **NONE) as memory:
        memory.sync()
    # Another process holds the write lock (in-process locks would be invisible: POSIX
    # record locks are per process).
    blocker = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(index)!r}, isolation_level=None)\n"
         "c.execute('begin exclusive'); print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert blocker.stdout is not None and blocker.stdout.readline().strip() == "locked"
        with MemoryIndex.open(ws, index_path=index, store={"busy_timeout_ms": 200},
                              **NONE) as memory:
            result = memory.write("a note while another process holds the lock")
        # The note is saved (the file is the truth); the index catches up at the next sync.
        assert result.written and result.warning and "locked" in result.warning
    finally:
        blocker.communicate("")
    assert not list(tmp_path.glob("index.sqlite.corrupt-*"))
    assert read_state(index).files  # untouched and still ours


def test_application_id_marks_our_index(tmp_path: Path) -> None:
    ws, index = tmp_path / "ws", tmp_path / "index.sqlite"
    write_workspace(ws, 2)
    with MemoryIndex.open(ws, index_path=index, **NONE) as memory:
        memory.sync()
    conn = sqlite3.connect(index)
    assert conn.execute("pragma application_id").fetchone()[0] == APPLICATION_ID
    conn.close()
