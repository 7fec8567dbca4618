"""The parts working together: an LCEL RAG chain and tool-calling agent loops (LangGraph)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import Field

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langchain import OpenClawMemoryRetriever, format_docs, memory_tools

SOURCE_LINE = re.compile(r"^Source: (\S+)$", re.MULTILINE)


@pytest.fixture()
def index(workspace: Path, tmp_path: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, index_path=tmp_path / "c.sqlite",
                          embedding={"provider": "none"}) as memory:
        yield memory


class CitingModel(BaseChatModel):
    """Answers with the first line of context mentioning a query word, plus its Source line."""

    @property
    def _llm_type(self) -> str:
        return "citing-fake"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        prompt = str(messages[-1].content)
        question = prompt.rsplit("Question:", 1)[1].lower()
        blocks = prompt.split("Question:", 1)[0].split("\n\n")
        for block in blocks:
            source = SOURCE_LINE.search(block)
            hit = [ln for ln in block.splitlines() if any(w in ln.lower() for w in question.split())]
            if source and hit:
                answer = f"{hit[0].lstrip('- ')} [{source.group(1)}]"
                return ChatResult(generations=[ChatGeneration(message=AIMessage(answer))])
        return ChatResult(generations=[ChatGeneration(message=AIMessage("I checked memory."))])


def test_lcel_rag_chain_answers_with_a_citation_of_the_right_lines(index: MemoryIndex,
                                                                   workspace: Path) -> None:
    retriever = OpenClawMemoryRetriever(index=index, k=2)
    prompt = ChatPromptTemplate.from_messages(
        [("human", "Answer from this memory:\n{context}\n\nQuestion: {question}")])
    chain = ({"context": retriever | format_docs, "question": RunnablePassthrough()}
             | prompt | CitingModel() | StrOutputParser())
    answer = chain.invoke("renderer")
    assert answer == "Deployed the invoice renderer to Frankfurt. [memory/2026-01-10.md#L1-L4]"
    cited = workspace.joinpath("memory/2026-01-10.md").read_text(encoding="utf-8").split("\n")[:4]
    assert "- Deployed the invoice renderer to Frankfurt." in cited


class MemoryAgentModel(BaseChatModel):
    """A scripted agent that reacts to tool results: search, read the one line, answer.

    Its decisions depend on what the tools return, so the loop only ends with the right
    citation if search, the line numbers and memory_get agree.
    """

    bound: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "memory-agent-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput,
                                                                          AIMessage]:
        self.bound = [t.name for t in tools]
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            return _call("memory_search", {"query": str(last.content)})
        assert isinstance(last, ToolMessage) and last.status == "success", last.content
        data = json.loads(str(last.content))
        if last.name == "memory_search":
            top = data["results"][0]
            lines = top["snippet"].split("\n")
            offset = next(i for i, line in enumerate(lines) if "BILL-" in line)
            return _call("memory_get", {"path": top["path"], "from_line": top["start_line"] + offset,
                                        "lines": 1})
        return AIMessage(f"{data['text'].lstrip('- ')} (source: {data['citation']})")


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def agent_graph(model: BaseChatModel, index: MemoryIndex, **tool_options: Any,
                ) -> CompiledStateGraph[Any, Any, Any, Any]:
    tools = memory_tools(index, **tool_options)
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def test_agent_loop_cites_the_exact_line_it_read(index: MemoryIndex, workspace: Path) -> None:
    model = MemoryAgentModel()
    app = agent_graph(model, index)
    final = app.invoke({"messages": [HumanMessage("zero-amount invoices crash")]})["messages"][-1]
    assert model.bound == ["memory_search", "memory_get", "memory_write", "memory_edit"]
    assert final.content == ("Ticket BILL-482: zero-amount invoices crash the PDF job. "
                             "(source: memory/2026-01-10.md#L4)")
    line_4 = workspace.joinpath("memory/2026-01-10.md").read_text(encoding="utf-8").split("\n")[3]
    assert "BILL-482" in line_4


class ToolCallingFakeModel(GenericFakeChatModel):
    """GenericFakeChatModel replays scripted messages; binding tools changes nothing."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput,
                                                                          AIMessage]:
        return self


def test_scripted_agent_writes_a_note_and_finds_it_again(index: MemoryIndex,
                                                         workspace: Path) -> None:
    script = iter([
        _call("memory_write", {"content": "Invoices are archived after 90 days."}),
        _call("memory_search", {"query": "archived invoices"}),
        AIMessage("Invoices are archived after 90 days."),
    ])
    app = agent_graph(ToolCallingFakeModel(messages=script), index,
                      write_target_restriction="daily")
    messages = app.invoke({"messages": [HumanMessage("Remember the archive rule.")]})["messages"]
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [m.status for m in results] == ["success", "success"]
    written = json.loads(str(results[0].content))
    assert written["path"] == daily_note_path() and written["written"] is True
    found = json.loads(str(results[1].content))["results"][0]
    assert found["citation"] == f"{written['path']}#L{written['start_line']}"
    assert (workspace / written["path"]).exists()


def test_group_chat_agent_is_refused_memory_md_and_can_recover(index: MemoryIndex) -> None:
    script = iter([_call("memory_get", {"path": "MEMORY.md"}), AIMessage("I cannot share that.")])
    app = agent_graph(ToolCallingFakeModel(messages=script), index, chat_type="group")
    messages = app.invoke({"messages": [HumanMessage("What is in MEMORY.md?")]})["messages"]
    refusal = next(m for m in messages if isinstance(m, ToolMessage))
    assert refusal.status == "error" and "private" in str(refusal.content)
    assert "peanuts" not in str(refusal.content)
    assert messages[-1].content == "I cannot share that."
