"""Small findings of the second attack run: over-long names, ranking of incremental indexes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import PathRefusedError
from openclaw_memory.langchain import memory_tools

NONE = {"embedding": {"provider": "none"}}


def test_an_over_long_file_name_is_a_refused_path_not_an_outage(workspace: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        with pytest.raises(PathRefusedError):
            memory.get("memory/" + "a" * 300 + ".md")
        message = memory_tools(memory)[1].invoke({"type": "tool_call", "id": "c", "name": "memory_get",
                                                  "args": {"path": "memory/" + "b" * 300 + ".md"}})
        assert message.status == "error" and "unavailable" not in message.content


def test_an_incrementally_updated_index_ranks_exactly_like_a_fresh_build(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    same = "- The billing export runs nightly at two.\n"
    names = [f"memory/2026-03-{d:02d}.md" for d in range(1, 13)]
    incremental = tmp_path / "inc.sqlite"
    with MemoryIndex.open(ws, index_path=incremental, **NONE) as memory:
        # Identical notes (tied scores) written, deleted and rewritten in a scrambled order.
        for name in reversed(names):
            (ws / name).write_text(same + f"- Note of {name}.\n")
            memory.sync()
        for name in names[::3]:
            (ws / name).unlink()
            memory.sync()
        for name in names[::3]:
            (ws / name).write_text(same + f"- Note of {name}.\n")
            memory.sync()
        queries = ["billing export", "nightly", "note", "two", "export nightly billing"]
        got = [[(h.path, h.start_line) for h in memory.search(q, max_results=12).results]
               for q in queries]
    shutil.copytree(ws, tmp_path / "ws2")
    with MemoryIndex.open(tmp_path / "ws2", index_path=tmp_path / "fresh.sqlite", **NONE) as fresh:
        want = [[(h.path, h.start_line) for h in fresh.search(q, max_results=12).results]
                for q in queries]
    assert got == want


def test_a_binary_file_named_md_is_skipped_with_a_reason(tmp_path: Path) -> None:
    import random

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    rng = random.Random(7)
    (ws / "memory" / "photo.md").write_bytes(bytes(rng.randrange(256) for _ in range(20_000)))
    (ws / "memory" / "stray-nul.md").write_bytes(b"- A text note with one \x00 stray byte.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        report = memory.sync()
        assert {s.path: s.reason for s in report.skipped} == {"memory/photo.md": "binary content, not text"}
        assert memory.search("stray").results  # text with a stray NUL is still indexed
        assert memory.store.query("select count(*) from chunks where path = 'memory/photo.md'")[0][0] == 0


def test_a_note_that_became_binary_leaves_the_index_as_a_fresh_build_would(tmp_path: Path) -> None:
    # Found by tests/faults/test_property_sync.py: "é\n" edited to b"q\xa9\n" (same size) kept
    # the old rows, while a fresh index skips it; a read error still keeps them (transient).
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    note = ws / "memory" / "2026-03-01.md"
    note.write_text("- The vendor call moved to Friday.\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        memory.sync()
        note.write_bytes(bytes(range(128, 256)) * 4)
        report = memory.sync()
        assert [(s.path, s.reason) for s in report.skipped] == [
            ("memory/2026-03-01.md", "binary content, not text")]
        assert report.deleted == 1 and not memory.search("vendor call").results
    assert note.read_bytes() == bytes(range(128, 256)) * 4  # the file itself is untouched


def test_status_keeps_content_warnings_while_the_file_is_indexed_with_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    bad = ws / "memory" / "latin1.md"
    bad.write_bytes("- Caf\xe9 notes in Latin-1.\n".encode("latin-1"))
    (ws / "memory" / "nul.md").write_bytes(b"- one \x00 byte\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        memory.sync()
        (ws / "memory" / "other.md").write_text("- unrelated\n")
        memory.sync()  # the next sync reads neither file again
        warnings = memory.status()["warnings"]
        assert any("latin1.md: invalid UTF-8" in w for w in warnings)
        assert any("nul.md: NUL bytes" in w for w in warnings)
        bad.write_text("- Café notes, fixed.\n", encoding="utf-8")
        memory.sync()
        assert not any("latin1.md" in w for w in memory.status()["warnings"])


def _bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/self/io")
def test_get_of_one_line_does_not_read_a_huge_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    big = ws / "memory" / "big.md"
    with big.open("w") as handle:
        for i in range(1, 400_001):
            handle.write(f"- line {i} of a very large log that someone pasted into memory\n")
    assert big.stat().st_size > 20_000_000
    # Within the size the index accepts (larger files are refused: test_bounded_get.py).
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE,
                          sync={"on_search": False, "max_file_bytes": 64 * 1024 * 1024}) as memory:
        before = _bytes_read()
        note = memory.get("memory/big.md#L2")
        read = _bytes_read() - before
    assert note.text == "- line 2 of a very large log that someone pasted into memory"
    assert note.total_lines == -1  # not read to its end
    assert read < 1_000_000, read


def test_an_empty_workspace_name_is_refused_not_the_shared_default(pg_dsn: str) -> None:
    from openclaw_memory.errors import WorkspaceError
    from openclaw_memory.postgres import PostgresMemory

    with pytest.raises(WorkspaceError):
        PostgresMemory.open(pg_dsn, workspace="", embedding={"provider": "none"})


def test_leftovers_of_a_killed_rebuild_are_removed_by_the_next_ordinary_sync(
        workspace: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    index = tmp_path / "i.sqlite"
    with MemoryIndex.open(workspace, index_path=index, **NONE) as memory:
        memory.sync()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs, as a killed `index --full` leaves
    names = [f"i.sqlite.rebuild-{dead.pid}-0123abcd{suffix}" for suffix in ("", "-wal", "-shm")]
    for name in names:
        (tmp_path / name).write_bytes(b"x" * 100)
    with MemoryIndex.open(workspace, index_path=index, **NONE) as memory:
        report = memory.sync()  # incremental: nothing changed
    assert not any((tmp_path / n).exists() for n in names)
    assert any("leftover" in w for w in report.warnings)


def test_a_reused_pid_does_not_keep_a_dead_rebuilds_leftover(workspace: Path, tmp_path: Path) -> None:
    import os

    from openclaw_memory.indexing.rebuild_files import remove_stale_rebuilds

    index = tmp_path / "i.sqlite"
    leftover = tmp_path / "i.sqlite.rebuild-1-0123abcd"  # pid 1 runs, but since long before
    leftover.write_bytes(b"x")
    os.utime(leftover, (0, 0))  # written in 1970, before pid 1 started
    assert remove_stale_rebuilds(index) == [leftover.name]


def test_a_note_is_saved_and_exit_0_when_the_index_cannot_be_written(
        workspace: Path, tmp_path: Path) -> None:
    import subprocess

    from cli_entry import ENTRY_POINT

    index = tmp_path / "i.sqlite"
    args = [ENTRY_POINT, "--workspace", str(workspace), "--index", str(index), "--provider",
            "none"]
    subprocess.run([*args, "index"], check=True, capture_output=True, timeout=60)
    holder = subprocess.Popen(  # another process holds the write lock past the busy timeout
        [sys_executable(), "-c", "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1]); "
         "c.execute('begin immediate'); print('locked', flush=True); time.sleep(30)",
         str(index)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        done = subprocess.run([*args, "write", "The kestrel survey moved to Friday."],
                              capture_output=True, text=True, timeout=120, check=False,
                              env={**__import__("os").environ,
                                   "OPENCLAW_MEMORY_STORE__BUSY_TIMEOUT_MS": "200"})
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 0, done.stderr
    assert "appended to" in done.stdout and "index could not be updated" in done.stderr
    daily = list((workspace / "memory").glob("20*.md"))
    assert any("kestrel survey" in p.read_text() for p in daily)


def sys_executable() -> str:
    import sys

    return sys.executable


def test_utf16_and_utf32_notes_with_a_byte_order_mark_are_indexed_and_read(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    text = "# Trip\n\nThe ferry to Lisbon leaves at nine.\nBring the blue suitcase.\n"
    for name, encoding in (("u16.md", "utf-16"), ("u32.md", "utf-32"), ("u16be.md", "utf-16-be")):
        data = text.encode(encoding)
        if encoding == "utf-16-be":
            data = b"\xfe\xff" + data
        (ws / "memory" / name).write_bytes(data)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        report = memory.sync()
        assert not report.skipped, report.skipped
        hits = memory.search("ferry Lisbon").results
        assert {h.path for h in hits} == {"memory/u16.md", "memory/u32.md", "memory/u16be.md"}
        for name in ("u16.md", "u32.md", "u16be.md"):
            assert memory.get(f"memory/{name}").text == text
            assert memory.get(f"memory/{name}#L3").text == "The ferry to Lisbon leaves at nine."


def test_a_workspace_whose_index_was_never_built_is_not_called_empty(
        workspace: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "never.sqlite", **NONE,
                          sync={"on_search": False}) as memory:
        assert (workspace / "MEMORY.md").exists()
        assert memory.workspace_is_empty() is False
        response = memory.search("billing database", )
        assert not any("no memory files" in n for n in response.notes)
