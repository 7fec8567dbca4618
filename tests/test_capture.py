"""Auto-capture: after an agent run, a silent model turn saves durable facts from the last
turns to today's daily log, skipping what memory already says; off in group chats, never in
the user's stream, and each turn read once."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langgraph import MemoryCaptureMiddleware

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC"}
PREFERS = re.compile(r"I (?:prefer|like) ([^.!?]+)")


@pytest.fixture()
def memory(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Facts\n\n- The user prefers tea over coffee.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as opened:
        opened.sync()
        yield opened


class Capturer:
    """The capture model: one note per "I prefer ..." in the conversation it is shown."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        text = str(messages[-1].content)
        self.shown.append(text)
        notes = [f"The user prefers {what.strip()}." for what in PREFERS.findall(text)]
        return ai("", call("capture_memories", notes=notes))


def _agent(memory: MemoryIndex, capturer: Capturer, **options: Any) -> Any:
    agent_model = ScriptedChatModel(script=[ai("Noted, thanks!")], repeat_last=True)
    capture_model = ScriptedChatModel(script=[capturer], repeat_last=True)
    return create_agent(agent_model, tools=[], middleware=[
        MemoryCaptureMiddleware(memory, capture_model, **options)])


def _today_log(memory: MemoryIndex) -> Path:
    return memory.settings.workspace / daily_note_path("UTC", datetime.now(UTC))


def test_a_stated_preference_is_saved_to_todays_log_and_nothing_of_the_turn_is_streamed(
        memory: MemoryIndex) -> None:
    capturer = Capturer()
    agent = _agent(memory, capturer)
    chunks = list(agent.stream({"messages": [HumanMessage("I prefer window seats on trains.")]},
                               stream_mode=["messages", "updates"]))
    log = _today_log(memory).read_text()
    assert "- The user prefers window seats on trains." in log
    streamed = "".join(chunk[0].content for mode, chunk in chunks if mode == "messages")
    assert streamed == "Noted, thanks!"  # the capture turn's call never reaches the stream
    assert memory.search("window seats").results[0].path.startswith("memory/")


def test_what_memory_already_says_is_not_saved_again(memory: MemoryIndex) -> None:
    agent = _agent(memory, Capturer())
    agent.invoke({"messages": [HumanMessage("I prefer tea over coffee.")]})
    assert not _today_log(memory).exists()


def test_each_turn_is_read_once_and_at_most_the_last_turns(memory: MemoryIndex) -> None:
    capturer = Capturer()
    agent = _agent(memory, capturer, last_turns=2)
    state = agent.invoke({"messages": [HumanMessage("I prefer aisle seats.")]})
    state = agent.invoke({**state, "messages": [*state["messages"], HumanMessage("I like jazz.")]})
    assert "aisle" in capturer.shown[0] and "aisle" not in capturer.shown[1]
    assert "jazz" in capturer.shown[1]
    assert state["memory_capture_last_id"] == state["messages"][-1].id
    log = _today_log(memory).read_text()
    assert log.count("aisle seats") == 1 and "jazz" in log


def test_capture_is_off_in_group_chats_unless_asked(memory: MemoryIndex) -> None:
    capturer = Capturer()
    group = {"configurable": {"chat_type": "group"}}
    _agent(memory, capturer).invoke({"messages": [HumanMessage("I prefer red wine.")]}, group)
    assert capturer.shown == [] and not _today_log(memory).exists()
    _agent(memory, capturer, chat_types=("direct", "group")).invoke(
        {"messages": [HumanMessage("I prefer red wine.")]}, group)
    assert "red wine" in _today_log(memory).read_text()
    # What MEMORY.md says (private) does not keep a group's note out of the log.
    _agent(memory, capturer, chat_types=("direct", "group")).invoke(
        {"messages": [HumanMessage("I prefer tea over coffee.")]}, group)
    assert "tea over coffee" in _today_log(memory).read_text()


def test_a_failing_capture_model_costs_the_run_nothing(memory: MemoryIndex) -> None:
    def fails(messages: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("upstream 503")

    agent = create_agent(ScriptedChatModel(script=[ai("Sure.")]), tools=[], middleware=[
        MemoryCaptureMiddleware(memory, ScriptedChatModel(script=[fails]))])
    state = agent.invoke({"messages": [HumanMessage("I prefer green tea.")]})
    assert state["messages"][-1].content == "Sure." and not _today_log(memory).exists()
