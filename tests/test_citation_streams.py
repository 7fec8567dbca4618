"""In group and channel chats nothing a user can stream carries a citation: not the tokens of
``astream_events`` or of LangGraph's messages stream, not ``on_chat_model_end``'s output, not
a handler attached to the model object; a citation split across tokens included. Real
``ChatOpenAI`` (streaming and not) against the scripted server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from openai_server import CHAT_PATH, FakeOpenAIServer, RecordedRequest, Reply, chat_reply

from openclaw_memory.langgraph import CitationPolicyMiddleware
from openclaw_memory.langgraph.citation_stream import CitationStreamFilter
from openclaw_memory.langgraph.citations import strip_citations

ANSWER = ("As noted in memory/2026-11-21.md#L3-L5, you like green tea. "
          "Your flight leaves at nine (MEMORY.md#L2). Per sessions/team-chat.jsonl#L7 the "
          "rehearsal went fine.\nSource: memory/trips.md#L4-L9")


def _feed(pieces: list[str]) -> str:
    gate = CitationStreamFilter(strip_citations)
    return "".join(gate.feed(p) for p in pieces) + gate.finish()


@given(st.lists(st.integers(1, 9), min_size=1, max_size=60))
def test_any_split_of_the_tokens_lets_no_citation_through(sizes: list[int]) -> None:
    pieces, at = [], 0
    for size in sizes * 10:
        if at >= len(ANSWER):
            break
        pieces.append(ANSWER[at:at + size])
        at += size
    pieces.append(ANSWER[at:])
    shown = _feed(pieces)
    assert ".md#L" not in shown and "#L" not in shown and "jsonl" not in shown
    assert "green tea" in shown and "flight leaves at nine" in shown and "rehearsal" in shown


def test_text_without_citations_streams_through_unchanged() -> None:
    text = "We chose PostgreSQL in March, see the notes from the meeting.\n- tea\n"
    assert _feed([text[i:i + 3] for i in range(0, len(text), 3)]) == text


def _tiny_pieces(request: RecordedRequest) -> Reply:
    """The answer streamed three characters at a time: a citation always arrives split."""
    reply = chat_reply(request, ANSWER)
    if not (request.json or {}).get("stream"):
        return reply
    events = []
    for line in reply.body.decode().split("\n\n"):
        if not line.startswith("data: {"):
            continue
        event = json.loads(line[6:])
        delta = (event.get("choices") or [{}])[0].get("delta", {})
        content = delta.get("content")
        if content:
            for i in range(0, len(content), 3):
                piece = json.loads(json.dumps(event))
                piece["choices"][0]["delta"] = {"content": content[i:i + 3]}
                events.append(piece)
        else:
            events.append(event)
    payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return Reply(200, payload.encode(), {"Content-Type": "text/event-stream"})


class Tokens(BaseCallbackHandler):
    """A handler a user attaches to the model object."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        self.seen.append(token)

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.seen.extend(g.text for gs in response.generations for g in gs)


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.route(CHAT_PATH, _tiny_pieces)
        yield running


def _agent(server: FakeOpenAIServer, handler: Tokens, *, streaming: bool) -> Any:
    model = ChatOpenAI(model="gpt-4o-mini", base_url=server.base_url, api_key="sk-test",
                       streaming=streaming, callbacks=[handler])
    return create_agent(model, tools=[], middleware=[CitationPolicyMiddleware("auto")])


@pytest.mark.parametrize("streaming", [True, False])
async def test_group_chat_events_and_model_handlers_carry_no_citation(
        server: FakeOpenAIServer, streaming: bool) -> None:
    handler = Tokens()
    agent = _agent(server, handler, streaming=streaming)
    seen: list[str] = []
    async for event in agent.astream_events(
            {"messages": [HumanMessage("what do I drink?")]},
            {"configurable": {"chat_type": "group"}}, version="v2"):
        if event["event"] == "on_chat_model_stream":
            seen.append(event["data"]["chunk"].text)
        elif event["event"] == "on_chat_model_end":
            seen.append(event["data"]["output"].text)
        elif event["event"] == "on_chain_end":
            seen.append(json.dumps(event["data"].get("output"), default=str))
    everything = "".join(seen) + "".join(handler.seen)
    assert ".md#L" not in everything, everything
    assert "green tea" in everything and handler.seen


async def test_direct_chats_still_stream_their_citations_token_by_token(
        server: FakeOpenAIServer) -> None:
    handler = Tokens()
    agent = _agent(server, handler, streaming=True)
    tokens = [event["data"]["chunk"].text async for event in agent.astream_events(
        {"messages": [HumanMessage("what do I drink?")]}, version="v2")
        if event["event"] == "on_chat_model_stream"]
    assert len(tokens) > 10 and "memory/2026-11-21.md#L3-L5" in "".join(tokens)


def test_group_chat_messages_stream_and_final_state_carry_no_citation(
        server: FakeOpenAIServer) -> None:
    agent = _agent(server, Tokens(), streaming=True)
    config = {"configurable": {"chat_type": "group"}}
    streamed = [chunk.text for chunk, _ in agent.stream(
        {"messages": [HumanMessage("what do I drink?")]}, config, stream_mode="messages")]
    final = agent.invoke({"messages": [HumanMessage("what do I drink?")]}, config)
    assert ".md#L" not in "".join(streamed) + final["messages"][-1].text
    assert "green tea" in final["messages"][-1].text
