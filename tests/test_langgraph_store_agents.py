"""The store where users put it: ``create_agent(..., store=)`` with ``get_store()`` and
``InjectedStore`` tools, a ``StateGraph`` compiled with ``store=``, and langmem's tools."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.config import get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from openclaw_memory.langgraph import OpenClawMemoryStore


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[OpenClawMemoryStore]:
    (tmp_path / "ws").mkdir()
    with OpenClawMemoryStore.open(tmp_path / "ws", index_path=tmp_path / "i.sqlite",
                                  embedding={"provider": "none"}) as opened:
        yield opened


@tool
def remember(fact: str, config: RunnableConfig) -> str:
    """Save a fact about the user."""
    user = config["configurable"]["user_id"]
    get_store().put(("facts", user), uuid.uuid4().hex[:8], {"content": fact})
    return "saved"


@tool
def recall(query: str, config: RunnableConfig,
           store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Look up facts about the user."""
    user = config["configurable"]["user_id"]
    return json.dumps([item.value["content"] for item in store.search(("facts", user), query=query)])


def tool_user(messages: list[BaseMessage]) -> AIMessage:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return ai(f"Tool said: {last.content}")
    text = str(last.content)
    if text.startswith("remember "):
        return ai("", call("remember", fact=text.removeprefix("remember ")))
    return ai("", call("recall", query=text))


def test_create_agent_tools_reach_the_store_with_get_store_and_injected_store(
        store: OpenClawMemoryStore, tmp_path: Path) -> None:
    agent = create_agent(ScriptedChatModel(script=[tool_user], repeat_last=True),
                         tools=[remember, recall], store=store)
    config = {"configurable": {"user_id": "alice"}}
    agent.invoke({"messages": [HumanMessage("remember Alice rides a green bicycle")]}, config)
    reply = agent.invoke({"messages": [HumanMessage("bicycle")]}, config)
    assert "green bicycle" in str(reply["messages"][-1].content)
    other = agent.invoke({"messages": [HumanMessage("bicycle")]},
                         {"configurable": {"user_id": "bob"}})
    assert "Tool said: []" in str(other["messages"][-1].content)
    files = list((tmp_path / "ws" / "memory" / "facts" / "alice").glob("*.md"))
    assert len(files) == 1 and "Alice rides a green bicycle" in files[0].read_text("utf-8")


def test_a_state_graph_compiled_with_the_store_reads_and_writes_it(store: OpenClawMemoryStore) -> None:
    def save(state: MessagesState, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(("notes",), "last", {"content": str(state["messages"][-1].content)})
        return {}

    def answer(state: MessagesState, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        found = runtime.store.search(("notes",), query="espresso")
        return {"messages": [AIMessage(content=found[0].value["content"] if found else "none")]}

    graph = StateGraph(MessagesState)
    graph.add_node("save", save)
    graph.add_node("answer", answer)
    graph.add_edge(START, "save")
    graph.add_edge("save", "answer")
    graph.add_edge("answer", END)
    app = graph.compile(store=store)
    result = app.invoke({"messages": [HumanMessage("Bob's espresso machine is broken")]})
    assert result["messages"][-1].content == "Bob's espresso machine is broken"
    item = store.get(("notes",), "last")
    assert item is not None and item.value == {"content": "Bob's espresso machine is broken"}


def test_langmem_memory_tools_manage_and_search_memories_in_the_store(
        store: OpenClawMemoryStore, tmp_path: Path) -> None:
    langmem = pytest.importorskip("langmem")
    namespace = ("memories", "{langgraph_user_id}")
    manage = langmem.create_manage_memory_tool(namespace=namespace)
    search = langmem.create_search_memory_tool(namespace=namespace)

    def memory_user(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return ai(f"Tool said: {last.content}")
        text = str(last.content)
        if text.startswith("remember "):
            return ai("", call("manage_memory", content=text.removeprefix("remember "),
                               action="create"))
        return ai("", call("search_memory", query=text))

    agent = create_agent(ScriptedChatModel(script=[memory_user], repeat_last=True),
                         tools=[manage, search], store=store)
    config = {"configurable": {"langgraph_user_id": "carol"}}
    created = agent.invoke({"messages": [HumanMessage("remember Carol prefers window seats")]}, config)
    assert "created memory" in str(created["messages"][-1].content).lower()
    found = agent.invoke({"messages": [HumanMessage("window seats")]}, config)
    assert "Carol prefers window seats" in str(found["messages"][-1].content)
    items = store.search(("memories", "carol"))
    assert [item.value["content"] for item in items] == ["Carol prefers window seats"]
    on_disk = list((tmp_path / "ws" / "memory" / "memories" / "carol").glob("*.md"))
    assert len(on_disk) == 1 and "Carol prefers window seats" in on_disk[0].read_text("utf-8")
    nobody = agent.invoke({"messages": [HumanMessage("window seats")]},
                          {"configurable": {"langgraph_user_id": "dan"}})
    assert "Carol" not in str(nobody["messages"][-1].content)
