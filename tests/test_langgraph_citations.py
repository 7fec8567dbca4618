"""Citation policy (on/off/auto) and scope: tool results, answers, graphs and plain chains."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import (
    CitationPolicy,
    resolve_chat_type,
    strip_citations,
    with_citation_policy,
)


@pytest.fixture
def index(workspace: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as opened:
        yield opened


# ---------------------------------------------------------------------- stripping text


@pytest.mark.parametrize(("text", "expected"), [
    ("Frankfurt.\n\nSource: memory/2026-01-10.md#L3-L4", "Frankfurt."),
    ("Frankfurt (memory/2026-01-10.md#L3-L4).", "Frankfurt."),
    ("PostgreSQL [Source: MEMORY.md#L3, memory/2026-01-10.md#L5-L9] it is.", "PostgreSQL it is."),
    ("See [the log](memory/2026-01-10.md#L3) for more.", "See the log for more."),
    ("Per `MEMORY.md#L2`, you like tea.", "You like tea."),
    ("- Sources: memory/a.md#L1, memory/b.md#L2-L4\nNext line.", "Next line."),
    ("决定使用 Redis 集群。(memory/2026-01-11.md#L3)", "决定使用 Redis 集群。"),
    ("Decided on Redis - source: memory/2026-01-11.md#L3", "Decided on Redis"),
    ("Per sessions/team-chat.jsonl#L7 the rehearsal went fine.", "The rehearsal went fine."),
    ("The rehearsal went fine (sessions/team-chat.jsonl#L7-L9).", "The rehearsal went fine."),
])
def test_citations_are_stripped_from_answers(text: str, expected: str) -> None:
    assert strip_citations(text) == expected


def test_text_without_citations_is_returned_unchanged() -> None:
    text = "Keep  my   spacing , and a path like docs/readme.md or line #L3 alone.\n"
    assert strip_citations(text) is text


@pytest.mark.parametrize(("mode", "chat_type", "shown"), [
    ("auto", "direct", True), ("auto", "group", False), ("auto", "channel", False),
    ("on", "group", True), ("off", "direct", False),
])
def test_citation_mode_decides_per_chat_type(mode: Any, chat_type: Any, shown: bool) -> None:
    assert CitationPolicy(mode).shows(chat_type) is shown


def test_an_unknown_mode_or_chat_type_is_refused() -> None:
    with pytest.raises(ValueError, match="citation mode"):
        CitationPolicy("sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chat_type"):
        resolve_chat_type({"configurable": {"chat_type": "grup"}})


def test_chat_type_comes_from_context_then_config_then_session_key() -> None:
    config = {"configurable": {"chat_type": "channel", "session_key": "agent:main:tg:group:1"}}
    assert resolve_chat_type(config, {"chat_type": "group"}) == "group"
    assert resolve_chat_type(config) == "channel"
    assert resolve_chat_type({"configurable": {"session_key": "agent:main:tg:group:1"}}) == "group"
    assert resolve_chat_type({"configurable": {"session_key": "agent:main:dm:42"}}) == "direct"
    assert resolve_chat_type(None, type("Ctx", (), {"chat_type": "channel"})()) == "channel"
    assert resolve_chat_type() == "direct"


def test_tool_results_lose_citation_fields_and_source_lines() -> None:
    payload = {"results": [{"path": "memory/a.md", "snippet": "- Fact.\n\nSource: memory/a.md#L1-L2",
                            "citation": "memory/a.md#L1-L2"}], "citations": "auto"}
    message = ToolMessage(json.dumps(payload), tool_call_id="1", artifact=payload)
    cleaned = CitationPolicy().clean_message(message, "group")
    data = json.loads(cleaned.text)
    assert data == {"results": [{"path": "memory/a.md", "snippet": "- Fact."}], "citations": "auto"}
    assert "citation" not in cleaned.artifact["results"][0]
    assert CitationPolicy().clean_message(message, "direct") is message


def test_list_content_blocks_are_cleaned_too() -> None:
    message = AIMessage(content=[{"type": "text", "text": "Tea (MEMORY.md#L2)."}, {"type": "image"}])
    cleaned = CitationPolicy("off").clean_message(message, "direct")
    assert cleaned.content == [{"type": "text", "text": "Tea."}, {"type": "image"}]


# ---------------------------------------------------------------------- tools in a graph (scope)


def _tool_graph(index: MemoryIndex, policy: CitationPolicy) -> Any:
    graph = StateGraph(MessagesState)
    # Tools built once, for direct chats: the policy must re-scope them per run.
    graph.add_node("tools", ToolNode(memory_tools(index), wrap_tool_call=policy.wrap_tool_call,
                                     awrap_tool_call=policy.awrap_tool_call))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def _run_tools(app: Any, *calls: dict[str, Any], **kwargs: Any) -> list[ToolMessage]:
    result = app.invoke({"messages": [HumanMessage("q"), AIMessage("", tool_calls=list(calls))]},
                        **kwargs)
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def test_direct_chat_tool_results_keep_citations_and_see_memory_md(index: MemoryIndex) -> None:
    app = _tool_graph(index, CitationPolicy("auto"))
    search, get = _run_tools(app, call("memory_search", query="PostgreSQL billing"),
                             call("memory_get", path="MEMORY.md", from_line=3, lines=1))
    hit = json.loads(search.text)["results"][0]
    assert hit["path"] == "MEMORY.md" and hit["citation"].startswith("MEMORY.md#L")
    assert "Source: MEMORY.md#L" in hit["snippet"]
    assert json.loads(get.text)["citation"] == "MEMORY.md#L3"


@pytest.mark.parametrize("how", ["context", "config", "async"])
async def test_group_chat_tool_results_never_show_memory_md_or_citations(
        index: MemoryIndex, how: str) -> None:
    app = _tool_graph(index, CitationPolicy("auto"))
    calls = (call("memory_search", query="PostgreSQL billing"),
             call("memory_get", path="MEMORY.md"),
             call("memory_search", query="invoice renderer Frankfurt"))
    payload = {"messages": [HumanMessage("q"), AIMessage("", tool_calls=list(calls))]}
    if how == "context":
        result = app.invoke(payload, context={"chat_type": "group"})
    elif how == "config":
        result = app.invoke(payload, {"configurable": {"chat_type": "channel"}})
    else:
        result = await app.ainvoke(payload, context={"chat_type": "group"})
    private_search, private_get, daily = [m for m in result["messages"] if isinstance(m, ToolMessage)]

    assert private_search.status == "error" and "PostgreSQL" not in private_search.text
    assert private_get.status == "error" and "peanuts" not in private_get.text
    hits = json.loads(daily.text)["results"]
    assert hits and all(h["path"] != "MEMORY.md" and "citation" not in h for h in hits)
    assert "#L" not in daily.text


def test_tools_built_for_a_group_are_never_widened_by_a_direct_run(index: MemoryIndex) -> None:
    graph = StateGraph(MessagesState)
    group_tools = memory_tools(index, chat_type="group")
    policy = CitationPolicy("auto")
    graph.add_node("tools", ToolNode(group_tools, wrap_tool_call=policy.wrap_tool_call))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    (result,) = _run_tools(graph.compile(), call("memory_get", path="MEMORY.md"))
    assert result.status == "error" and "peanuts" not in result.text


# ---------------------------------------------------------------------- answers


def _answer_graph(model: ScriptedChatModel, policy: CitationPolicy) -> Any:
    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        chat_type = resolve_chat_type(config)
        return {"messages": [policy.call_model(model, state["messages"], chat_type=chat_type,
                                               config=config)]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    return graph.compile()


def test_group_answers_are_cleaned_before_anything_is_streamed() -> None:
    answer = "We chose PostgreSQL.\n\nSource: MEMORY.md#L3"
    model = ScriptedChatModel(script=[ai(answer), ai(answer)])
    app = _answer_graph(model, CitationPolicy("auto"))

    group = list(app.stream({"messages": [HumanMessage("db?")]},
                            {"configurable": {"chat_type": "group"}}, stream_mode="messages"))
    direct = list(app.stream({"messages": [HumanMessage("db?")]}, stream_mode="messages"))

    assert "".join(c.text for c, _ in group) == "We chose PostgreSQL."
    assert "".join(c.text for c, _ in direct) == answer
    assert len(direct) > 1  # direct chats still stream token by token


def test_citation_node_cleans_the_last_answer_of_a_model_node_you_do_not_own() -> None:
    node = CitationPolicy("auto").as_node()
    state = {"messages": [HumanMessage("q"), AIMessage("Tea (MEMORY.md#L2).", id="a")]}
    group = node.invoke(state, {"configurable": {"chat_type": "group"}})
    assert group["messages"][0].text == "Tea." and group["messages"][0].id == "a"
    assert node.invoke(state, {"configurable": {"chat_type": "direct"}}) == {}


def test_plain_chain_wrapper_cleans_text_messages_and_dicts() -> None:
    text = "Lisbon on December 3rd (memory/topics.md#L4)."
    chain = with_citation_policy(RunnableLambda(lambda q: {"answer": text, "message": AIMessage(text)}))
    group = chain.invoke("q", {"configurable": {"chat_type": "group"}})
    assert group["answer"] == "Lisbon on December 3rd." and group["message"].text == group["answer"]
    assert chain.invoke("q")["answer"] == text
    streamed = list(with_citation_policy(RunnableLambda(lambda q: text), "off").stream("q"))
    assert streamed == ["Lisbon on December 3rd."]


@pytest.mark.parametrize(("cited", "clean"), [
    ("As noted in memory/2026-11-21.md#L3-L5, the region is X.", "As noted in my notes, the region is X."),
    ("The region is X — see memory/a.md#L3.", "The region is X."),
    ("The region is X, see memory/a.md#L3.", "The region is X."),
    ("I found this in: memory/a.md#L3", "I found this in my notes"),
    ("I found this in memory/a.md#L3: the region is X.", "I found this in my notes: the region is X."),
    ("From memory/a.md#L3: the region is X.", "From my notes: the region is X."),
    ("The region is X, as recorded in memory/a.md#L3.", "The region is X, as recorded in my notes."),
    ("The region is X; see `memory/a.md#L3` and memory/b.md#L4.", "The region is X."),
])
def test_stripping_leaves_sentences_that_read_naturally(cited: str, clean: str) -> None:
    assert strip_citations(cited) == clean
