"""``get`` and ``memory_get`` are bounded in time, memory and output: a file the index would
skip is refused, not read; one long line is read in one linear pass; the text returned is
capped, marked truncated, and says which line to read on from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ContentError
from openclaw_memory.files.reading import NoteText, cap_note
from openclaw_memory.langchain import memory_tools

OPTS = {"embedding": {"provider": "none"}}


def _open(ws: Path, tmp_path: Path, **settings: object) -> MemoryIndex:
    return MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS, **settings)


def test_a_sparse_terabyte_file_is_refused_at_once(workspace: Path, tmp_path: Path) -> None:
    huge = workspace / "memory" / "huge.md"
    with huge.open("wb") as f:
        f.truncate(1 << 40)  # sparse: no disk used, 1 TiB of zeros to read
    with _open(workspace, tmp_path) as memory:
        with pytest.raises(ContentError, match="max_file_bytes"):
            memory.get("memory/huge.md")
        with pytest.raises(ContentError, match="max_file_bytes"):
            memory.get("memory/huge.md", from_line=2, lines=1)
        assert memory.sync().skipped  # the index refuses it too


def test_one_long_line_is_capped_marked_and_read_on(workspace: Path, tmp_path: Path) -> None:
    (workspace / "memory" / "long.md").write_text("x" * 3_000_000 + "\nsecond line\n")
    with _open(workspace, tmp_path, search={"get_max_chars": 1000}) as memory:
        note = memory.get("memory/long.md")
        assert len(note.text) == 1000 and note.truncated and note.line_cut
        assert note.next_line == 1 and "read on with from_line=1" in note.marker()
        rest = memory.get("memory/long.md", from_line=2, lines=5)
        assert rest.text == "second line" and not rest.truncated
        tool = {t.name: t for t in memory_tools(memory)}["memory_get"]
        out = tool.invoke({"type": "tool_call", "id": "c", "name": "memory_get",
                           "args": {"path": "memory/long.md"}})
        assert len(out.content) < 2000 and "truncated" in out.content


def test_reading_a_long_line_handles_each_character_once(workspace: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """One linear pass: the line-splitting step sees each character about once (it used to
    re-split everything read so far at every 64 KB block: the square of the line)."""
    from openclaw_memory.files import reading

    seen: list[int] = []
    split = reading.editor_lines_text

    def counting(text: str) -> str:
        seen.append(len(text))
        return split(text)

    monkeypatch.setattr(reading, "editor_lines_text", counting)
    size = 4_000_000
    (workspace / "memory" / "long.md").write_text("y" * size + "\nend\n")
    with _open(workspace, tmp_path, search={"get_max_chars": 100},
               sync={"max_file_bytes": 64 * 1024 * 1024}) as memory:
        assert memory.get("memory/long.md", from_line=2, lines=1).text == "end"
    assert sum(seen) <= size + 64 * 1024, sum(seen)  # quadratic was ~ size**2 / 128 KB


def test_whole_lines_are_kept_while_they_fit() -> None:
    note = NoteText("memory/a.md", "one\ntwo\nthree\nfour", 1, 4, 4)
    capped = cap_note(note, 9)
    assert capped.text == "one\ntwo" and capped.end_line == 2 and capped.next_line == 3
    assert not capped.line_cut
    assert cap_note(note, 100) is note


def test_postgres_get_is_capped_the_same_way(pg_dsn: str) -> None:
    from openclaw_memory.postgres import PostgresMemory

    with PostgresMemory.open(pg_dsn, workspace="cap", embedding={"provider": "none"},
                             search={"get_max_chars": 200}) as memory:
        for i in range(40):
            memory.write(f"Note number {i} about the kestrel migration plan.")
        path = memory.paths()[0]
        note = memory.get(path)
        assert note.truncated and len(note.text) <= 200 and note.next_line


def test_the_cli_prints_the_text_and_the_marker_apart(workspace: Path, tmp_path: Path) -> None:
    import subprocess

    from cli_entry import ENTRY_POINT

    (workspace / "memory" / "lines.md").write_text("".join(f"line {i}\n" for i in range(500)))
    done = subprocess.run([ENTRY_POINT, "--workspace", str(workspace), "--index",
                           str(tmp_path / "c.sqlite"), "--provider", "none", "get",
                           "memory/lines.md"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "OPENCLAW_MEMORY_SEARCH__GET_MAX_CHARS": "200"},
                          check=False)
    assert done.returncode == 0
    assert len(done.stdout) <= 201 and "truncated" in done.stderr
