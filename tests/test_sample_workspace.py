"""``sample_workspace``: the bundled notes copied where a user can try things, never mixed
into a folder that holds something else, and never overwriting what was written there."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import WorkspaceError, sample_workspace


def test_a_new_folder_gets_the_bundled_notes(tmp_path: Path) -> None:
    made = sample_workspace(tmp_path / "agent-workspace")
    assert (made / "MEMORY.md").is_file() and sorted(p.name for p in (made / "memory").iterdir())


def test_a_second_call_keeps_what_was_written_there(tmp_path: Path) -> None:
    made = sample_workspace(tmp_path / "ws")
    (made / "MEMORY.md").write_text("- mine\n", encoding="utf-8")
    assert sample_workspace(tmp_path / "ws") == made
    assert (made / "MEMORY.md").read_text(encoding="utf-8") == "- mine\n"


def test_a_folder_holding_something_else_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "main.py").write_text("print(1)\n", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="not a memory workspace"):
        sample_workspace(tmp_path / "project")
    assert [p.name for p in (tmp_path / "project").iterdir()] == ["main.py"]
