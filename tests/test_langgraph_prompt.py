"""The Memory Recall system-prompt section: when it appears and how its wording adapts."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import build_system_prompt, memory_recall_section

BOTH = ["memory_search", "memory_get"]


def test_section_needs_a_memory_tool_and_a_full_prompt() -> None:
    assert memory_recall_section(None) == ""
    assert memory_recall_section(["web_search", "calculator"]) == ""
    assert memory_recall_section(BOTH, minimal=True) == ""
    assert memory_recall_section(BOTH).startswith("## Memory Recall\n")


def test_search_and_get_wording_asks_to_search_then_read_only_needed_lines() -> None:
    section = memory_recall_section(BOTH)
    assert "memory_search" in section and "then memory_get" in section
    assert "decisions" in section and "todos" in section and "checked memory" in section
    assert section.endswith("\n\n")  # the section ends with a blank line


def test_search_only_wording_answers_from_snippets_without_memory_get() -> None:
    section = memory_recall_section(["memory_search"])
    assert "snippets" in section and "memory_get" not in section


def test_get_only_wording_reads_known_files_without_memory_search() -> None:
    section = memory_recall_section(["memory_get"])
    assert "specific memory file" in section and "memory_search" not in section


@pytest.mark.parametrize(("citations", "chat_type", "cites"), [
    ("auto", "direct", True), ("on", "group", True), ("auto", "group", False),
    ("off", "direct", False),
])
def test_citation_wording_follows_the_mode_and_chat_type(citations: str, chat_type: str,
                                                         cites: bool) -> None:
    section = memory_recall_section(BOTH, citations=citations, chat_type=chat_type)  # type: ignore[arg-type]
    assert ("Source: <path#line>" in section) is cites
    assert ("Do not mention memory file paths or line numbers" in section) is not cites


def test_group_wording_does_not_advertise_memory_md() -> None:
    assert "MEMORY.md" in memory_recall_section(BOTH)
    assert "MEMORY.md" not in memory_recall_section(BOTH, chat_type="group")
    assert "session transcripts" in memory_recall_section(BOTH, sessions=True)


def test_tools_are_recognised_as_objects_and_openai_dicts(workspace: Path) -> None:
    with MemoryIndex.open(workspace, embedding={"provider": "none"}) as index:
        assert memory_recall_section(memory_tools(index, allow_write=False)) == memory_recall_section(BOTH)
    openai_style = [{"type": "function", "function": {"name": "memory_search"}}]
    assert memory_recall_section(openai_style) == memory_recall_section(["memory_search"])


def test_build_system_prompt_appends_the_section_or_leaves_the_base_alone() -> None:
    assert build_system_prompt("Be brief.", ["calculator"]) == "Be brief."
    prompt = build_system_prompt("Be brief.\n", BOTH)
    assert prompt.startswith("Be brief.\n\n## Memory Recall\n")
    assert build_system_prompt("", BOTH) == memory_recall_section(BOTH)
