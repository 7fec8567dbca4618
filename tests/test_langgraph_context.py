"""Session-start context: MEMORY.md in private chats, today's and yesterday's logs, a budget."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain_core.messages import SystemMessage

from openclaw_memory import MemoryIndex
from openclaw_memory.langgraph import session_start_context
from openclaw_memory.langgraph.context import fair_shares, fit

# 23:30 UTC on Jan 11 is already Jan 12 in Tokyo.
NOW = datetime(2026, 1, 11, 23, 30, tzinfo=UTC)


@pytest.fixture
def index(workspace: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as opened:
        yield opened


def test_direct_chat_loads_memory_md_yesterday_and_today(index: MemoryIndex) -> None:
    context = session_start_context(index, now=NOW)
    assert [f.path for f in context.files] == ["MEMORY.md", "memory/2026-01-10.md", "memory/2026-01-11.md"]
    assert "PostgreSQL" in context.text and "BILL-482" in context.text and "Redis" in context.text
    assert "memory/topics.md" not in context.text  # only the session-start files
    assert not context.truncated and context.skipped == ()


def test_group_chat_never_loads_memory_md(index: MemoryIndex) -> None:
    context = session_start_context(index, chat_type="group", now=NOW)
    assert "PostgreSQL" not in context.text and "peanuts" not in context.text
    assert [f.path for f in context.files] == ["memory/2026-01-10.md", "memory/2026-01-11.md"]
    assert context.skipped == ("MEMORY.md (private: group chat)",)
    nothing = session_start_context(index, chat_type="channel", now=NOW, include_daily=False)
    assert nothing.text == "" and nothing.as_messages() == []


def test_dates_follow_the_configured_time_zone(workspace: Path) -> None:
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="Asia/Tokyo") as index:
        paths = [f.path for f in session_start_context(index, now=NOW).files]
    assert paths == ["MEMORY.md", "memory/2026-01-11.md"]  # Jan 12 in Tokyo has no log yet


def test_budget_is_shared_fairly_and_every_cut_is_announced(index: MemoryIndex, workspace: Path) -> None:
    long_log = "".join(f"- note {i:03d} about the billing migration\n" for i in range(300))
    (workspace / "memory" / "2026-01-11.md").write_text(long_log)
    context = session_start_context(index, now=NOW, max_chars=2_000)

    assert len(context.text) <= 2_000
    curated, yesterday, today = context.files
    assert not curated.truncated and not yesterday.truncated  # small files are kept whole
    assert today.truncated and today.kept_chars > 900
    assert "characters of memory/2026-01-11.md left out here; read them with memory_get" in context.text
    assert "note 000" in context.text and "note 299" in context.text  # head and tail both kept


def test_as_messages_gives_one_system_message_to_prepend(index: MemoryIndex) -> None:
    messages = session_start_context(index, now=NOW).as_messages()
    assert len(messages) == 1 and isinstance(messages[0], SystemMessage)
    assert messages[0].text.startswith("# Memory loaded at session start")


def test_fair_shares_give_small_items_all_they_need() -> None:
    assert fair_shares([100, 5_000, 5_000], 3_000) == [100, 1_450, 1_450]
    assert fair_shares([10, 20], 1_000) == [10, 20]
    assert fair_shares([], 10) == []


def test_fit_keeps_head_and_tail_on_line_boundaries() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    kept, count = fit(text, 200, "memory/x.md")
    assert len(kept) <= 200 and kept.startswith("line 0\n") and kept.endswith("line 99\n".rstrip("\n"))
    assert "left out here" in kept and count < len(text)
    assert fit("short", 10, "p") == ("short", 5)
    assert fit(text, 5, "memory/x.md") == ("", 0)


def test_session_start_syncs_the_index_in_the_background_once_per_session(
        workspace: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", timezone="UTC",
                          embedding={"provider": "none"}, sync={"on_search": False}) as index:
        index.sync()
        (workspace / "memory" / "2026-01-12.md").write_text("- Booked the okapi workshop.\n")
        session_start_context(index, now=NOW, session_key="thread-1")
        assert index.wait_for_sync(30)
        assert [h.path for h in index.search("okapi").results] == ["memory/2026-01-12.md"]
        runs = index.status()["background_sync"]["runs"]
        session_start_context(index, now=NOW, session_key="thread-1")  # same session: no sync
        assert index.wait_for_sync(30)
        assert index.status()["background_sync"]["runs"] == runs
        session_start_context(index, now=NOW, session_key="thread-2")
        assert index.wait_for_sync(30)
        assert index.status()["background_sync"]["runs"] == runs + 1
