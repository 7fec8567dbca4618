"""A workspace with no memory files says what was looked for, where, and where the notes are."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from cli_entry import ENTRY_POINT

from openclaw_memory import MemoryIndex
from openclaw_memory.files.hints import empty_workspace_hint


def cli(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ENTRY_POINT, "--provider", "none", "--workspace", str(workspace), *args],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))


def test_an_empty_folder_says_what_was_looked_for_and_where(tmp_path: Path) -> None:
    hint = empty_workspace_hint(tmp_path)
    assert f"no memory files in {tmp_path}" in hint
    assert "MEMORY.md (or memory.md) and memory/**/*.md" in hint
    assert "holds no Markdown at all" in hint


def test_notes_in_a_capitalised_memory_folder_are_pointed_at(tmp_path: Path) -> None:
    (tmp_path / "Memory").mkdir()
    (tmp_path / "Memory" / "2026-01-02.md").write_text("# day\n", encoding="utf-8")
    (tmp_path / "Memory.md").write_text("facts\n", encoding="utf-8")
    hint = empty_workspace_hint(tmp_path)
    assert "found Memory/ holding 1 .md file(s): names are case-sensitive, rename it to memory/" in hint
    assert "found Memory.md: rename it to MEMORY.md" in hint


def test_notes_at_the_folder_root_and_a_workspace_one_level_down_are_named(tmp_path: Path) -> None:
    for name in ("a.md", "b.md", "c.md", "d.md"):
        (tmp_path / name).write_text("x\n", encoding="utf-8")
    (tmp_path / "agent" / "memory").mkdir(parents=True)
    hint = empty_workspace_hint(tmp_path)
    assert "found 4 other .md file(s) at the folder root (a.md, b.md, c.md, ...)" in hint
    assert f"did you mean --workspace {tmp_path / 'agent'}?" in hint


def test_index_search_and_status_all_carry_the_hint_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "Memory").mkdir()
    (tmp_path / "Memory" / "notes.md").write_text("postgres for billing\n", encoding="utf-8")
    indexed = cli(tmp_path, "index")
    assert indexed.returncode == 0
    assert "warning: no memory files in" in indexed.stdout and "rename it to memory/" in indexed.stdout
    searched = cli(tmp_path, "search", "billing", "--json")
    notes = json.loads(searched.stdout)["notes"]
    assert any("rename it to memory/" in note for note in notes)
    assert not any(note.startswith("nothing relevant") for note in notes)
    status = cli(tmp_path, "status")
    assert "note: no memory files in" in status.stdout


def test_a_workspace_with_notes_gets_no_hint(workspace: Path) -> None:
    with MemoryIndex.open(workspace, embedding={"provider": "none"}) as memory:
        report = memory.sync()
        assert not any("no memory files" in w for w in report.warnings)
        response = memory.search("zzzz unrelated")
        assert not any("no memory files" in n for n in response.notes)
        assert not any("no memory files" in n for n in memory.status()["notes"])
