"""Hard links do not pass the path gate: a file with more than one name (which may live outside
the workspace) is neither read, written nor indexed, through the API, the CLI and the tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.cli.app import main
from openclaw_memory.errors import PathRefusedError
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langchain import memory_tools

SECRET = "- The outside secret is kumquat-7731.\n"


@pytest.fixture()
def linked(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "plain.md").write_text("- A plain note about billing.\n")
    outside = tmp_path / "outside.md"
    outside.write_text(SECRET)
    os.link(outside, ws / "memory" / "linked.md")
    return ws, outside


def test_a_hard_link_is_not_read_indexed_or_searchable(linked: tuple[Path, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    ws, _ = linked
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"}) as memory:
        memory.sync()
        assert memory.search("kumquat").results == ()
        with pytest.raises(PathRefusedError):
            memory.get("memory/linked.md")
        skipped = memory.status()["skipped"]
        assert any(s["path"] == "memory/linked.md" and "hard link" in s["reason"] for s in skipped)
        get = memory_tools(memory)[1]
        message = get.invoke({"type": "tool_call", "id": "c", "name": "memory_get",
                              "args": {"path": "memory/linked.md"}})
        assert message.status == "error" and "kumquat" not in message.content
    code = main(["--workspace", str(ws), "--index", str(tmp_path / "c.sqlite"), "--provider", "none",
                 "get", "memory/linked.md"])
    out = capsys.readouterr()
    assert code == 3 and "kumquat" not in out.out + out.err


def test_memory_md_as_a_hard_link_is_not_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.md"
    outside.write_text(SECRET)
    os.link(outside, ws / "MEMORY.md")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"}) as memory:
        memory.sync()
        assert memory.search("kumquat").results == ()
        with pytest.raises(PathRefusedError):
            memory.get("MEMORY.md")


def test_write_refuses_a_daily_file_that_is_a_hard_link(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_text(SECRET)
    os.link(outside, ws / daily_note_path("UTC"))
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"},
                          timezone="UTC") as memory:
        with pytest.raises(PathRefusedError):
            memory.write("A note that must not land outside.")
        write = memory_tools(memory)[2]
        message = write.invoke({"type": "tool_call", "id": "c", "name": "memory_write",
                                "args": {"content": "Another note."}})
        assert message.status == "error"
    assert outside.read_text() == SECRET
