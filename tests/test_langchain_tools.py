"""memory_search / memory_get / memory_write as agent tools: JSON for the model, policy applied,
every failure a message the model can act on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langchain import memory_tools


@pytest.fixture()
def index(workspace: Path, tmp_path: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, index_path=tmp_path / "t.sqlite",
                          embedding={"provider": "none"}) as memory:
        yield memory


def tools_by_name(index: MemoryIndex, **kwargs: Any) -> dict[str, BaseTool]:
    return {t.name: t for t in memory_tools(index, **kwargs)}


def call(tool: BaseTool, **args: Any) -> ToolMessage:
    message = tool.invoke({"type": "tool_call", "name": tool.name, "args": args, "id": "call-1"})
    assert isinstance(message, ToolMessage)
    return message


def test_the_factory_returns_the_four_tools_and_can_leave_out_writing(index: MemoryIndex) -> None:
    assert list(tools_by_name(index)) == ["memory_search", "memory_get", "memory_write",
                                          "memory_edit"]
    assert list(tools_by_name(index, allow_write=False)) == ["memory_search", "memory_get"]
    assert "memory_edit" not in tools_by_name(index, allow_edit=False)
    assert "memory_edit" not in tools_by_name(index, write_target_restriction="daily")
    assert "memory_edit" not in tools_by_name(index, chat_type="group")


def test_search_answers_compact_json_in_the_spec_shape(index: MemoryIndex) -> None:
    message = call(tools_by_name(index)["memory_search"], query="zero-amount invoices")
    assert message.status == "success"
    assert isinstance(message.content, str) and ", " not in message.content[:40]
    data = json.loads(message.content)
    assert set(data) == {"results", "provider", "model", "mode", "citations"}
    assert (data["provider"], data["mode"], data["citations"]) == ("none", "keyword-only", "auto")
    top = data["results"][0]
    assert set(top) == {"path", "start_line", "end_line", "score", "snippet", "source", "citation",
                        "as_of"}
    assert top["path"] == "memory/2026-01-10.md" and top["as_of"] == "2026-01-10"
    assert top["snippet"].endswith(f"\n\nSource: {top['citation']}")
    # The artifact has the same result plus the score explanation, as a plain dict.
    assert message.artifact["results"][0]["explain"]["text_score"] is not None


def test_citations_off_strips_the_source_line_and_the_citation_field(index: MemoryIndex) -> None:
    message = call(tools_by_name(index, citations="off")["memory_search"], query="BILL-482")
    data = json.loads(message.content)
    assert data["citations"] == "off"
    for result in data["results"]:
        assert "citation" not in result and "Source:" not in result["snippet"]
    got = json.loads(call(tools_by_name(index, citations="off")["memory_get"],
                          path="memory/2026-01-10.md").content)
    assert "citation" not in got


def test_citations_on_cite_even_in_a_group_chat(index: MemoryIndex) -> None:
    tools = tools_by_name(index, citations="on", chat_type="group")
    result = json.loads(call(tools["memory_search"], query="BILL-482").content)["results"][0]
    assert result["citation"].startswith("memory/2026-01-10.md#L")
    assert result["snippet"].endswith(result["citation"])


def test_auto_citations_follow_the_chat_type(index: MemoryIndex) -> None:
    group = tools_by_name(index, chat_type="group")
    result = json.loads(call(group["memory_search"], query="BILL-482").content)["results"][0]
    assert "citation" not in result and "Source:" not in result["snippet"]


def test_group_chat_never_sees_memory_md(index: MemoryIndex) -> None:
    direct = tools_by_name(index)
    assert any(r["path"] == "MEMORY.md" for r in json.loads(
        call(direct["memory_search"], query="PostgreSQL billing").content)["results"])
    for chat_type in ("group", "channel"):
        tools = tools_by_name(index, chat_type=chat_type)
        message = call(tools["memory_search"], query="PostgreSQL billing peanuts", min_score=0)
        if message.status == "success":
            assert all(r["path"] != "MEMORY.md" for r in json.loads(message.content)["results"])
        for path in ("MEMORY.md", "memory.md"):
            refused = call(tools["memory_get"], path=path)
            assert refused.status == "error" and "private" in refused.content
            assert "peanuts" not in refused.content


@pytest.mark.parametrize("path", ["../secrets.md", "/etc/passwd", "memory/../../x.md",
                                  "notes/todo.md", "memory/notes.txt", "memory/link.md"])
def test_refused_paths_get_one_clear_message(index: MemoryIndex, workspace: Path,
                                             tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n", encoding="utf-8")
    (workspace / "memory" / "link.md").symlink_to(outside)
    message = call(tools_by_name(index)["memory_get"], path=path)
    assert message.status == "error"
    assert message.content.startswith("Path refused: only MEMORY.md and Markdown files under memory/")
    assert "secret" not in message.content and message.artifact is None


def test_get_reads_the_cited_lines_and_clamps_ranges(index: MemoryIndex) -> None:
    get = tools_by_name(index)["memory_get"]
    data = json.loads(call(get, path="memory/2026-01-10.md", from_line=4, lines=1).content)
    assert data["text"] == "- Ticket BILL-482: zero-amount invoices crash the PDF job."
    assert data["citation"] == "memory/2026-01-10.md#L4"
    clamped = json.loads(call(get, path="memory/2026-01-10.md", from_line=-3, lines=0).content)
    assert clamped["from_line"] == 1
    missing = json.loads(call(get, path="memory/2030-01-01.md").content)
    assert missing["text"] == "" and missing["missing"] is True


def test_nothing_found_is_an_explicit_message_with_next_steps(index: MemoryIndex) -> None:
    message = call(tools_by_name(index)["memory_search"], query="quantum kangaroo")
    assert message.status == "error"
    assert "No memory matched" in message.content and "checked memory" in message.content


def test_unavailable_provider_is_reported_with_what_to_do(workspace: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with MemoryIndex.open(workspace, index_path=tmp_path / "o.sqlite",
                          embedding={"provider": "openai"}) as memory:
        search = tools_by_name(memory)["memory_search"]
        data = json.loads(call(search, query="BILL-482").content)
        assert data["mode"] == "keyword-only" and data["results"]
        assert data["warning"].startswith("Vector search is unavailable") and data["action"]
        empty = call(search, query="quantum kangaroo")
        assert empty.status == "error" and "Vector search is unavailable" in empty.content


def test_write_appends_to_today_and_reports_the_lines(index: MemoryIndex, workspace: Path) -> None:
    write = tools_by_name(index)["memory_write"]
    data = json.loads(call(write, content="Decided: invoices are archived after 90 days.").content)
    today = daily_note_path()
    assert data["path"] == today and data["written"] is True
    lines = (workspace / today).read_text(encoding="utf-8").split("\n")
    assert lines[data["start_line"] - 1] == "Decided: invoices are archived after 90 days."
    again = json.loads(call(write, content="Decided: invoices are archived after 90 days.").content)
    assert (again["written"], again["reason"]) == (False, "duplicate")
    found = json.loads(call(tools_by_name(index)["memory_search"], query="archived").content)
    assert found["results"][0]["path"] == today  # written notes are indexed at once


def test_a_changed_value_is_written_and_the_line_it_makes_stale_is_named(
        workspace: Path, tmp_path: Path) -> None:
    # A lower-case value in other words ("is on the infra team" / "belongs to the billing
    # team") reads alike: the note is saved, and the model is shown the older line with its
    # citation, to correct it with memory_edit.
    (workspace / "MEMORY.md").write_text("# Facts\n\n- Elena Rossi is on the infra team.\n",
                                         encoding="utf-8")
    with MemoryIndex.open(workspace, index_path=tmp_path / "d.sqlite") as memory:  # real model
        memory.sync()
        note = "Elena Rossi belongs to the billing team."
        data = json.loads(call(tools_by_name(memory)["memory_write"], content=note,
                               target="memory").content)
        assert data["written"] is True and "memory_edit" in data["hint"]
        assert data["related"][0]["citation"] == "MEMORY.md#L3"
        assert data["related"][0]["text"] == "- Elena Rossi is on the infra team."
        # A group's note is compared with the daily logs alone: MEMORY.md never shows through
        # the answer.
        group = json.loads(call(tools_by_name(memory, chat_type="group")["memory_write"],
                                content=note).content)
        assert group["written"] is True and group["path"] == daily_note_path()
        assert "MEMORY.md" not in json.dumps(group, ensure_ascii=False)


def test_write_restriction_refuses_other_targets(index: MemoryIndex, workspace: Path) -> None:
    before = (workspace / "MEMORY.md").read_bytes()
    write = tools_by_name(index, write_target_restriction="daily")["memory_write"]
    message = call(write, content="The user prefers tea.", target="memory")
    assert message.status == "error" and "'daily'" in message.content
    assert (workspace / "MEMORY.md").read_bytes() == before


@pytest.mark.parametrize("scope", [{"chat_type": "group"}, {"chat_type": "channel"},
                                   {"write_target_restriction": "daily"}])
def test_schemas_offer_only_what_the_context_allows(index: MemoryIndex, scope: dict[str, Any]) -> None:
    offered = {name: convert_to_openai_tool(tool)["function"]
               for name, tool in tools_by_name(index, **scope).items()}
    write = offered["memory_write"]
    assert write["parameters"]["properties"]["target"].get("enum", ["daily"]) == ["daily"]
    assert "MEMORY.md" not in json.dumps(write)
    if "chat_type" in scope:
        assert "MEMORY.md" not in json.dumps(offered)


def test_direct_chats_are_offered_both_write_targets(index: MemoryIndex) -> None:
    write = convert_to_openai_tool(tools_by_name(index)["memory_write"])["function"]
    assert write["parameters"]["properties"]["target"]["enum"] == ["daily", "memory"]
    assert "MEMORY.md" in json.dumps(write)


def test_group_chat_cannot_write_or_probe_memory_md(index: MemoryIndex, workspace: Path) -> None:
    before = (workspace / "MEMORY.md").read_bytes()
    write = tools_by_name(index, chat_type="group")["memory_write"]
    message = call(write, content="- The user is allergic to peanuts.", target="memory")
    assert message.status == "error" and "'daily'" in message.content
    assert "duplicate" not in message.content and "MEMORY.md" not in message.content
    assert (workspace / "MEMORY.md").read_bytes() == before


def test_an_empty_note_is_refused_with_a_message(index: MemoryIndex) -> None:
    message = call(tools_by_name(index)["memory_write"], content="   \n")
    assert message.status == "error" and message.content.startswith("Nothing was written")


def test_invalid_arguments_come_back_as_a_message(index: MemoryIndex) -> None:
    message = call(tools_by_name(index)["memory_search"], max_results="many")
    assert message.status == "error" and "query" in message.content
    assert message.content.startswith("Invalid arguments")


def test_schemas_bind_as_function_tools_without_the_index(index: MemoryIndex) -> None:
    schemas = {t.name: convert_to_openai_tool(t)["function"] for t in memory_tools(index)}
    assert schemas["memory_search"]["parameters"]["required"] == ["query"]
    assert set(schemas["memory_get"]["parameters"]["properties"]) == {"path", "from_line", "lines"}
    assert set(schemas["memory_write"]["parameters"]["properties"]) == {"content", "target"}
    assert all("index" not in json.dumps(s["parameters"]) for s in schemas.values())


def test_tool_node_runs_calls_and_keeps_artifacts(index: MemoryIndex) -> None:
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(memory_tools(index)))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    request = AIMessage(content="", tool_calls=[
        {"name": "memory_search", "args": {"query": "BILL-482"}, "id": "a"},
        {"name": "memory_get", "args": {"path": "../x.md"}, "id": "b"},
    ])
    out = graph.compile().invoke({"messages": [request]})["messages"]
    by_id = {m.tool_call_id: m for m in out if isinstance(m, ToolMessage)}
    assert by_id["a"].status == "success" and by_id["a"].artifact["results"]
    assert by_id["b"].status == "error" and by_id["b"].content.startswith("Path refused")


async def test_tools_work_asynchronously(index: MemoryIndex) -> None:
    search = tools_by_name(index)["memory_search"]
    message = await search.ainvoke({"type": "tool_call", "name": "memory_search",
                                    "args": {"query": "BILL-482"}, "id": "x"})
    assert json.loads(message.content)["results"][0]["path"] == "memory/2026-01-10.md"


def test_memory_get_reads_the_lines_of_a_citation(index: MemoryIndex) -> None:
    get = tools_by_name(index)["memory_get"]
    result = json.loads(call(get, path="memory/2026-01-10.md#L3-L4").content)
    assert (result["from_line"], result["end_line"]) == (3, 4)
    assert result["text"].splitlines() == ["- Deployed the invoice renderer to Frankfurt.",
                                           "- Ticket BILL-482: zero-amount invoices crash the PDF job."]
