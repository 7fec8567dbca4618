"""Curating memory on PostgreSQL: the same edit, concurrency check and history as on files,
in one transaction; the history is readable and exported but never a hit; consolidation runs
over it too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from consolidation_brain import consolidating_model_step
from fake_chat import ScriptedChatModel

from openclaw_memory import MemoryIndex
from openclaw_memory.cli import main
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.curation import CurationError, history_path
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import MemoryConsolidation

KEYWORD_ONLY: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC"}
PARIS = "- Ada lives in Paris."


@pytest.fixture()
def memory(pg_dsn: str) -> Any:
    with MemoryIndex.open("curated", backend="postgres", dsn=pg_dsn, **KEYWORD_ONLY) as opened:
        opened.put_document("MEMORY.md", f"# Facts\n\n{PARIS}\n- Ada works at Acme.\n".encode())
        opened.put_document("memory/2026-11-24.md", b"- Ada told me she moved to Berlin.\n")
        yield opened


def test_an_edit_replaces_the_line_keeps_the_old_one_in_history_and_only_the_new_is_found(
        memory: Any, tmp_path: Path) -> None:
    result = memory.edit("MEMORY.md#L3", PARIS, "- Ada lives in Berlin.", reason="moved")
    assert result.applied and result.citation == "MEMORY.md#L3" and result.history
    assert memory.get("MEMORY.md").text.splitlines()[2].startswith("- Ada lives in Berlin. (as of ")
    assert "> - Ada lives in Paris." in memory.get(result.history).text
    assert all("Paris" not in hit.snippet for hit in memory.search("Ada Paris").results)
    assert memory.search("Ada Berlin").results[0].path in ("MEMORY.md", "memory/2026-11-24.md")
    memory.export(tmp_path / "out")
    history = next((tmp_path / "out" / "memory-history").glob("*.md")).read_text()
    assert "Reason: moved" in history


def test_a_stale_expectation_writes_nothing_and_shows_the_current_text(memory: Any) -> None:
    result = memory.edit("MEMORY.md#L4", PARIS, "- Ada lives in Rome.")
    assert not result.applied and result.current == "- Ada works at Acme."
    assert result.moved_to == (3, 3)
    assert PARIS in memory.get("MEMORY.md").text
    assert memory.get(history_path("UTC")).missing


def test_daily_logs_stay_append_only_and_group_chats_cannot_edit(memory: Any) -> None:
    with pytest.raises(CurationError, match="append-only"):
        memory.edit("memory/2026-11-24.md#L1", "- Ada told me she moved to Berlin.", None)
    with pytest.raises(OpenClawMemoryError, match="direct chats only"):
        memory.edit("MEMORY.md#L3", PARIS, None, chat_type="group")
    tool = next(t for t in memory_tools(memory) if t.name == "memory_edit")
    answer = tool.invoke({"citation": "MEMORY.md#L3", "expected": PARIS, "replacement": None,
                          "reason": "not true any more"})
    assert "removed" in str(answer) and PARIS not in memory.get("MEMORY.md").text


def test_consolidation_runs_over_the_database(memory: Any) -> None:
    model = ScriptedChatModel(script=[consolidating_model_step], repeat_last=True)
    report = MemoryConsolidation(memory, model, days=3650).run()
    assert report.applied == ("updated MEMORY.md#L3",), report.skipped
    assert "Ada lives in Berlin." in memory.get("MEMORY.md").text
    assert MemoryConsolidation(memory, model, days=3650).run().applied == ()


def test_the_cli_edits_and_shows_the_history_on_the_database(
        memory: Any, pg_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--backend", "postgres", "--dsn", pg_dsn, "--name", "curated", "--provider", "none"]
    assert main([*base, "edit", "MEMORY.md#L3", "--expected", PARIS, "--to", "- Ada lives in Oslo.",
                 "--reason", "moved north"]) == 0
    capsys.readouterr()
    assert main([*base, "history"]) == 0
    out = capsys.readouterr().out
    assert "> - Ada lives in Paris." in out and "Reason: moved north" in out
