"""The agent surface as agent builders drive it: the real ``ChatOpenAI`` over HTTP to a scripted
OpenAI-compatible server on 127.0.0.1 that reports ``usage`` (system prompt and tool schemas
included, as every real server does), with README's ``create_agent`` set-up and a hand-built
``StateGraph``; ``invoke``, ``stream`` (messages, updates) and ``astream_events`` v2, with a
user callback handler and a tracer attached.

What must hold: a flush before every compaction; nothing of the flush in any stream or user
handler while the tracer records it as an internal child run of the agent's trace; no citation
handed to the model (or streamed) in group chats; a failing flush bounded and recorded, its
notes written once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_brain import Brain, is_flush, text_of
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tracers.langchain import LangChainTracer
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langsmith import Client
from openai_server import CHAT_PATH, FakeOpenAIServer, json_reply
from test_integration_langgraph_agent import _load_agent_module

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import (
    FLUSH_PROMPT,
    FLUSH_SYSTEM_PROMPT,
    CitationPolicyMiddleware,
    MemoryFlushMiddleware,
    MemoryRecallPromptMiddleware,
)
from openclaw_memory.langgraph.flush import FLUSH_RUN_NAME
from openclaw_memory.langgraph.silent import INTERNAL_TAG

STAGING = "the staging deploy region is eu-central-1 (Frankfurt)"
FILLER = "Status update {n}: the dry run went fine and the dashboards look normal; nothing to decide."
# README's set-up scaled down 25x: a 7 800-token system prompt against a 100 000-token trigger
# becomes ~1 900 tokens against 3 000 (+ tool schemas): the messages alone never reach it.
SYSTEM_PROMPT = "You are the team's assistant. " + "Follow the house style guide carefully. " * 190
TRIGGER_TOKENS = 3_000
SILENT_MARKERS = ("NO_REPLY", FLUSH_PROMPT[:40], FLUSH_SYSTEM_PROMPT[:40], "memory_write")


# ---------------------------------------------------------------------- observers


class UserHandler(BaseCallbackHandler):
    """What a UI's handler would receive: every callback, as text."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.seen.append(f"chat_model_start {messages}")

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.seen.append(f"token {token} {kwargs.get('chunk')}")

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.seen.append(f"llm_end {response}")

    def on_tool_start(self, serialized: Any, input_str: str, **kwargs: Any) -> None:
        self.seen.append(f"tool_start {serialized.get('name')} {input_str}")


def _tracer(server: FakeOpenAIServer) -> LangChainTracer:
    """LangSmith's own tracer and client, posting runs over HTTP to the local server."""
    client = Client(api_url=server.url, api_key="test", auto_batch_tracing=False)
    return LangChainTracer(project_name="test", client=client)


def _leaks(texts: list[str]) -> list[str]:
    return [t[:120] for t in texts if any(marker in t for marker in SILENT_MARKERS)]


def _assert_flush_before_each_compaction(brain: Brain, minimum: int = 1) -> None:
    kinds = brain.kinds()
    assert kinds.count("C") >= minimum, kinds
    for cycle in kinds.split("C")[:-1]:
        assert cycle.count("F") == 1, kinds  # exactly one flush turn in every cycle


def _assert_traced_as_internal_child(tracer: LangChainTracer, server: FakeOpenAIServer) -> None:
    tracer.wait_for_futures()
    runs = server.trace_runs
    flushes = [r for r in runs.values() if r.get("name") == FLUSH_RUN_NAME]
    assert flushes, sorted({str(r.get("name")) for r in runs.values()})
    for run in flushes:
        assert run.get("parent_run_id") in runs  # a child run, not a detached root trace
        assert INTERNAL_TAG in (run.get("tags") or [])
        root = runs[run["trace_id"]]
        assert root.get("parent_run_id") is None and root.get("name") != FLUSH_RUN_NAME
    flush_ids = {r["id"] for r in flushes}
    assert any(r.get("run_type") == "llm" for r in runs.values() if r.get("parent_run_id") in flush_ids)


# ---------------------------------------------------------------------- fixtures


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "agent"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Private\n\n- The user's passport number ends in 4471.\n")
    return ws


def _model(server: FakeOpenAIServer, **options: Any) -> ChatOpenAI:
    return ChatOpenAI(model="scripted-model", base_url=server.base_url, api_key="sk-test",  # type: ignore[arg-type]
                      max_retries=0, timeout=10, **options)


def _readme_agent(index: MemoryIndex, model: ChatOpenAI) -> Any:
    summarizer = SummarizationMiddleware(model, trigger=("tokens", TRIGGER_TOKENS), keep=("messages", 4))
    return create_agent(model, tools=memory_tools(index), checkpointer=InMemorySaver(),
                        system_prompt=SYSTEM_PROMPT, middleware=[
                            MemoryFlushMiddleware(index, model, summarization=summarizer),
                            summarizer, CitationPolicyMiddleware("auto"),
                            MemoryRecallPromptMiddleware("auto")])


def _config(thread: str, chat_type: str = "direct", *callbacks: BaseCallbackHandler) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "chat_type": chat_type},
            "callbacks": list(callbacks)}


def _say(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


# ---------------------------------------------------------------------- create_agent


@pytest.mark.parametrize("streaming", [False, True])
def test_readme_agent_flushes_before_every_compaction_with_reported_usage(
        server: FakeOpenAIServer, workspace: Path, streaming: bool) -> None:
    brain = Brain(workspace / daily_note_path("UTC"))
    server.route(CHAT_PATH, brain)
    model = _model(server, streaming=streaming, stream_usage=True)
    handler, tracer = UserHandler(), _tracer(server)
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        agent = _readme_agent(index, model)
        config = _config("t", "direct", handler, tracer)
        agent.invoke(_say(f"Hello! Remember that {STAGING}. Thanks."), config)
        seen: list[str] = []
        for n in range(14):
            for chunk in agent.stream(_say(FILLER.format(n=n)), config, stream_mode=["messages", "updates"]):
                seen.append(repr(chunk))
        state = agent.get_state(config).values
    _assert_flush_before_each_compaction(brain, minimum=2)
    first_compaction = next(snapshot for kind, snapshot in brain.events if kind == "compaction")
    assert "eu-central-1" in first_compaction  # saved before the message was summarised away
    assert _leaks(seen) == [] and _leaks(handler.seen) == []
    assert _leaks([repr(m) for m in state["messages"]]) == []
    _assert_traced_as_internal_child(tracer, server)


async def test_astream_events_and_handlers_see_nothing_of_the_flush(
        server: FakeOpenAIServer, workspace: Path) -> None:
    brain = Brain(workspace / daily_note_path("UTC"))
    server.route(CHAT_PATH, brain)
    model = _model(server, streaming=True, stream_usage=True)
    handler, tracer = UserHandler(), _tracer(server)
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        agent = _readme_agent(index, model)
        config = _config("t", "direct", handler, tracer)
        events: list[dict[str, Any]] = []
        for text in [f"Remember that {STAGING}. Thanks.", *(FILLER.format(n=n) for n in range(12))]:
            events += [e async for e in agent.astream_events(_say(text), config, version="v2")]
    _assert_flush_before_each_compaction(brain, minimum=2)
    assert any(e["event"] == "on_chat_model_stream" for e in events)  # tokens did stream
    assert _leaks([json.dumps(e["data"], default=repr) for e in events]) == []
    assert not [e for e in events if e.get("name") == FLUSH_RUN_NAME]
    assert _leaks(handler.seen) == []
    _assert_traced_as_internal_child(tracer, server)


@pytest.mark.parametrize("streaming", [False, True])
def test_a_handler_attached_to_the_model_object_sees_nothing_of_the_flush(
        server: FakeOpenAIServer, workspace: Path, streaming: bool) -> None:
    brain = Brain(workspace / daily_note_path("UTC"))
    server.route(CHAT_PATH, brain)
    on_model = UserHandler()
    model = _model(server, streaming=streaming, stream_usage=True, callbacks=[on_model])
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        agent = _readme_agent(index, model)
        config = _config("m", "direct")
        for text in [f"Remember that {STAGING}. Thanks.", *(FILLER.format(n=n) for n in range(12))]:
            agent.invoke(_say(text), config)
    _assert_flush_before_each_compaction(brain, minimum=2)
    assert any("chat_model_start" in t for t in on_model.seen)  # it saw the user's turns
    assert _leaks(on_model.seen) == []


async def test_group_chat_tokens_carry_no_citation_because_the_model_never_had_one(
        server: FakeOpenAIServer, workspace: Path) -> None:
    daily = workspace / daily_note_path("UTC")
    daily.write_text(f"- {STAGING[0].upper()}{STAGING[1:]}.\n")
    brain = Brain(daily)
    server.route(CHAT_PATH, brain)
    model = _model(server, streaming=True)
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        agent = _readme_agent(index, model)
        before = len(server.requests_to(CHAT_PATH))
        events = [e async for e in agent.astream_events(
            _say("Which region is staging deployed to?"), _config("g", "group"), version="v2")]
        sent = server.requests_to(CHAT_PATH)[before:]
        final = (await agent.aget_state(_config("g", "group"))).values["messages"][-1]
    streamed = "".join(e["data"]["chunk"].text for e in events if e["event"] == "on_chat_model_stream")
    assert "eu-central-1" in streamed and "eu-central-1" in final.text
    assert "#L" not in streamed and "#L" not in final.text
    for request in sent:
        body = request.json
        assert all("#L" not in text_of(m) and "start_line" not in text_of(m) for m in body["messages"])
        assert "MEMORY.md" not in json.dumps(body.get("tools", []))
        assert "4471" not in request.body.decode()


@pytest.mark.parametrize("status", [500, 400])
def test_a_failing_flush_is_bounded_recorded_and_the_turns_go_on(
        server: FakeOpenAIServer, workspace: Path, status: int) -> None:
    brain = Brain(workspace / daily_note_path("UTC"), fail_flush=status)
    server.route(CHAT_PATH, brain)
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        agent = _readme_agent(index, _model(server))
        config = _config("t")
        answers = [agent.invoke(_say(f"Remember that {STAGING}. Thanks."), config)["messages"][-1]]
        answers += [agent.invoke(_say(FILLER.format(n=n)), config)["messages"][-1] for n in range(14)]
        status_now = index.status()
    assert all(isinstance(a, AIMessage) and a.text.startswith("Noted.") for a in answers)
    compactions = brain.kinds().count("C")
    assert compactions >= 2
    # At most 3 attempts per cycle (a context-length 400 is also retried on shorter histories).
    per_attempt = 3 if status == 400 else 1
    assert brain.flush_requests <= 3 * per_attempt * (compactions + 1)
    assert status_now["flush_failures"] >= 1
    assert str(status) in status_now["last_flush_error"]["error"]


def test_a_flush_that_fails_after_writing_is_not_redone(server: FakeOpenAIServer, workspace: Path) -> None:
    daily = workspace / daily_note_path("UTC")
    brain = Brain(daily, rephrase=True)

    def flaky(request: Any) -> Any:
        # The flush's follow-up request (after its writes) fails, every time.
        if is_flush(request) and request.json["messages"][-1]["role"] == "tool":
            return json_reply({"error": {"message": "upstream failed", "type": "server_error"}}, 500)
        return brain(request)

    server.route(CHAT_PATH, flaky)
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        agent = _readme_agent(index, _model(server))
        config = _config("t")
        agent.invoke(_say(f"Remember that {STAGING}. Thanks."), config)
        for n in range(14):
            agent.invoke(_say(FILLER.format(n=n)), config)
    notes = daily.read_text()
    assert brain.kinds().count("C") >= 2
    assert notes.count("eu-central-1") == 1, notes  # once, although the model rewords per attempt


# ---------------------------------------------------------------------- hand-built StateGraph


async def test_stategraph_agent_with_reported_usage_flushes_first_and_streams_nothing_silent(
        server: FakeOpenAIServer, workspace: Path) -> None:
    module = _load_agent_module()
    brain = Brain(workspace / daily_note_path("UTC"))
    server.route(CHAT_PATH, brain)
    model = _model(server, streaming=True, stream_usage=True)
    handler, tracer = UserHandler(), _tracer(server)
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        # The window counts the system prompt and tool schemas only through reported usage.
        agent = module.build_agent(index, model, context_window=1_800, reserve_tokens_floor=400,
                                   soft_threshold_tokens=200, keep_messages=4,
                                   checkpointer=InMemorySaver())
        config = _config("s", "direct", handler, tracer)
        events: list[dict[str, Any]] = []
        for text in [f"Remember that {STAGING}. Thanks.", *(FILLER.format(n=n) for n in range(36))]:
            events += [e async for e in agent.astream_events(_say(text), config, version="v2")]
        updates = [u async for u in agent.astream(_say("One more status update."), config,
                                                  stream_mode="updates")]
    _assert_flush_before_each_compaction(brain, minimum=2)
    assert _leaks([json.dumps(e["data"], default=repr) for e in events]) == []
    assert _leaks([repr(u) for u in updates]) == [] and _leaks(handler.seen) == []
    _assert_traced_as_internal_child(tracer, server)
