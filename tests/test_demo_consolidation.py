"""The offline ``DemoChatModel`` answers consolidation turns with a proposal: the documented
snippets work without a key. It updates a curated line that a newer log line about the same
subject changes, adds a recorded decision, leaves everything else, keeps history, and a second
pass changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.langgraph import DemoChatModel, MemoryConsolidation
from openclaw_memory.langgraph.demo import demo_proposal

NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)


@pytest.fixture()
def memory(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Facts\n\n- Tomás is the on-call SRE this quarter.\n"
                                  "- Ada works at Acme.\n- 王芳住在上海，在银行上班。\n", encoding="utf-8")
    (ws / "memory" / "2026-11-24.md").write_text(
        "- Tomás is no longer the on-call SRE; Priya took over on-call.\n"
        "- Decided to move the standup to 10:00.\n- Lunch with Ada, she loves her new bike.\n"
        "- 王芳搬到杭州了，还在银行上班。\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"},
                          timezone="UTC") as opened:
        opened.sync()
        yield opened


def test_the_demo_model_proposes_updates_and_decisions_and_applies_them_with_history(
        memory: MemoryIndex) -> None:
    consolidation = MemoryConsolidation(memory, DemoChatModel(), clock=lambda: NOW)
    dry = consolidation.run(dry_run=True)
    assert dry.error is None
    assert "-- Tomás is the on-call SRE this quarter." in dry.diff
    assert "+- Tomás is no longer the on-call SRE; Priya took over on-call. (as of 2026-11-24)" in dry.diff
    assert "+- Decided to move the standup to 10:00. (as of 2026-11-24)" in dry.diff
    assert "-- 王芳住在上海，在银行上班。" in dry.diff
    assert "-- Ada" not in dry.diff  # a newer line naming Ada says nothing of where she works
    applied = consolidation.run()
    assert applied.error is None and len(applied.applied) == 3 and applied.history
    curated = (memory.workspace.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "this quarter" not in curated and "- Ada works at Acme." in curated
    history = "".join(p.read_text(encoding="utf-8")
                      for p in (memory.workspace.root / "memory-history").glob("*.md"))
    assert "Tomás is the on-call SRE this quarter." in history and "王芳住在上海" in history
    second = consolidation.run(dry_run=True)
    assert second.error is None and second.diff == ""


def test_a_snapshot_with_nothing_to_change_gets_an_empty_proposal() -> None:
    snapshot = ("Today is 2026-11-25.\n\n## MEMORY.md (lines 1-1 of 1)\nL1: - Ada works at Acme.\n\n"
                "## Recent daily logs, oldest first\n### memory/2026-11-24.md\n- Lunch with Bo.\n")
    assert demo_proposal(snapshot) == []
