"""End to end with the real ``ChatOpenAI`` against the scripted server on 127.0.0.1: an agent
told "I moved to Berlin" finds the stale fact, corrects ``MEMORY.md`` with ``memory_edit``
(the old fact kept in the history), and later answers "Berlin" from memory."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_brain import text_of
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from openai_server import CHAT_PATH, FakeOpenAIServer, RecordedRequest, Reply, chat_reply
from openai_server import wire_tool_call as call

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import CitationPolicyMiddleware


def _last_tool_call(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        for tool_call in message.get("tool_calls") or []:
            return str(tool_call["function"]["name"])
    return ""


def corrector(request: RecordedRequest) -> Reply:
    """A model that keeps MEMORY.md true: search, read the lines, edit, answer."""
    messages = request.json["messages"]
    last = messages[-1]
    question = next(text_of(m) for m in reversed(messages) if m["role"] == "user")
    if last["role"] == "user":
        query = "where does the user live" if "moved" in question else question
        return chat_reply(request, None, [call("memory_search", {"query": query})])
    result = json.loads(text_of(last))
    name = _last_tool_call(messages)
    if name == "memory_search" and "moved" in question:
        top = result["results"][0]
        return chat_reply(request, None, [call("memory_get", {"path": top["citation"]})])
    if name == "memory_get":
        line = next(i for i, text in enumerate(result["text"].split("\n"))
                    if "lives in" in text)
        number = result["from_line"] + line
        old = result["text"].split("\n")[line]
        return chat_reply(request, None, [call("memory_edit", {
            "citation": f"{result['path']}#L{number}", "expected": old,
            "replacement": "- The user lives in Berlin and works at Globex.",
            "reason": "the user said they moved"})])
    if name == "memory_edit":
        return chat_reply(request, "Updated: you live in Berlin now." if result["applied"]
                          else f"Could not update: {result.get('current')}")
    top = result["results"][0]["snippet"] if result.get("results") else ""
    city = re.search(r"lives in (\w+)", top)
    return chat_reply(request, f"You live in {city.group(1)}." if city else "I don't know.")


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.route(CHAT_PATH, corrector)
        yield running


@pytest.mark.parametrize("streaming", [False, True])
def test_an_agent_told_of_a_move_corrects_memory_md_and_answers_from_it(
        server: FakeOpenAIServer, tmp_path: Path, streaming: bool) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# About the user\n\n- The user lives in Paris and works at "
                                  "Acme as a data engineer.\n- The user is vegetarian.\n")
    model = ChatOpenAI(model="scripted", base_url=server.base_url, api_key="sk-test",
                       streaming=streaming)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"},
                          timezone="UTC") as memory:
        agent = create_agent(model, tools=memory_tools(memory),
                             middleware=[CitationPolicyMiddleware("auto")])
        told = agent.invoke({"messages": [HumanMessage("I moved to Berlin last month and "
                                                       "now work at Globex.")]})
        assert "Updated" in told["messages"][-1].text
        asked = agent.invoke({"messages": [HumanMessage("Where do I live?")]})
        assert asked["messages"][-1].text == "You live in Berlin."
        history = memory.get(sorted((ws / "memory-history").glob("*.md"))[0].relative_to(ws)
                             .as_posix())
    text = (ws / "MEMORY.md").read_text()
    assert "Berlin" in text and "Paris" not in text and "vegetarian" in text
    # The line README's session shows: replaced in place, dated the day it was learned.
    assert re.fullmatch(r"- The user lives in Berlin and works at Globex\. \(as of \d{4}-\d\d-\d\d\)",
                        text.split("\n")[2])
    assert "Paris" in history.text and "the user said they moved" in history.text
