"""An edit of MEMORY.md and its history entry are one unit: a history folder that cannot be
written stops the edit before the file changes; a process killed at any step leaves nothing
the next edit does not settle (an applied edit gets its entry, an unapplied one none, a killed
swap's temp file is removed); history stays bounded (the reason is capped, a day's file rolls
over past its size, an edit never reads a history file whole)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import WorkspaceError
from openclaw_memory.files import curation
from tests.privileges import CAN_TEST_PERMISSIONS, unprivileged_copy

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC"}
CURATED = "# Facts\n\n- Ada lives in Paris.\n- Bo likes tea.\n- Cy plays chess.\n"


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(CURATED)
    return root


def _history(ws: Path) -> str:
    folder = ws / "memory-history"
    return "".join(p.read_text() for p in sorted(folder.glob("*.md"))) if folder.is_dir() else ""


def _edit_as(ws: Path) -> str:
    with MemoryIndex.open(ws, index_path=ws / "n.sqlite", **OPTS) as memory:
        try:
            memory.edit("MEMORY.md#L3", "- Ada lives in Paris.", "- Ada lives in Lyon.")
        except WorkspaceError as exc:
            return f"refused: {exc}"
    return "applied"


@pytest.mark.skipif(not CAN_TEST_PERMISSIONS, reason="root without an unprivileged user")
def test_a_history_folder_that_cannot_be_written_stops_the_edit_before_the_file_changes(
        ws: Path) -> None:
    (ws / "memory-history").mkdir()
    with unprivileged_copy(ws) as (copy, run):
        (copy / "memory-history").chmod(0o500)
        answer = run(lambda: _edit_as(copy))
        assert answer.startswith("refused:") and "memory-history" in answer
        assert (copy / "MEMORY.md").read_text() == CURATED
        assert not [p for p in (copy / "memory-history").iterdir()]


_KILLED = textwrap.dedent("""
    import os, signal, sys
    from openclaw_memory import MemoryIndex
    from openclaw_memory.files import atomic, curation
    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    step = sys.argv[2]
    if step == "before-swap":
        curation.swap_in = die
    elif step == "in-swap":
        atomic.os.replace = die
    else:
        curation._append_entry = die
    with MemoryIndex.open(sys.argv[1], index_path=sys.argv[1] + ".sqlite",
                          embedding={"provider": "none"}, timezone="UTC") as memory:
        memory.edit("MEMORY.md#L3", "- Ada lives in Paris.", "- Ada lives in Lyon.")
""")


def _killed_at(ws: Path, step: str) -> None:
    done = subprocess.run([sys.executable, "-c", _KILLED, str(ws), step], capture_output=True,
                          timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()


@pytest.mark.parametrize(("step", "applied"), [("before-swap", False), ("in-swap", False),
                                               ("after-swap", True)])
def test_a_process_killed_mid_edit_leaves_nothing_the_next_edit_does_not_settle(
        ws: Path, step: str, applied: bool) -> None:
    _killed_at(ws, step)
    assert ("Lyon" in (ws / "MEMORY.md").read_text()) is applied
    assert "Ada lives in" not in _history(ws)  # no entry yet, either way
    with MemoryIndex.open(ws, index_path=ws.parent / "m.sqlite", **OPTS) as memory:
        result = memory.edit("MEMORY.md#L5", "- Cy plays chess.", "- Cy plays go.")
        assert result.applied and result.history
    history = _history(ws)
    assert ("> - Ada lives in Paris." in history) is applied  # an applied edit got its entry
    assert history.count("## ") == 1 + applied and "> - Cy plays chess." in history
    assert not [n for n in os.listdir(ws / "memory-history") if n.startswith(".pending-")]
    assert not [n for n in os.listdir(ws) if n.endswith(".tmp")]


def test_a_sync_settles_what_a_killed_edit_left_without_another_edit(ws: Path) -> None:
    _killed_at(ws, "after-swap")
    assert "Ada lives in" not in _history(ws)
    with MemoryIndex.open(ws, index_path=ws.parent / "s.sqlite", **OPTS) as memory:
        memory.sync()
    assert "> - Ada lives in Paris." in _history(ws) and _history(ws).count("## ") == 1
    assert not [n for n in os.listdir(ws / "memory-history") if n.startswith(".pending-")]


def test_a_long_reason_is_capped_and_a_full_days_history_rolls_over(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(curation, "HISTORY_FILE_BYTES", 1_000)
    with MemoryIndex.open(ws, index_path=ws.parent / "r.sqlite", **OPTS) as memory:
        first = memory.edit("MEMORY.md#L3", "- Ada lives in Paris.", "- Ada lives in Lyon.",
                            reason="x" * 5_000_000)
        second = memory.edit("MEMORY.md#L4", "- Bo likes tea.", "- Bo likes coffee.")
    assert first.history and second.history
    first_file, second_file = first.history.split("#")[0], second.history.split("#")[0]
    assert first_file != second_file and second_file.endswith("-2.md")
    text = (ws / first_file).read_text()
    assert len(text) < 3_000 and ("x" * curation.MAX_REASON + "…") in text
    assert memory.get(second.history).text.startswith("## ")
