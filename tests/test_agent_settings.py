"""The flush, consolidation and auto-capture read their settings from openclaw-memory.toml and
OPENCLAW_MEMORY_* like every other setting; an argument given in code wins; bad values are
clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_chat import ScriptedChatModel

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ConfigError
from openclaw_memory.langgraph import MemoryCapture, MemoryConsolidation, MemoryFlush

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}}


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "openclaw-memory.toml").write_text(
        "[flush]\nreserve_tokens_floor = 1000\nsoft_threshold_tokens = 500\n"
        "context_window = 10000\nallow_edit = true\n\n"
        "[consolidation]\ndays = 30\nmax_edits = 3\n\n"
        "[capture]\nlast_turns = 1\nchat_types = ['direct', 'group']\n")
    return root


def test_the_file_sets_the_agent_steps_and_code_wins(ws: Path, tmp_path: Path) -> None:
    model = ScriptedChatModel()
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as memory:
        flush = MemoryFlush(memory, model)
        assert flush.threshold == 10_000 - 1_000 - 500 and flush.allow_edit
        assert MemoryFlush(memory, model, reserve_tokens_floor=0).threshold == 10_000 - 500
        consolidation = MemoryConsolidation(memory, model)
        assert (consolidation.days, consolidation.max_edits) == (30, 3)
        assert MemoryConsolidation(memory, model, days=2).days == 2
        capture = MemoryCapture(memory, model)
        assert capture.last_turns == 1 and capture.chat_types == ("direct", "group")


def test_the_environment_sets_them_too_and_bad_values_are_clear(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCLAW_MEMORY_FLUSH__ENABLED", "false")
    monkeypatch.setenv("OPENCLAW_MEMORY_CONSOLIDATION__DAYS", "14")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as memory:
        assert not MemoryFlush(memory, ScriptedChatModel()).enabled
        assert MemoryConsolidation(memory, ScriptedChatModel()).days == 14
    monkeypatch.setenv("OPENCLAW_MEMORY_CONSOLIDATION__MAX_EDITS", "0")
    with pytest.raises(ConfigError, match="max_edits"):
        MemoryIndex.open(ws, index_path=tmp_path / "j.sqlite", **OPTS)


def test_store_path_takes_the_agent_id(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    template = str(tmp_path / "indexes" / "{agentId}.sqlite")
    with MemoryIndex.open(ws, store={"path": template}, sessions={"agent_id": "main"},
                          **OPTS) as memory:
        assert memory.index_path == tmp_path / "indexes" / "main.sqlite"
    with pytest.raises(ConfigError, match=r"sessions\.agent_id is unset"):
        MemoryIndex.open(ws, store={"path": str(tmp_path / "{agent_id}.sqlite")}, **OPTS)


def test_compaction_reads_its_settings_through_the_flush_or_the_environment(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.langgraph import Compaction

    (ws / "openclaw-memory.toml").write_text("[compaction]\nkeep_messages = 2\n"
                                             "trigger_tokens = 5000\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as memory:
        flush = MemoryFlush(memory, ScriptedChatModel())
        compaction = Compaction(ScriptedChatModel(), flush=flush)
        assert (compaction.keep_messages, compaction.trigger_tokens) == (2, 5000)
        assert Compaction(ScriptedChatModel(), flush=flush, keep_messages=9).keep_messages == 9
    monkeypatch.setenv("OPENCLAW_MEMORY_COMPACTION__SUMMARY_ROLE", "system")
    assert Compaction(ScriptedChatModel()).summary_role == "system"


def test_sync_watch_follows_the_files_while_the_index_is_open(ws: Path, tmp_path: Path) -> None:
    from waiting import wait_until

    with MemoryIndex.open(ws, index_path=tmp_path / "w.sqlite", sync={"watch": True,
                                                                      "watch_debounce_ms": 50},
                          **OPTS) as memory:
        memory.sync()
        assert memory.freshness.watcher is not None and memory.freshness.watcher.running
        (ws / "memory" / "2026-02-01.md").write_text("- The heron migration finished.\n")
        wait_until(lambda: "memory/2026-02-01.md" in memory.indexed_paths())
    with MemoryIndex.open(ws, index_path=tmp_path / "w.sqlite", **OPTS) as memory:
        assert memory.freshness.watcher is None  # off unless asked
