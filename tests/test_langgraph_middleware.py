"""The create_agent middleware: flush before SummarizationMiddleware, citations, prompt section."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import (
    FLUSH_SYSTEM_PROMPT,
    NO_REPLY,
    CitationPolicyMiddleware,
    MemoryFlushMiddleware,
    MemoryRecallPromptMiddleware,
)

TURN = "status " * 40  # ~60 tokens per user message


@pytest.fixture
def index(workspace: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as opened:
        yield opened


def _config(thread: str = "t") -> Any:
    return {"configurable": {"thread_id": thread}}


# ---------------------------------------------------------------------- flush + summarization


class Recorder:
    """Scripted flush and summary models that log, in order, what happened."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.cycle = 0

    def flush(self, messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return ai(NO_REPLY)
        self.events.append("flush")
        self.cycle += 1
        return ai("", call("memory_write", content=f"- Fact from cycle {self.cycle}."))

    def summary(self, messages: list[BaseMessage]) -> AIMessage:
        self.events.append("summary")
        return ai("the user sent status updates")


def _flush_agent(index: MemoryIndex, recorder: Recorder) -> tuple[Any, MemoryFlushMiddleware]:
    flush_model = ScriptedChatModel(script=[recorder.flush], repeat_last=True)
    summary_model = ScriptedChatModel(script=[recorder.summary], repeat_last=True)
    summarizer = SummarizationMiddleware(summary_model, trigger=("tokens", 700), keep=("messages", 2))
    flush = MemoryFlushMiddleware(index, flush_model, summarization=summarizer, context_window=1000,
                                  reserve_tokens_floor=200, soft_threshold_tokens=200)
    agent_model = ScriptedChatModel(script=[lambda m: ai("ok " * 40)], repeat_last=True)
    agent = create_agent(agent_model, tools=memory_tools(index), middleware=[flush, summarizer],
                         checkpointer=InMemorySaver())
    return agent, flush


def test_flush_runs_once_before_each_summarization_and_never_shows(
        index: MemoryIndex, workspace: Path) -> None:
    recorder = Recorder()
    agent, _ = _flush_agent(index, recorder)
    chunks: list[tuple[Any, dict[str, Any]]] = []
    for _ in range(24):
        chunks += agent.stream({"messages": [HumanMessage(TURN)]}, _config(), stream_mode="messages")
    state = agent.get_state(_config()).values

    assert recorder.events.count("summary") >= 2
    cycles = "".join("F" if e == "flush" else "S" for e in recorder.events).split("S")
    assert all(c == "F" for c in cycles[:-1]), recorder.events  # one flush before every summary
    assert state["compaction_count"] == recorder.events.count("summary")
    notes = (workspace / daily_note_path("UTC")).read_text()
    assert "- Fact from cycle 1." in notes and "- Fact from cycle 2." in notes
    visible = [*state["messages"], *(c for c, _ in chunks)]
    assert all(NO_REPLY not in m.text and FLUSH_SYSTEM_PROMPT[:30] not in m.text for m in visible)
    assert all(not (getattr(m, "tool_calls", None) or getattr(m, "tool_call_chunks", None))
               for m in visible)  # the flush's memory_write calls stayed inside the flush turn
    assert all("MemoryFlushMiddleware" not in meta["langgraph_node"] for _, meta in chunks)


async def test_flush_middleware_works_when_the_agent_runs_async(index: MemoryIndex) -> None:
    recorder = Recorder()
    agent, _ = _flush_agent(index, recorder)
    for _ in range(14):
        await agent.ainvoke({"messages": [HumanMessage(TURN)]}, _config("async"))
    assert recorder.events[:2] == ["flush", "summary"]


def test_flush_middleware_counts_like_the_summarizer_and_returns_only_bookkeeping(
        index: MemoryIndex) -> None:
    summary_model = ScriptedChatModel(profile={"max_input_tokens": 64_000})
    summarizer = SummarizationMiddleware(summary_model, trigger=("messages", 4), keep=("messages", 2))
    flush_model = ScriptedChatModel(script=[ai(NO_REPLY)])
    middleware = MemoryFlushMiddleware(index, flush_model, summarization=summarizer)
    assert middleware.flush.token_counter is summarizer.token_counter
    assert middleware.flush.threshold == 64_000 - 24_000

    runtime = SimpleNamespace(context=None)
    short = {"messages": [HumanMessage("a"), AIMessage("b"), HumanMessage("c")]}
    assert middleware.before_model(short, runtime) is None  # type: ignore[arg-type]
    # Four messages: the summarizer fires in this step, so the flush must run first.
    due = {"messages": [*short["messages"], AIMessage("d")]}
    update = middleware.before_model(due, runtime)  # type: ignore[arg-type]
    assert update is not None and set(update) == {"memory_flush_at", "memory_flush_compaction_count"}


def test_no_flush_when_the_summarizer_would_trigger_but_has_nothing_to_cut(index: MemoryIndex) -> None:
    # The default keep (20 messages) leaves nothing to summarise in 4 messages: no compaction,
    # so a flush now would only come early and leave later facts of the cycle unsaved.
    summarizer = SummarizationMiddleware(ScriptedChatModel(), trigger=("messages", 4))
    flush_model = ScriptedChatModel(script=[ai(NO_REPLY)])
    middleware = MemoryFlushMiddleware(index, flush_model, summarization=summarizer)
    state = {"messages": [HumanMessage("a"), AIMessage("b"), HumanMessage("c"), AIMessage("d")]}
    assert middleware.before_model(state, SimpleNamespace(context=None)) is None  # type: ignore[arg-type]
    assert flush_model.calls == []


def test_a_new_summary_message_opens_a_new_flush_cycle(index: MemoryIndex) -> None:
    middleware = MemoryFlushMiddleware(index, ScriptedChatModel(), context_window=10**6)
    summary = HumanMessage("Here is a summary", id="s1", additional_kwargs={"lc_source": "summarization"})
    runtime = SimpleNamespace(context=None)
    state = {"messages": [summary, HumanMessage("hi")], "compaction_count": 1}
    assert middleware.before_model(state, runtime) == {  # type: ignore[arg-type]
        "compaction_summary_id": "s1", "compaction_count": 2}
    seen = {**state, "compaction_summary_id": "s1", "compaction_count": 2}
    assert middleware.before_model(seen, runtime) is None  # type: ignore[arg-type]


# ---------------------------------------------------------------------- citations and scope


def _cited_agent(index: MemoryIndex, answer: str) -> Any:
    turn = [ai("", call("memory_search", query="PostgreSQL billing")), ai(answer)]
    model = ScriptedChatModel(script=turn * 2)
    return create_agent(model, tools=memory_tools(index), middleware=[CitationPolicyMiddleware("auto")])


def test_group_chat_agent_gets_no_memory_md_and_answers_without_citations(index: MemoryIndex) -> None:
    agent = _cited_agent(index, "Billing runs on PostgreSQL.\n\nSource: MEMORY.md#L3")
    chunks = list(agent.stream({"messages": [HumanMessage("Which database for billing?")]},
                               context={"chat_type": "group"}, stream_mode="messages"))
    streamed = "".join(c.text for c, _ in chunks)
    assert "#L" not in streamed and "Billing runs on PostgreSQL." in streamed
    final = agent.invoke({"messages": [HumanMessage("Which database for billing?")]},
                         {"configurable": {"chat_type": "group"}})
    *_, result, answer = final["messages"]
    assert isinstance(result, ToolMessage) and "MEMORY.md" not in result.text
    assert answer.text == "Billing runs on PostgreSQL."


def test_direct_chat_agent_keeps_citations_from_memory_md(index: MemoryIndex) -> None:
    agent = _cited_agent(index, "Billing runs on PostgreSQL.\n\nSource: MEMORY.md#L3")
    *_, result, answer = agent.invoke({"messages": [HumanMessage("Which database?")]})["messages"]
    assert '"citation":"MEMORY.md#L' in result.text
    assert answer.text.endswith("Source: MEMORY.md#L3")


# ---------------------------------------------------------------------- prompt section


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return expression


def _system_seen(index: MemoryIndex, tools: list[Any], **invoke: Any) -> str:
    model = ScriptedChatModel(script=[ai("fine")])
    agent = create_agent(model, tools=tools, system_prompt="Be brief.",
                         middleware=[MemoryRecallPromptMiddleware("auto")])
    agent.invoke({"messages": [HumanMessage("hi")]}, **invoke)
    first = model.calls[0][0]
    assert isinstance(first, SystemMessage)
    return first.text


def test_prompt_middleware_adds_the_section_only_with_memory_tools(index: MemoryIndex) -> None:
    with_memory = _system_seen(index, memory_tools(index))
    assert with_memory.startswith("Be brief.\n\n## Memory Recall") and "Source: <path#line>" in with_memory
    assert _system_seen(index, [calculator]) == "Be brief."
    group = _system_seen(index, memory_tools(index), context={"chat_type": "group"})
    assert "Do not mention memory file paths" in group and "MEMORY.md" not in group


# ---------------------------------------------------------------------- optional dependency


def test_package_imports_without_langchain_and_middleware_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['langchain'] = None\n"
        "import openclaw_memory, openclaw_memory.langgraph as lg\n"
        "lg.CitationPolicy('auto'); lg.strip_citations('x')\n"
        "try:\n    lg.CitationPolicyMiddleware()\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'langchain-openclaw-memory[agents]'" in out.stdout
