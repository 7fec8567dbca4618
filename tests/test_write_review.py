"""memory_write with a write review: the chat model decides at once whether each related
curated line is kept, updated or removed (as mem0 does), through the edit path with its
history; the note is saved whatever the model does. End to end with the real ``ChatOpenAI``
against the scripted server on 127.0.0.1, in JSON and in SSE."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_brain import text_of
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from openai_server import CHAT_PATH, FakeOpenAIServer, RecordedRequest, Reply, chat_reply, server_error
from openai_server import wire_tool_call as call

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import DemoChatModel
from openclaw_memory.langgraph.write_review import (
    REVIEW_SYSTEM_PROMPT,
    REVIEW_TOOL,
    WriteReview,
    parse_decisions,
)

CURATED = ("# People\n\n- Maya Chen lives in Bristol, in a flat in Redland.\n"
           "- Maya works as a UX researcher at Lumen Health.\n"
           "- Tom Reyes lives in Leeds.\n")
NOTE = "Maya Chen moved out of Bristol: she lives in Lyon now."


def reviewer(request: RecordedRequest) -> Reply:
    """A model that updates the line its note changes and keeps the others."""
    messages = request.json["messages"]
    assert text_of(messages[0]) == REVIEW_SYSTEM_PROMPT
    decisions = []
    for label, text in re.findall(r"^(R\d+): \S+ \(learned [^)]*\): (.+)$", text_of(messages[-1]),
                                  re.MULTILINE):
        if "lives in Bristol" in text:
            decisions.append({"line": label, "action": "update", "reason": "she moved",
                              "text": "- Maya Chen lives in Lyon (before: Bristol)."})
        else:
            decisions.append({"line": label, "action": "keep"})
    return chat_reply(request, None, [call(REVIEW_TOOL, {"decisions": decisions})])


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.route(CHAT_PATH, reviewer)
        yield running


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(CURATED, encoding="utf-8")
    (ws / "memory" / "2026-01-17.md").write_text(
        "# 2026-01-17\n\n- Stayed at Maya's place in Bristol for her birthday.\n",
        encoding="utf-8")
    return ws


def _write(ws: Path, tmp_path: Path, model: Any, content: str = NOTE,
           chat_type: str = "direct") -> tuple[dict[str, Any], MemoryIndex]:
    memory = MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", timezone="UTC")
    memory.sync()
    tools = {t.name: t for t in memory_tools(memory, review_writes=model,
                                             chat_type=chat_type)}  # type: ignore[arg-type]
    out = tools["memory_write"].invoke({"content": content})
    return json.loads(out), memory


@pytest.mark.parametrize("streaming", [False, True])
def test_the_chat_model_updates_the_stale_line_and_the_note_is_saved(
        server: FakeOpenAIServer, workspace: Path, tmp_path: Path, streaming: bool) -> None:
    model = ChatOpenAI(model="scripted", base_url=server.base_url, api_key="sk-test",
                       streaming=streaming)
    payload, memory = _write(workspace, tmp_path, model)
    with memory:
        assert payload["written"] is True
        # Not alike enough to be a related line: the review finds it because it names Maya.
        assert "MEMORY.md#L3" not in [r["citation"] for r in payload.get("related", [])]
        reviewed = {r["citation"]: r for r in payload["reviewed"]}
        assert reviewed["MEMORY.md#L3"]["action"] == "update" and reviewed["MEMORY.md#L3"]["applied"]
        assert all(r["action"] == "keep" for c, r in reviewed.items() if c != "MEMORY.md#L3")
        curated = (workspace / "MEMORY.md").read_text(encoding="utf-8")
        assert "lives in Lyon (before: Bristol)" in curated and "Redland" not in curated
        assert "UX researcher" in curated and "Tom Reyes lives in Leeds" in curated
        history = "".join(p.read_text(encoding="utf-8")
                          for p in (workspace / "memory-history").rglob("*.md"))
        assert "Maya Chen lives in Bristol, in a flat in Redland." in history
        daily = "".join(p.read_text(encoding="utf-8") for p in (workspace / "memory").glob("*.md"))
        assert NOTE in daily  # the note itself, in today's log
        assert "Stayed at Maya's place in Bristol" in daily  # a daily log is never edited
        offered = text_of(server.requests_to(CHAT_PATH)[0].json["messages"][-1])
        assert "memory/2026-01-17.md" not in offered  # daily lines are not offered
        hits = memory.search("Where does Maya live?").results
        assert "Lyon" in hits[0].snippet


def test_a_failing_model_loses_nothing_and_says_why(
        server: FakeOpenAIServer, workspace: Path, tmp_path: Path) -> None:
    server.route(CHAT_PATH, server_error(500))
    model = ChatOpenAI(model="scripted", base_url=server.base_url, api_key="sk-test",
                       max_retries=0)
    payload, memory = _write(workspace, tmp_path, model)
    with memory:
        assert payload["written"] is True and "review_error" in payload
        assert "sk-test" not in payload["review_error"]
        assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == CURATED
        daily = "".join(p.read_text(encoding="utf-8") for p in (workspace / "memory").glob("*.md"))
        assert NOTE in daily


def test_no_review_runs_outside_direct_chats(
        server: FakeOpenAIServer, workspace: Path, tmp_path: Path) -> None:
    model = ChatOpenAI(model="scripted", base_url=server.base_url, api_key="sk-test")
    payload, memory = _write(workspace, tmp_path, model, chat_type="group")
    with memory:
        assert payload["written"] is True and "reviewed" not in payload
        assert server.requests_to(CHAT_PATH) == []
        assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == CURATED


def test_a_note_with_no_related_curated_line_asks_the_model_nothing(
        server: FakeOpenAIServer, workspace: Path, tmp_path: Path) -> None:
    model = ChatOpenAI(model="scripted", base_url=server.base_url, api_key="sk-test")
    payload, memory = _write(workspace, tmp_path, model,
                             content="The dentist moved the check-up to Thursday at 3pm.")
    with memory:
        assert payload["written"] is True and "reviewed" not in payload
        assert server.requests_to(CHAT_PATH) == []


def test_the_demo_model_reviews_offline(workspace: Path, tmp_path: Path) -> None:
    payload, memory = _write(workspace, tmp_path, DemoChatModel())
    with memory:
        updated = [r for r in payload["reviewed"] if r["action"] == "update"]
        assert [r["citation"] for r in updated] == ["MEMORY.md#L3"] and updated[0]["applied"]
        curated = (workspace / "MEMORY.md").read_text(encoding="utf-8")
        assert "she lives in Lyon now" in curated and "Redland" not in curated
        assert "Tom Reyes lives in Leeds" in curated


def test_decisions_read_from_a_call_or_from_json_text_and_bad_ones_are_reported() -> None:
    as_call = AIMessage(content="", tool_calls=[{"name": REVIEW_TOOL, "id": "c1", "args": {
        "decisions": [{"line": "R1", "action": "remove", "reason": "gone"}]}}])
    parsed = parse_decisions(as_call)
    assert not isinstance(parsed, str) and parsed[0].action == "remove"
    as_text = AIMessage(content='Here: {"decisions": [{"line": "R2", "action": "keep"}]}')
    parsed = parse_decisions(as_text)
    assert not isinstance(parsed, str) and parsed[0].line == "R2"
    assert parse_decisions(AIMessage(content="")) == []
    assert isinstance(parse_decisions(AIMessage(content="no idea")), str)
    bad = AIMessage(content='{"decisions": [{"line": "R1", "action": "merge"}]}')
    assert isinstance(parse_decisions(bad), str)


def test_made_up_labels_updates_without_text_and_second_decisions_change_nothing(
        workspace: Path, tmp_path: Path) -> None:
    class Scripted(DemoChatModel):
        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> Any:
            from langchain_core.outputs import ChatGeneration, ChatResult

            decisions = [{"line": "R9", "action": "remove"}, {"line": "R1", "action": "update"},
                         {"line": "R1", "action": "remove"}]
            reply = AIMessage(content="", tool_calls=[{"name": REVIEW_TOOL, "id": "c1",
                                                       "args": {"decisions": decisions}}])
            return ChatResult(generations=[ChatGeneration(message=reply)])

    payload, memory = _write(workspace, tmp_path, WriteReview(Scripted()))
    with memory:
        assert [(r["action"], r["applied"]) for r in payload["reviewed"]] == [("update", False)]
        assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == CURATED


def test_the_review_runs_in_an_async_agent_too(workspace: Path, tmp_path: Path) -> None:
    import asyncio

    memory = MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", timezone="UTC")
    with memory:
        memory.sync()
        tools = {t.name: t for t in memory_tools(memory, review_writes=DemoChatModel())}
        payload = json.loads(asyncio.run(tools["memory_write"].ainvoke({"content": NOTE})))
        assert [r["citation"] for r in payload["reviewed"] if r["applied"]] == ["MEMORY.md#L3"]
        assert "she lives in Lyon now" in (workspace / "MEMORY.md").read_text(encoding="utf-8")
