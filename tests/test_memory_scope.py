"""One compiled graph, many users: the memory tools and the flush find whose memory a call is
for in the run (configurable or runtime context), and no user sees another's notes."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import PutOp, SearchOp

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import today
from openclaw_memory.langchain import MemoryScope, ScopeError, memory_tools
from openclaw_memory.langgraph import MemoryFlush

FACT = re.compile(r"(?i)remember that (.+?)\.?$")


def brain(messages: list[BaseMessage]) -> AIMessage:
    """A model that saves "remember that X" and answers questions from memory_search."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        if last.name == "memory_search" and last.status != "error":
            hits = json.loads(str(last.content)).get("results") or []
            return ai(f"From memory: {hits[0]['snippet']}" if hits else "Nothing in memory.")
        if last.name == "memory_search":
            return ai("Nothing in memory.")
        return ai("Noted.")
    text = str(last.content)
    fact = FACT.search(text)
    if fact:
        return ai("", call("memory_write", content=fact.group(1)))
    return ai("", call("memory_search", query=text))


def model() -> ScriptedChatModel:
    return ScriptedChatModel(script=[brain], repeat_last=True)


@pytest.fixture()
def index(tmp_path: Path) -> Iterator[MemoryIndex]:
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    (tmp_path / "ws" / "MEMORY.md").write_text("# Shared\n\nThe office wifi is kestrel-guest.\n",
                                               encoding="utf-8")
    with MemoryIndex.open(tmp_path / "ws", index_path=tmp_path / "i.sqlite",
                          embedding={"provider": "none"}) as memory:
        yield memory


def answer(agent: Any, text: str, user: str, thread: str) -> str:
    config = {"configurable": {"user_id": user, "thread_id": thread}}
    result = agent.invoke({"messages": [HumanMessage(text)]}, config)
    return str(result["messages"][-1].content)


async def aanswer(agent: Any, text: str, user: str, thread: str) -> str:
    config = {"configurable": {"user_id": user, "thread_id": thread}}
    result = await agent.ainvoke({"messages": [HumanMessage(text)]}, config)
    return str(result["messages"][-1].content)


async def test_two_users_run_one_graph_concurrently_and_neither_sees_the_other(
        index: MemoryIndex, tmp_path: Path) -> None:
    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    agent = create_agent(model(), tools=memory_tools(scope), checkpointer=InMemorySaver())
    facts = {"alice": ["my locker code is 4711", "I am allergic to walnuts"],
             "bob": ["my locker code is 9902", "I am allergic to penicillin"]}
    await asyncio.gather(*(aanswer(agent, f"Remember that {fact}.", user, f"{user}-{i}")
                           for user, said in facts.items() for i, fact in enumerate(said)))
    replies = await asyncio.gather(*(aanswer(agent, "what is my locker code", user, f"{user}-q")
                                     for user in facts))
    assert "4711" in replies[0] and "9902" not in replies[0]
    assert "9902" in replies[1] and "4711" not in replies[1]
    allergies = await asyncio.gather(*(aanswer(agent, "allergic", user, f"{user}-a") for user in facts))
    assert "walnuts" in allergies[0] and "penicillin" not in allergies[0]
    assert "penicillin" in allergies[1] and "walnuts" not in allergies[1]
    day = today().isoformat()
    alice = (tmp_path / "ws" / "memory" / "users" / "alice" / f"{day}.md").read_text("utf-8")
    bob = (tmp_path / "ws" / "memory" / "users" / "bob" / f"{day}.md").read_text("utf-8")
    assert "4711" in alice and "walnuts" in alice and "9902" not in alice
    assert "9902" in bob and "penicillin" in bob and "4711" not in bob
    # The shared curated file is outside every user's area: nobody's search returns it.
    assert "Nothing in memory" in answer(agent, "office wifi", "alice", "alice-w")


def test_the_runtime_context_names_the_user_too(index: MemoryIndex) -> None:
    @dataclass
    class Context:
        user_id: str

    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    agent = create_agent(model(), tools=memory_tools(scope), context_schema=Context)
    agent.invoke({"messages": [HumanMessage("Remember that my desk is 3B.")]},
                 context=Context(user_id="carol"))
    assert "3B" in str(agent.invoke({"messages": [HumanMessage("desk")]},
                                    context=Context(user_id="carol"))["messages"][-1].content)
    dave = agent.invoke({"messages": [HumanMessage("desk")]}, context=Context(user_id="dave"))
    assert "Nothing in memory" in str(dave["messages"][-1].content)


def test_a_run_that_does_not_say_who_gets_no_memory_at_all(index: MemoryIndex) -> None:
    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    search = memory_tools(scope)[0]
    result = search.invoke({"name": "memory_search", "args": {"query": "wifi"}, "id": "1",
                            "type": "tool_call"}, {"configurable": {}})
    assert result.status == "error" and "does not say 'user_id'" in str(result.content)
    # Any id is someone's own folder, never another's and never outside the area.
    odd = scope.resolve({"configurable": {"user_id": "../alice"}})
    assert odd.area == "memory/users/%2E.%2Falice"
    with pytest.raises(ScopeError, match="NUL"):
        scope.resolve({"configurable": {"user_id": "al\x00ice"}})


@pytest.mark.parametrize("user_id", ["auth0|66b2f0", "alice smith", "user:42", "a.b@example.com",
                                     "x" * 300, "用户42"])
def test_any_user_id_gets_the_same_folder_as_the_store_namespace(index: MemoryIndex,
                                                                  user_id: str) -> None:
    from openclaw_memory.langgraph import OpenClawMemoryStore

    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    tools = {t.name: t for t in memory_tools(scope)}
    store = OpenClawMemoryStore(index)
    # batch(): BaseStore.put refuses a dot in a label (an e-mail id); a batch writes it.
    store.batch([PutOp(("users", user_id), "tea", {"content": "Drinks jasmine tea every morning."})])
    config = {"configurable": {"user_id": user_id}}
    found = tools["memory_search"].invoke({"name": "memory_search", "args": {"query": "jasmine tea"},
                                           "id": "1", "type": "tool_call"}, config)
    assert "jasmine" in str(found.content)
    other = tools["memory_search"].invoke({"name": "memory_search", "args": {"query": "jasmine tea"},
                                           "id": "2", "type": "tool_call"},
                                          {"configurable": {"user_id": user_id + "2"}})
    assert "jasmine" not in str(other.content)
    [items] = store.batch([SearchOp(("users", user_id))])
    assert [i.key for i in items] == ["tea"]


def test_a_workspace_per_user_encodes_the_id_as_one_folder(tmp_path: Path) -> None:
    scope = MemoryScope(workspace=str(tmp_path / "users" / "{user_id}"),
                        settings={"embedding": {"provider": "none"}})
    try:
        for user_id in ("../../etc", "a/b", "auth0|1"):
            scoped = scope.resolve({"configurable": {"user_id": user_id}})
            root = scoped.index.settings.workspace
            assert root.parent == (tmp_path / "users").absolute() and root.is_dir()
    finally:
        scope.close()


def test_get_refuses_paths_outside_the_users_area(index: MemoryIndex, tmp_path: Path) -> None:
    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    tools = {t.name: t for t in memory_tools(scope)}
    config = {"configurable": {"user_id": "alice"}}
    tools["memory_write"].invoke({"content": "alice's note", "target": "daily"}, config)
    own = f"memory/users/alice/{today().isoformat()}.md"
    assert "alice's note" in tools["memory_get"].invoke({"path": own}, config)
    for other in ("MEMORY.md", f"memory/users/bob/{today().isoformat()}.md"):
        refused = tools["memory_get"].invoke({"name": "memory_get", "args": {"path": other},
                                              "id": "1", "type": "tool_call"}, config)
        assert refused.status == "error" and "not in this conversation's memory" in str(refused.content)


def test_a_users_own_memory_md_stays_out_of_group_chats(index: MemoryIndex) -> None:
    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    tools = {t.name: t for t in memory_tools(scope)}
    direct = {"configurable": {"user_id": "alice"}}
    group = {"configurable": {"user_id": "alice", "chat_type": "group"}}
    tools["memory_write"].invoke({"content": "Alice's salary is private", "target": "memory"}, direct)
    assert (Path(index.settings.workspace) / "memory/users/alice/MEMORY.md").is_file()
    found = json.loads(tools["memory_search"].invoke({"query": "salary"}, direct))
    assert found["results"][0]["path"] == "memory/users/alice/MEMORY.md"
    hidden = tools["memory_search"].invoke({"name": "memory_search", "args": {"query": "salary"},
                                            "id": "1", "type": "tool_call"}, group)
    assert hidden.status == "error" and "No memory matched" in str(hidden.content)
    refused = tools["memory_write"].invoke({"name": "memory_write", "id": "2", "type": "tool_call",
                                            "args": {"content": "x", "target": "memory"}}, group)
    assert refused.status == "error"


def test_a_workspace_per_user_opens_each_users_own_index(tmp_path: Path) -> None:
    scope = MemoryScope(workspace=str(tmp_path / "users" / "{user_id}"),
                        settings={"embedding": {"provider": "none"}})
    try:
        agent = create_agent(model(), tools=memory_tools(scope))
        answer(agent, "Remember that my bike is red.", "erin", "1")
        answer(agent, "Remember that my bike is blue.", "frank", "2")
        assert "red" in answer(agent, "bike", "erin", "3")
        assert "blue" in answer(agent, "bike", "frank", "4")
        day = today().isoformat()
        assert "red" in (tmp_path / "users" / "erin" / "memory" / f"{day}.md").read_text("utf-8")
        assert not (tmp_path / "users" / "erin" / "memory" / "frank").exists()
    finally:
        scope.close()


def test_the_flush_writes_to_the_memory_of_the_run_it_serves(index: MemoryIndex, tmp_path: Path) -> None:
    def flush_brain(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return ai("NO_REPLY")
        said = " ".join(str(m.content) for m in messages if isinstance(m, HumanMessage))
        fact = re.search(r"my plan is ([^.]+)", said)
        return ai("", call("memory_write", content=f"Plan: {fact.group(1) if fact else '?'}"))

    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    flush = MemoryFlush(scope, ScriptedChatModel(script=[flush_brain], repeat_last=True),
                        context_window=40, reserve_tokens_floor=0, soft_threshold_tokens=0)
    for user, plan in (("alice", "to climb"), ("bob", "to sail")):
        state = {"messages": [HumanMessage(f"my plan is {plan}. " + "filler " * 50)]}
        update = flush.update(state, {"configurable": {"user_id": user}})
        assert update["memory_flush_compaction_count"] == 0
    day = today().isoformat()
    base = tmp_path / "ws" / "memory" / "users"
    assert (base / "alice" / f"{day}.md").read_text("utf-8").strip() == "Plan: to climb"
    assert (base / "bob" / f"{day}.md").read_text("utf-8").strip() == "Plan: to sail"
    assert not (tmp_path / "ws" / "memory" / f"{day}.md").exists()


def test_the_flush_middleware_in_one_agent_writes_each_users_notes_to_their_own_memory(
        index: MemoryIndex, tmp_path: Path) -> None:
    from openclaw_memory.langgraph import MemoryFlushMiddleware

    def flush_brain(messages: list[BaseMessage]) -> AIMessage:
        if isinstance(messages[-1], ToolMessage):
            return ai("NO_REPLY")
        said = " ".join(str(m.content) for m in messages if isinstance(m, HumanMessage))
        fact = re.search(r"my plan is ([^.]+)", said)
        return ai("", call("memory_write", content=f"Plan: {fact.group(1) if fact else '?'}"))

    scope = MemoryScope(index, namespace=("users", "{user_id}"))
    flush = MemoryFlushMiddleware(scope, ScriptedChatModel(script=[flush_brain], repeat_last=True),
                                  context_window=40, reserve_tokens_floor=0, soft_threshold_tokens=0)
    agent = create_agent(model(), tools=memory_tools(scope), middleware=[flush])
    for user, plan in (("alice", "to climb"), ("bob", "to sail")):
        answer(agent, f"By the way, my plan is {plan}. " + "filler " * 50, user, user)
    base = tmp_path / "ws" / "memory" / "users"
    day = today().isoformat()
    assert (base / "alice" / f"{day}.md").read_text("utf-8").strip() == "Plan: to climb"
    assert (base / "bob" / f"{day}.md").read_text("utf-8").strip() == "Plan: to sail"


@pytest.mark.parametrize("backend", ["numpy", "vec0"])
def test_a_user_is_found_among_many_users_with_the_same_words(tmp_path: Path, backend: str) -> None:
    from faults.embedders import HashingEmbedder

    ws = tmp_path / "crowded"
    for n in range(80):  # 80 users, each with a note in the very same words
        folder = ws / "memory" / "users" / f"u{n:02d}"
        folder.mkdir(parents=True)
        (folder / "2026-01-05.md").write_text(f"- My locker code is {1000 + n} at the climbing gym.\n",
                                              encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / f"{backend}.sqlite", embedder=HashingEmbedder(32),
                          store={"vector_backend": backend}) as memory:
        memory.sync()
        if memory.store.vector_path != backend:
            pytest.skip("sqlite-vec does not load here")
        scope = MemoryScope(memory, namespace=("users", "{user_id}"))
        search = memory_tools(scope)[0]
        for user in ("u07", "u42", "u79"):
            found = json.loads(search.invoke({"query": "locker code climbing gym", "max_results": 2},
                                             {"configurable": {"user_id": user}}))["results"]
            assert found and {hit["path"] for hit in found} == {f"memory/users/{user}/2026-01-05.md"}
            assert str(1000 + int(user[1:])) in found[0]["snippet"]
