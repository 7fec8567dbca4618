"""Consolidation: a silent model turn proposes edits to MEMORY.md from the recent daily logs;
a dry run shows them as a diff, applying goes through curation (concurrency check, history),
a second run changes nothing, the turn is bounded, never in group chats and never streamed."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_entry import ENTRY_POINT
from consolidation_brain import consolidating_model_step, propose
from fake_chat import ScriptedChatModel, ai, call
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from openai_server import (
    CHAT_PATH,
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    chat_reply,
    json_reply,
    wire_tool_call,
)

from openclaw_memory import MemoryIndex
from openclaw_memory.consolidation import ProposedEdits, plan_edits, take_snapshot
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.langchain import ScopedMemory
from openclaw_memory.langgraph import (
    MemoryConsolidation,
    MemoryConsolidationMiddleware,
    MemoryFlushMiddleware,
    MemoryGraphState,
    memory_consolidation_node,
)

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC"}
NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)
CURATED = ("# Facts\n\n- Ada lives in Paris.\n- Ada works at Acme. (as of 2026-01-02)\n"
           "- Ada lives in Paris.\n")


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(CURATED)
    (root / "memory" / "2026-11-23.md").write_text("- Lunch with the design team.\n")
    (root / "memory" / "2026-11-24.md").write_text(
        "- Ada told me she moved to Berlin last month.\n- Ada prefers tea over coffee.\n")
    return root


@pytest.fixture()
def memory(ws: Path, tmp_path: Path) -> Any:
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as opened:
        opened.sync()
        yield opened


def _consolidation(memory: MemoryIndex, model: Any = None, **options: Any) -> MemoryConsolidation:
    model = model or ScriptedChatModel(script=[consolidating_model_step], repeat_last=True)
    return MemoryConsolidation(memory, model, clock=lambda: NOW, **options)


def test_a_dry_run_shows_the_proposal_as_a_diff_and_writes_nothing(memory: MemoryIndex,
                                                                   ws: Path) -> None:
    report = _consolidation(memory).run(dry_run=True)
    assert report.dry_run and report.applied == () and report.error is None
    assert "-- Ada lives in Paris." in report.diff
    assert "+- Ada lives in Berlin. (as of 2026-11-24)" in report.diff
    assert "+- Ada prefers tea over coffee. (as of 2026-11-24)" in report.diff
    assert (ws / "MEMORY.md").read_text() == CURATED
    assert not (ws / "memory-history").exists()


def test_applying_corrects_the_stale_fact_drops_the_copy_keeps_both_in_history_and_the_new_fact_is_found(
        memory: MemoryIndex, ws: Path) -> None:
    report = _consolidation(memory).run()
    assert report.error is None
    assert sorted(report.applied) == ["added MEMORY.md#L6", "removed MEMORY.md#L5",
                                      "updated MEMORY.md#L3"]
    text = (ws / "MEMORY.md").read_text()
    assert "Paris" not in text and "- Ada lives in Berlin. (as of 2026-11-24)" in text
    assert text.count("Ada prefers tea over coffee.") == 1
    history = "".join(p.read_text() for p in (ws / "memory-history").glob("*.md"))
    assert history.count("> - Ada lives in Paris.") == 2  # the replaced and the removed line
    for citation in report.history:
        assert "Paris" in memory.get(citation).text
    top = memory.search("Where does Ada live?").results[0]
    assert top.path == "MEMORY.md" and "Berlin" in top.snippet and top.as_of == "2026-11-24"


def test_a_second_run_over_the_same_files_changes_nothing(memory: MemoryIndex, ws: Path) -> None:
    consolidation = _consolidation(memory)
    assert consolidation.run().changed
    after_first = (ws / "MEMORY.md").read_bytes()
    again = consolidation.run()
    assert again.applied == () and again.diff == "" and again.error is None
    assert (ws / "MEMORY.md").read_bytes() == after_first


def test_a_model_repeating_its_first_proposal_changes_nothing_the_second_time(
        memory: MemoryIndex, ws: Path) -> None:
    # Whatever the model says, an update to the same words and an addition already present
    # are dropped before anything is written.
    first = ai("", call("propose_memory_edits", edits=[
        {"action": "update", "lines": "L3", "text": "- Ada lives in Berlin. (as of 2026-11-24)"},
        {"action": "add", "text": "Ada prefers tea over coffee. (as of 2026-11-24)"}]))
    model = ScriptedChatModel(script=[first], repeat_last=True)
    consolidation = _consolidation(memory, model)
    assert len(consolidation.run().applied) == 2
    snapshot = (ws / "MEMORY.md").read_bytes()
    again = consolidation.run()
    assert again.applied == () and (ws / "MEMORY.md").read_bytes() == snapshot
    assert any("no change" in s for s in again.skipped)
    assert any("already in the file" in s for s in again.skipped)


def test_lines_changed_after_the_model_read_them_are_a_conflict_and_nothing_of_that_edit_is_written(
        memory: MemoryIndex, ws: Path) -> None:
    def edits_meanwhile(messages: list[BaseMessage]) -> AIMessage:
        answer = consolidating_model_step(messages)
        # A person fixes line 3 by hand while the model is thinking.
        memory.edit("MEMORY.md#L3", "- Ada lives in Paris.", "- Ada lives in Munich.")
        return answer

    report = _consolidation(memory, ScriptedChatModel(script=[edits_meanwhile])).run()
    text = (ws / "MEMORY.md").read_text()
    assert "Ada lives in Munich." in text and "Berlin" not in text
    assert any("L3" in s and "changed since" in s for s in report.skipped)
    assert "removed MEMORY.md#L5" in report.applied  # the rest of the plan still applies


def test_edits_of_lines_not_shown_overlapping_blank_or_over_the_limit_are_refused_with_why(
        memory: MemoryIndex) -> None:
    target = ScopedMemory(memory)
    snapshot = take_snapshot(target, today=NOW.date(), days=7, max_tokens=4_000)
    proposal = ProposedEdits.model_validate({"edits": [
        {"action": "update", "lines": "L3", "text": "- Ada lives in Rome."},
        {"action": "remove", "lines": "L3-L4"},
        {"action": "remove", "lines": "L40"},
        {"action": "remove", "lines": "L2"},
        {"action": "update", "lines": "L4", "text": ""},
        {"action": "remove", "lines": "somewhere"},
        {"action": "add", "text": "- Ada works at Acme."},
        {"action": "add", "text": "- Ada has a cat."},
        {"action": "add", "text": "- Ada has a dog."}]})
    plan = plan_edits(snapshot, proposal, max_edits=2)
    assert [(e.action, e.start) for e in plan.edits] == [("update", 3), ("add", 0)]
    why = dict(plan.rejected)
    assert why["remove L3-L4"] == "overlaps an earlier edit of this run"
    assert why["remove L40"] == "lines 40-40 are not lines shown (1-5)"
    assert why["remove L2"] == "the lines are blank: nothing to edit there"
    assert why["update L4"] == "an update needs the new text"
    assert "no lines named" in why["remove somewhere"]
    assert why["add  - Ada works at Acme."] == "already in the file"
    assert why["add  - Ada has a dog."] == "over the limit of 2 edits per run"


def test_the_model_reads_at_most_its_token_budget_the_oldest_logs_left_out_first(
        memory: MemoryIndex, ws: Path) -> None:
    for day in range(1, 23):
        (ws / "memory" / f"2026-11-{day:02d}.md").write_text(f"- Day {day}: " + "words " * 120 + "\n")
    memory.sync()
    seen: list[str] = []

    def reads(messages: list[BaseMessage]) -> AIMessage:
        seen.append(str(messages[-1].content))
        return ai("NO_REPLY")

    report = _consolidation(memory, ScriptedChatModel(script=[reads]), days=30,
                            max_input_tokens=1_500).run()
    assert report.applied == () and report.error is None
    prompt = seen[0]
    assert "### memory/2026-11-24.md" in prompt and "### memory/2026-11-01.md" not in prompt
    assert "older log(s) not shown" in prompt
    from openclaw_memory.indexing.tokens import count_tokens
    shown = prompt.split("Today is", 1)[1]
    assert count_tokens(shown) <= 1_500 + 50


def test_consolidation_refuses_group_chats_and_its_node_skips_them(memory: MemoryIndex,
                                                                    ws: Path) -> None:
    consolidation = _consolidation(memory)
    with pytest.raises(OpenClawMemoryError, match="direct chats only"):
        consolidation.run(chat_type="group")
    state = {"messages": [], "compaction_count": 0, "memory_flush_compaction_count": 0}
    config = {"configurable": {"chat_type": "group"}}
    assert consolidation.update(state, config) == {}
    assert (ws / "MEMORY.md").read_text() == CURATED


def test_a_failing_model_is_reported_and_writes_nothing(memory: MemoryIndex, ws: Path) -> None:
    def fails(messages: list[BaseMessage]) -> AIMessage:
        raise RuntimeError("upstream 500")

    report = _consolidation(memory, ScriptedChatModel(script=[fails])).run()
    assert report.error is not None and "upstream 500" in report.error
    garbled = _consolidation(memory, ScriptedChatModel(script=[ai("I think Ada moved?")])).run()
    assert garbled.error is not None and "without a proposal" in garbled.error
    assert (ws / "MEMORY.md").read_text() == CURATED


def _graph(memory: MemoryIndex, model: ScriptedChatModel) -> Any:
    def agent(state: MemoryGraphState) -> dict[str, Any]:
        return {"messages": [AIMessage(content="Sure.")]}

    graph = StateGraph(MemoryGraphState)
    graph.add_node("consolidate", memory_consolidation_node(memory, model, clock=lambda: NOW))
    graph.add_node("agent", agent)
    graph.add_edge(START, "consolidate")
    graph.add_edge("consolidate", "agent")
    graph.add_edge("agent", END)
    return graph.compile()


def test_the_node_runs_once_per_cycle_after_the_flush_and_nothing_reaches_the_stream(
        memory: MemoryIndex, ws: Path) -> None:
    model = ScriptedChatModel(script=[consolidating_model_step], repeat_last=True)
    app = _graph(memory, model)
    not_flushed = {"messages": [HumanMessage(content="hi")], "compaction_count": 1,
                   "memory_flush_compaction_count": 0}
    assert "memory_consolidation_compaction_count" not in app.invoke(not_flushed)
    assert model.calls == []
    flushed = {**not_flushed, "memory_flush_compaction_count": 1}
    streamed = list(app.stream(flushed, stream_mode=["messages", "updates"]))
    assert len(model.calls) == 1 and "Berlin" in (ws / "MEMORY.md").read_text()
    messages = [chunk for mode, chunk in streamed if mode == "messages"]
    assert all("propose_memory_edits" not in json.dumps(str(m)) for m in messages)
    assert [m[0].content for m in messages] == ["Sure."]
    updates = [chunk for mode, chunk in streamed if mode == "updates"]
    assert updates[0]["consolidate"]["memory_consolidation_compaction_count"] == 1
    assert "messages" not in updates[0]["consolidate"]
    again = app.invoke({**flushed, "memory_consolidation_compaction_count": 1})
    assert len(model.calls) == 1 and again["memory_consolidation_compaction_count"] == 1


def test_the_cli_prints_a_dry_run_diff_then_applies_with_the_real_openai_client(
        ws: Path, tmp_path: Path) -> None:
    def model(request: RecordedRequest) -> Reply:
        prompt = request.json["messages"][-1]["content"]
        return chat_reply(request, None, [wire_tool_call("propose_memory_edits",
                                                         {"edits": propose(prompt)})])

    env = {"OPENAI_API_KEY": "sk-test", "OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state"),
           "PATH": "/usr/bin:/bin"}
    with FakeOpenAIServer() as server:
        server.route(CHAT_PATH, model)
        base = [ENTRY_POINT, "--workspace", str(ws), "--provider", "none", "consolidate",
                "--model", "openai:gpt-4o-mini", "--base-url", server.base_url, "--days", "3650"]
        dry = subprocess.run([*base, "--dry-run"], capture_output=True, text=True, env=env,
                             timeout=120)
        assert dry.returncode == 0, dry.stderr
        assert "+- Ada lives in Berlin." in dry.stdout and "dry run: nothing was written" in dry.stdout
        assert (ws / "MEMORY.md").read_text() == CURATED
        applied = subprocess.run(base, capture_output=True, text=True, env=env, timeout=120)
        assert applied.returncode == 0, applied.stderr
        assert "updated MEMORY.md#L3" in applied.stdout
        again = subprocess.run([*base, "--json"], capture_output=True, text=True, env=env,
                               timeout=120)
        assert json.loads(again.stdout)["applied"] == []
        body = server.requests[-1].json
        assert body["tool_choice"]["function"]["name"] == "propose_memory_edits"
    assert "Berlin" in (ws / "MEMORY.md").read_text()
    assert "Paris" in "".join(p.read_text() for p in (ws / "memory-history").glob("*.md"))


@pytest.mark.parametrize(("model", "says"), [
    ("nonsense-provider:x", "Name it as provider:model"),
    ("openai:gpt-4o-mini", "no API key: set the provider's (OPENAI_API_KEY"),
    ("gpt-4o-mini", "no API key")])
def test_the_cli_says_in_one_line_why_the_model_cannot_be_built_and_what_to_do(
        ws: Path, tmp_path: Path, model: str, says: str) -> None:
    result = subprocess.run([ENTRY_POINT, "--workspace", str(ws), "--provider", "none",
                             "consolidate", "--model", model, "--dry-run"],
                            capture_output=True, text=True, timeout=120,
                            env={"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "s"),
                                 "PATH": "/usr/bin:/bin"})
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("openclaw-memory: error:")
    assert f"cannot use the chat model {model!r}" in result.stderr and says in result.stderr


def test_an_unreachable_server_or_a_refused_key_is_one_error_line_saying_what_to_check(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    from openclaw_memory.cli.app import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with socket.socket() as closed, FakeOpenAIServer() as server:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: the connection is refused
        nobody = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
        refused = json_reply({"error": {"message": "Incorrect API key provided",
                                        "type": "invalid_request_error", "code": "invalid_api_key"}},
                             401)
        server.route(CHAT_PATH, lambda request: refused)
        cases = [(nobody, f"cannot reach {nobody}: check --base-url"),
                 (server.base_url, "the server refused the key")]
        for base_url, says in cases:
            code = main(["--workspace", str(ws), "--index", str(tmp_path / "i.sqlite"),
                         "--provider", "none", "consolidate", "--model", "openai:gpt-4o-mini",
                         "--base-url", base_url, "--dry-run"])
            err = capsys.readouterr().err
            assert code == 3 and "Traceback" not in err
            assert err.count("\n") == 1, err
            assert err.startswith("openclaw-memory: error: consolidation failed"), err
            assert says in err, err


def test_a_local_server_needs_no_key(ws: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.route(CHAT_PATH, lambda request: chat_reply(request, None, [wire_tool_call(
            "propose_memory_edits", {"edits": []})]))
        result = subprocess.run([ENTRY_POINT, "--workspace", str(ws), "--provider", "none",
                                 "consolidate", "--model", "openai:local-model", "--base-url",
                                 server.base_url, "--dry-run"],
                                capture_output=True, text=True, timeout=120,
                                env={"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "s"),
                                     "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert "MEMORY.md is current" in result.stdout


def test_with_create_agent_it_consolidates_once_per_compaction_right_after_the_flush(
        memory: MemoryIndex, ws: Path) -> None:
    events: list[str] = []

    def flush(messages: list[BaseMessage]) -> AIMessage:
        events.append("flush")
        return ai("NO_REPLY")

    def consolidate(messages: list[BaseMessage]) -> AIMessage:
        events.append("consolidate")
        return consolidating_model_step(messages)

    def summary(messages: list[BaseMessage]) -> AIMessage:
        events.append("summary")
        return ai("the user sent status updates")

    summarizer = SummarizationMiddleware(ScriptedChatModel(script=[summary], repeat_last=True),
                                         trigger=("tokens", 700), keep=("messages", 2))
    agent = create_agent(
        ScriptedChatModel(script=[ai("ok " * 40)], repeat_last=True), tools=[],
        middleware=[
            MemoryFlushMiddleware(memory, ScriptedChatModel(script=[flush], repeat_last=True),
                                  summarization=summarizer, context_window=1000,
                                  reserve_tokens_floor=200, soft_threshold_tokens=200),
            MemoryConsolidationMiddleware(memory, ScriptedChatModel(script=[consolidate],
                                                                    repeat_last=True),
                                          clock=lambda: NOW),
            summarizer],
        checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "c"}}
    streamed = []
    for _ in range(20):
        streamed += [chunk for chunk, _meta in agent.stream(
            {"messages": [HumanMessage("status " * 40)]}, config, stream_mode="messages")]
    assert events.count("summary") >= 2
    cycles = "".join(e[0].upper() for e in events).split("S")
    assert all(c == "FC" for c in cycles[:-1]), events  # flush, then consolidation, per cycle
    assert "Ada lives in Berlin." in (ws / "MEMORY.md").read_text()
    assert all("propose_memory_edits" not in str(getattr(c, "tool_call_chunks", "")) and
               "Berlin" not in str(c.content) for c in streamed)


class _NoForcedChoice(ScriptedChatModel):
    """A provider whose bind_tools refuses tool_choice, as some do."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        if "tool_choice" in kwargs:
            raise NotImplementedError("tool_choice is not supported")
        return super().bind_tools(tools)


def test_a_model_that_cannot_be_forced_to_call_the_tool_still_consolidates(
        memory: MemoryIndex, ws: Path) -> None:
    model = _NoForcedChoice(script=[consolidating_model_step])
    report = _consolidation(memory, model).run()
    assert "updated MEMORY.md#L3" in report.applied and model.bound_tools


@pytest.mark.parametrize("lines", ["memory/2026-11-24.md#L1", "memory/projects.md#L3",
                                   "../outside/victim.md#L3", "/etc/passwd#L3"])
def test_lines_of_another_file_are_never_taken_for_the_curated_files(
        memory: MemoryIndex, ws: Path, lines: str) -> None:
    proposal = [{"action": "remove", "lines": lines},
                {"action": "update", "lines": lines, "text": "- Ada lives in Rome."}]
    model = ScriptedChatModel(script=[ai("", call("propose_memory_edits", edits=proposal))])
    report = _consolidation(memory, model).run()
    assert report.error is None and report.applied == ()
    assert all("only MEMORY.md is edited" in why for why in report.skipped), report.skipped
    assert (ws / "MEMORY.md").read_text() == CURATED


def test_one_run_takes_away_at_most_a_quarter_of_the_curated_lines(tmp_path: Path) -> None:
    root = tmp_path / "big"
    (root / "memory").mkdir(parents=True)
    facts = "".join(f"- Fact number {n}.\n" for n in range(1, 13))
    (root / "MEMORY.md").write_text(facts)
    proposal = [{"action": "remove", "lines": "L1-L12", "reason": "clean up"},
                {"action": "remove", "lines": "L1"}, {"action": "remove", "lines": "L2-L3"},
                {"action": "update", "lines": "L4-L6", "text": "- Facts 4-6."},
                {"action": "remove", "lines": "L7"}]
    model = ScriptedChatModel(script=[ai("", call("propose_memory_edits", edits=proposal))])
    with MemoryIndex.open(root, index_path=tmp_path / "big.sqlite", **OPTS) as memory:
        memory.sync()
        report = _consolidation(memory, model).run()
    # 12 lines: 3 may go (L1, L2-L3); the update would take two more, L7 one more.
    assert report.applied == ("removed MEMORY.md#L2-L3", "removed MEMORY.md#L1")
    assert sum("one run takes away at most 3" in s for s in report.skipped) == 3, report.skipped
    assert (root / "MEMORY.md").read_text().count("- Fact number") == 9


@pytest.mark.parametrize("text", ["- Ada lives in\x00Rome.", "- Ada lives in \ud800 Rome.",
                                  "- " + "x" * 70_000])
def test_a_hostile_proposal_is_refused_in_the_report_never_raised(
        memory: MemoryIndex, ws: Path, text: str) -> None:
    proposal = [{"action": "update", "lines": "L3", "text": text, "reason": "bad\x00\ud800"},
                {"action": "add", "text": text}]
    model = ScriptedChatModel(script=[ai("", call("propose_memory_edits", edits=proposal))])
    consolidation = _consolidation(memory, model)
    report = consolidation.run()
    assert report.error is None and report.applied == () and len(report.skipped) == 2
    assert all(len(s) < 400 for s in report.skipped)
    assert (ws / "MEMORY.md").read_text() == CURATED
    state = {"messages": [], "compaction_count": 0, "memory_flush_compaction_count": 0}
    assert "memory_consolidation_compaction_count" in consolidation.update(state)  # no raise
