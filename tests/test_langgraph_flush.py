"""Pre-compaction flush and the compaction node, in hand-built LangGraph graphs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langgraph import (
    FLUSH_SYSTEM_PROMPT,
    NO_REPLY,
    Compaction,
    MemoryFlush,
    MemoryGraphState,
    flush_threshold,
    is_silent_reply,
    split_for_compaction,
)

BIG = "word " * 700  # ~875 tokens with the approximate counter: past a 700-token threshold
WINDOW = {"context_window": 1000, "reserve_tokens_floor": 200, "soft_threshold_tokens": 100}


@pytest.fixture
def index(workspace: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as opened:
        yield opened


def _daily(workspace: Path) -> Path:
    return workspace / daily_note_path("UTC")


def _writer(*notes: str) -> ScriptedChatModel:
    """A flush model writing ``notes`` in one round, then answering NO_REPLY."""
    calls = [call("memory_write", content=note) for note in notes]
    return ScriptedChatModel(script=[ai("", *calls), ai(f"  {NO_REPLY}\n")])


def _graph(flush: MemoryFlush, agent: ScriptedChatModel | None = None,
           compaction: Compaction | None = None) -> CompiledStateGraph[Any]:
    graph = StateGraph(MemoryGraphState)
    graph.add_node("flush", flush.as_node())
    graph.add_edge(START, "flush")
    last = "flush"
    if compaction is not None:
        graph.add_node("compact", compaction.as_node())
        graph.add_edge(last, "compact")
        last = "compact"
    if agent is not None:
        graph.add_node("agent", lambda state: {"messages": [agent.invoke(state["messages"])]})
        graph.add_edge(last, "agent")
        last = "agent"
    graph.add_edge(last, END)
    return graph.compile(checkpointer=InMemorySaver())


def _thread(name: str = "t") -> Any:
    return {"configurable": {"thread_id": name}}


# ---------------------------------------------------------------------- threshold


def test_threshold_is_context_window_minus_reserve_floor_minus_soft_threshold() -> None:
    assert flush_threshold(200_000) == 176_000
    assert flush_threshold(128_000, 20_000, 4_000) == 104_000
    assert flush_threshold(20_000) == 0  # too small a window: never token-triggered
    assert flush_threshold(10_000, -5, -5) == 10_000  # negative settings count as zero


def test_context_window_comes_from_configuration_then_model_profile_then_default(
        index: MemoryIndex) -> None:
    profiled = ScriptedChatModel(profile={"max_input_tokens": 50_000})
    assert MemoryFlush(index, profiled, context_window=30_000).threshold == 6_000
    assert MemoryFlush(index, profiled).threshold == 26_000
    assert MemoryFlush(index, ScriptedChatModel()).threshold == 176_000


def test_silent_reply_is_an_exact_match_after_trimming() -> None:
    assert is_silent_reply("NO_REPLY") and is_silent_reply("  NO_REPLY\n")
    assert not is_silent_reply("NO_REPLY.") and not is_silent_reply("ok NO_REPLY")
    assert not is_silent_reply("no_reply")


# ---------------------------------------------------------------------- the silent turn


def test_below_threshold_nothing_runs_and_state_is_untouched(index: MemoryIndex) -> None:
    model = _writer("- never")
    result = _graph(MemoryFlush(index, model, **WINDOW)).invoke(
        {"messages": [HumanMessage("short")]}, _thread())
    assert model.calls == [] and "memory_flush_at" not in result


def test_flush_appends_to_todays_log_and_leaves_the_conversation_untouched(
        index: MemoryIndex, workspace: Path) -> None:
    _daily(workspace).write_text("# Today\n\n- Earlier note kept as is.\n")
    model = _writer("- Decided to ship the invoice renderer on Friday.")
    history: list[BaseMessage] = [HumanMessage(BIG, id="h1"), AIMessage("Sure.", id="a1")]
    result = _graph(MemoryFlush(index, model, **WINDOW)).invoke({"messages": history}, _thread())

    assert [m.id for m in result["messages"]] == ["h1", "a1"]  # nothing added, nothing removed
    assert result["memory_flush_compaction_count"] == 0 and result["memory_flush_at"] > 0
    assert _daily(workspace).read_text() == (
        "# Today\n\n- Earlier note kept as is.\n\n- Decided to ship the invoice renderer on Friday.\n")
    first_call = model.calls[0]
    assert isinstance(first_call[0], SystemMessage) and first_call[0].content == FLUSH_SYSTEM_PROMPT
    assert [m.id for m in first_call[1:3]] == ["h1", "a1"]
    prompt = first_call[-1].text
    assert daily_note_path("UTC") in prompt and "NO_REPLY" in prompt and "Current time:" in prompt
    assert model.bound_tools == [["memory_search", "memory_get", "memory_write"]]


def test_flush_runs_once_per_compaction_cycle_and_again_after_a_compaction(index: MemoryIndex) -> None:
    model = ScriptedChatModel(script=[ai(NO_REPLY)] * 3)
    graph = _graph(MemoryFlush(index, model, **WINDOW))
    graph.invoke({"messages": [HumanMessage(BIG)]}, _thread())
    graph.invoke({"messages": [HumanMessage("more")]}, _thread())
    assert len(model.calls) == 1  # same cycle: no second flush

    graph.update_state(_thread(), {"compaction_count": 1})
    state = graph.invoke({"messages": [HumanMessage("after compaction")]}, _thread())
    assert len(model.calls) == 2 and state["memory_flush_compaction_count"] == 1


def test_an_identical_note_is_not_appended_twice(index: MemoryIndex, workspace: Path) -> None:
    note = "- The staging region is eu-central-1."
    flush = MemoryFlush(index, _writer(note), **WINDOW)
    first = flush.run([HumanMessage(BIG)])
    flush.model = _writer(note)
    second = flush.run([HumanMessage(BIG)])
    assert first.appended == 1 and second.appended == 0
    assert second.writes[0]["reason"] == "duplicate"
    assert _daily(workspace).read_text().count("eu-central-1") == 1


def test_flush_writes_are_restricted_by_the_tool_to_todays_daily_log(
        index: MemoryIndex, workspace: Path) -> None:
    curated = (workspace / "MEMORY.md").read_text()
    model = ScriptedChatModel(script=[
        ai("", call("memory_write", content="- Overwrite curated memory.", target="memory")),
        ai("", call("memory_write", content="- A note for today.")),
        ai(NO_REPLY)])
    report = MemoryFlush(index, model, **WINDOW).run([HumanMessage(BIG)])

    refusal = model.calls[1][-1]
    assert isinstance(refusal, ToolMessage) and refusal.status == "error" and "daily" in refusal.text
    assert (workspace / "MEMORY.md").read_text() == curated
    assert [w["path"] for w in report.writes] == [daily_note_path("UTC")]
    assert report.silent and report.rounds == 3


def test_flush_is_skipped_when_the_workspace_is_read_only_or_missing(
        index: MemoryIndex, tmp_path: Path) -> None:
    model = _writer("- never")
    read_only = MemoryFlush(index, model, read_only=True, **WINDOW)
    assert read_only.skip_reason({"messages": [HumanMessage(BIG)]}) == "workspace is read-only (configured)"
    with MemoryIndex.open(tmp_path / "gone", embedding={"provider": "none"}) as missing_index:
        missing = MemoryFlush(missing_index, model, **WINDOW)
        assert "does not exist" in (missing.skip_reason({"messages": [HumanMessage(BIG)]}) or "")
        assert missing.update({"messages": [HumanMessage(BIG)]}) == {}
    assert model.calls == []


def test_flush_tool_rounds_are_bounded(index: MemoryIndex) -> None:
    searching = ScriptedChatModel(script=[ai("", call("memory_search", query="anything"))],
                                  repeat_last=True)
    report = MemoryFlush(index, searching, max_tool_rounds=2, **WINDOW).run([HumanMessage(BIG)])
    assert report.rounds == 3 and len(searching.calls) == 3  # two tool rounds, then it stops


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def _raises(error: Exception) -> Callable[[list[BaseMessage]], AIMessage]:
    def broken(messages: list[BaseMessage]) -> AIMessage:
        raise error

    return broken


def test_a_failing_flush_keeps_the_turn_going_and_is_retried_after_a_backoff(index: MemoryIndex) -> None:
    clock = _Clock()
    model = ScriptedChatModel(script=[_raises(RuntimeError("provider down")), ai(NO_REPLY)])
    flush = MemoryFlush(index, model, clock=clock, **WINDOW)
    state: dict[str, Any] = {"messages": [HumanMessage(BIG)]}
    failed = flush.update(state)
    assert failed["memory_flush_failures"] == 1 and "memory_flush_compaction_count" not in failed
    state.update(failed)
    assert flush.update(state) == {} and len(model.calls) == 1  # backing off: no request
    clock.advance(2.5)
    assert flush.update(state)["memory_flush_compaction_count"] == 0
    assert len(model.calls) == 2
    assert index.status()["flush_failures"] == 1


def test_flush_attempts_are_bounded_per_compaction_cycle_and_recorded(index: MemoryIndex) -> None:
    clock = _Clock()
    model = ScriptedChatModel(script=[_raises(RuntimeError("provider down"))], repeat_last=True)
    flush = MemoryFlush(index, model, clock=clock, max_attempts=3, **WINDOW)
    state: dict[str, Any] = {"messages": [HumanMessage(BIG)]}
    for _ in range(10):
        state.update(flush.update(state))
        clock.advance(120)
    assert len(model.calls) == 3
    assert state["memory_flush_compaction_count"] == 0  # given up for this cycle: the turn goes on
    status = index.status()
    assert status["flush_failures"] == 3 and status["last_flush_error"]["gave_up"] is True
    assert "provider down" in status["last_flush_error"]["error"]
    # A new compaction cycle gets its own attempts.
    state["compaction_count"] = 1
    state.update(flush.update(state))
    assert len(model.calls) == 4


def test_a_client_error_is_not_retried(index: MemoryIndex) -> None:
    error = RuntimeError("invalid api key")
    error.status_code = 401  # type: ignore[attr-defined]
    model = ScriptedChatModel(script=[_raises(error)], repeat_last=True)
    flush = MemoryFlush(index, model, **WINDOW)
    update = flush.update({"messages": [HumanMessage(BIG)]})
    assert update["memory_flush_compaction_count"] == 0 and len(model.calls) == 1


def test_a_context_overflow_is_retried_at_once_on_the_later_half_of_the_history(
        index: MemoryIndex) -> None:
    overflow = _raises(RuntimeError("This model's maximum context length is 8192 tokens"))
    model = ScriptedChatModel(script=[overflow, ai(NO_REPLY)])
    history = [HumanMessage(f"message {n} " + "word " * 60) for n in range(8)]
    report = MemoryFlush(index, model, **WINDOW).run(history)
    assert report.error is None and len(model.calls) == 2
    assert "message 0 " not in model.calls[1][1].text and "message 4 " in model.calls[1][1].text


def test_unanswered_tool_calls_are_dropped_from_the_flush_history(index: MemoryIndex) -> None:
    model = ScriptedChatModel(script=[ai(NO_REPLY)])
    dangling = AIMessage("Let me look.", tool_calls=[call("memory_search", query="x")])
    MemoryFlush(index, model, **WINDOW).run([HumanMessage(BIG), dangling])
    sent = model.calls[0]
    assert all(not getattr(m, "tool_calls", None) for m in sent)
    assert sent[2].text == "Let me look."


def test_the_flush_may_correct_memory_md_only_when_allowed(index: MemoryIndex,
                                                          workspace: Path) -> None:
    model = ScriptedChatModel(script=[ai(NO_REPLY)], repeat_last=True)
    MemoryFlush(index, model, **WINDOW).run([HumanMessage(BIG)])
    MemoryFlush(index, model, allow_edit=True, **WINDOW).run([HumanMessage(BIG)])
    assert [tools[-1] for tools in model.bound_tools] == ["memory_write", "memory_edit"]
    group = ScriptedChatModel(script=[ai(NO_REPLY)])
    _graph(MemoryFlush(index, group, allow_edit=True, **WINDOW)).invoke(
        {"messages": [HumanMessage(BIG)]}, {"configurable": {"thread_id": "g", "chat_type": "group"}})
    assert group.bound_tools and "memory_edit" not in group.bound_tools[0]  # never in groups


def test_in_a_group_chat_the_flush_cannot_read_memory_md(index: MemoryIndex) -> None:
    model = ScriptedChatModel(script=[ai("", call("memory_get", path="MEMORY.md")), ai(NO_REPLY)])
    graph = _graph(MemoryFlush(index, model, **WINDOW))
    graph.invoke({"messages": [HumanMessage(BIG)]},
                 {"configurable": {"thread_id": "g", "chat_type": "group"}})
    result = model.calls[1][-1]
    assert isinstance(result, ToolMessage) and result.status == "error"
    assert "allergic" not in result.text


def test_a_custom_prompt_gets_the_date_and_a_no_reply_hint(index: MemoryIndex) -> None:
    model = ScriptedChatModel(script=[ai(NO_REPLY)])
    fixed = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    MemoryFlush(index, model, prompt="Save notes to memory/YYYY-MM-DD.md.", clock=lambda: fixed,
                **WINDOW).run([HumanMessage(BIG)])
    prompt = model.calls[0][-1].text
    assert prompt.startswith("Save notes to memory/2026-03-01.md.")
    assert "NO_REPLY" in prompt and "Current time: 2026-03-01 23:30 (UTC)" in prompt


# ---------------------------------------------------------------------- never visible


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_flush_tokens_and_messages_never_reach_the_stream(index: MemoryIndex, mode: str) -> None:
    flush_model = ScriptedChatModel(script=[
        ai("Saving a note now.", call("memory_write", content="- Secret flush note.")),
        ai(f"{NO_REPLY}")])
    agent = ScriptedChatModel(script=[ai("Here is the visible answer.")])
    graph = _graph(MemoryFlush(index, flush_model, **WINDOW), agent)
    payload = {"messages": [HumanMessage(BIG)]}
    if mode == "sync":
        chunks = list(graph.stream(payload, _thread(), stream_mode="messages"))
    else:
        chunks = [c async for c in graph.astream(payload, _thread(), stream_mode="messages")]

    streamed = "".join(chunk.text for chunk, _ in chunks)
    assert "visible answer" in streamed
    assert "NO_REPLY" not in streamed and "Saving a note" not in streamed
    assert all(meta["langgraph_node"] != "flush" for _, meta in chunks)
    state = graph.get_state(_thread()).values
    assert [m.text for m in state["messages"]][-1] == "Here is the visible answer."
    assert len(state["messages"]) == 2 and state["memory_flush_compaction_count"] == 0


# ---------------------------------------------------------------------- pairing with compaction


def test_the_flush_runs_before_a_compaction_triggered_in_the_same_step(
        index: MemoryIndex, workspace: Path) -> None:
    seen_on_disk: list[str] = []

    def summarise(messages: list[BaseMessage]) -> AIMessage:
        seen_on_disk.append(_daily(workspace).read_text())
        return ai("- They talked a lot.")

    compaction = Compaction(ScriptedChatModel(script=[summarise]), keep_messages=1, **_no_soft())
    flush = MemoryFlush(index, _writer("- Fact before compaction."), compaction_due=compaction.due,
                        token_counter=compaction.token_counter, **WINDOW)
    graph = _graph(flush, compaction=compaction)
    state = graph.invoke({"messages": [HumanMessage(BIG), AIMessage("ok"), HumanMessage("next")]},
                         _thread())
    assert seen_on_disk == ["- Fact before compaction.\n"]
    assert state["compaction_count"] == 1 and state["memory_flush_compaction_count"] == 0


def _no_soft() -> dict[str, int]:
    return {"context_window": WINDOW["context_window"],
            "reserve_tokens_floor": WINDOW["reserve_tokens_floor"]}


def test_a_due_compaction_triggers_the_flush_even_below_the_flush_threshold(index: MemoryIndex) -> None:
    model = ScriptedChatModel(script=[ai(NO_REPLY)])
    flush = MemoryFlush(index, model, compaction_due=lambda messages, tokens: len(messages) >= 3,
                        **WINDOW)
    assert flush.skip_reason({"messages": [HumanMessage("a"), AIMessage("b")]}) is not None
    assert flush.skip_reason({"messages": [HumanMessage("a"), AIMessage("b"), HumanMessage("c")]}) is None


def test_split_never_separates_a_tool_call_from_its_results() -> None:
    tool_call = AIMessage("", tool_calls=[call("memory_search", query="q")])
    result = ToolMessage("found", tool_call_id=tool_call.tool_calls[0]["id"] or "")
    messages: list[BaseMessage] = [HumanMessage("1"), AIMessage("2"), HumanMessage("3"), tool_call,
                                   result, AIMessage("answer")]
    older, kept = split_for_compaction(messages, keep=2)
    assert kept == [tool_call, result, messages[-1]] and older == messages[:3]
    assert split_for_compaction(messages, keep=10) == ([], messages)


def test_compaction_summarises_older_messages_keeps_recent_ones_and_counts(
        index: MemoryIndex) -> None:
    summariser = ScriptedChatModel(script=[ai("- The user asked about invoices.")])
    compaction = Compaction(summariser, keep_messages=2, **_no_soft())
    graph = StateGraph(MemoryGraphState)
    graph.add_node("compact", compaction.as_node())
    graph.add_edge(START, "compact")
    graph.add_edge("compact", END)
    app = graph.compile(checkpointer=InMemorySaver())
    history = [HumanMessage(BIG, id="1"), AIMessage("a", id="2"), HumanMessage("b", id="3"),
               AIMessage("c", id="4")]
    state = app.invoke({"messages": history, "compaction_count": 2}, _thread())

    summary, *kept = state["messages"]
    assert [m.id for m in kept] == ["3", "4"]
    assert isinstance(summary, HumanMessage) and "invoices" in summary.text
    assert summary.additional_kwargs["lc_source"] == "summarization"
    assert state["compaction_count"] == 3
    transcript = summariser.calls[0][-1].text
    assert "User: word" in transcript and "Assistant: a" in transcript and "User: b" not in transcript


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_compaction_summary_is_saved_as_an_episode_when_asked(
        index: MemoryIndex, workspace: Path, mode: str) -> None:
    summary = "- The user asked about zero-amount invoices.\n- We agreed to ship on Friday."
    compaction = Compaction(ScriptedChatModel(script=[ai(summary)]), keep_messages=1,
                            trigger_tokens=1, episodes=index)
    state = {"messages": [HumanMessage("a", id="1"), AIMessage("b", id="2")]}
    if mode == "sync":
        compaction.update(state)
    else:
        await compaction.aupdate(state)
    daily = _daily(workspace).read_text()
    assert "Episode (a conversation summarised at compaction):" in daily
    assert "ship on Friday" in daily
    assert any("Friday" in h.snippet for h in index.search("when do we ship?").results)
    plain = Compaction(ScriptedChatModel(script=[ai("- other")]), keep_messages=1,
                       trigger_tokens=1)
    plain.update(state)
    assert "other" not in _daily(workspace).read_text()  # off unless asked


def test_compaction_update_removes_with_remove_message_and_puts_the_summary_first() -> None:
    compaction = Compaction(ScriptedChatModel(script=[ai("sum")]), keep_messages=1, trigger_tokens=1)
    update = compaction.update({"messages": [HumanMessage("a", id="1"), AIMessage("b", id="2")]})
    remove, summary, kept = update["messages"]
    assert isinstance(remove, RemoveMessage) and summary.text.endswith("sum") and kept.id == "2"
    assert update["compaction_count"] == 1


def test_the_compaction_step_flushes_first_when_the_flush_step_did_not(index: MemoryIndex,
                                                                        workspace: Path) -> None:
    flush_model = ScriptedChatModel(script=[
        ai("", call("memory_write", content="- The release train leaves on Thursdays.")), ai(NO_REPLY)])
    # The flush's own threshold is far away and it knows nothing of the compaction trigger.
    flush = MemoryFlush(index, flush_model, context_window=10**6)
    summary_model = ScriptedChatModel(script=[ai("- routine updates")])
    compaction = Compaction(summary_model, trigger_tokens=500, keep_messages=1, flush=flush)
    state = {"messages": [HumanMessage(BIG), AIMessage("ok"), HumanMessage("more")]}
    assert flush.update(state) == {}  # the flush step alone would not run
    update = compaction.update(state)
    assert update["compaction_count"] == 1 and update["memory_flush_compaction_count"] == 0
    assert len(flush_model.calls) == 2 and len(summary_model.calls) == 1
    assert "release train" in (workspace / daily_note_path(None)).read_text()
    # Flushed in this cycle already: a second compaction check does not flush again.
    flushed = {**state, "memory_flush_compaction_count": 0}
    assert compaction.flush is flush and flush.before_compaction(flushed) == {}
