"""The "Memory Recall" system-prompt section, and a middleware that adds it per model call.

Agents skip memory unless told when to look; the section tells the model to search before
answering about the past, to read only the lines it needs, and to admit when memory had
nothing. It is left out when no memory tool is bound (the advice would be unusable) and from
minimal prompts (sub-agents doing a narrow job). Its wording follows the tools at hand and
the citation decision for the chat.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.messages import SystemMessage
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool

from openclaw_memory.index import ChatType
from openclaw_memory.langchain._common import CitationMode, citations_enabled
from openclaw_memory.langgraph._optional import AgentMiddleware, AgentState
from openclaw_memory.langgraph.scope import resolve_chat_type

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage

__all__ = ["MemoryRecallPromptMiddleware", "build_system_prompt", "memory_recall_section"]

HEADER = "## Memory Recall"
_TOPICS = "earlier work, decisions, dates, people, preferences or open todos"


def memory_recall_section(tools: Iterable[BaseTool | Mapping[str, Any] | str] | None, *,
                          citations: CitationMode = "auto", chat_type: ChatType = "direct",
                          minimal: bool = False, sessions: bool = False) -> str:
    """The section text (ending with a blank line), or ``""`` when it does not apply.

    ``tools``: the tools bound to the model (objects, OpenAI tool dicts or names).
    ``sessions``: mention indexed session transcripts as a searched source.
    """
    names = _tool_names(tools or ())
    search, get = "memory_search" in names, "memory_get" in names
    if minimal or not (search or get):
        return ""
    sources = _sources(chat_type, sessions)
    if search and get:
        how = (f"Before answering anything about {_TOPICS}, call memory_search ({sources}) "
               "and then memory_get to read only the lines you need. If nothing convincing "
               "turns up, say that you checked memory.")
    elif search:
        how = (f"Before answering anything about {_TOPICS}, call memory_search ({sources}) "
               "and answer from the snippets it returns. If nothing convincing turns up, say "
               "that you checked memory.")
    else:
        how = ("When the conversation already points to a specific memory file or note, call "
               "memory_get to read only the lines you need. If they do not settle the question, "
               "say that you checked.")
    return f"{HEADER}\n{how}\n{_citation_rule(citations, chat_type)}\n\n"


def build_system_prompt(base: str, tools: Iterable[BaseTool | Mapping[str, Any] | str] | None, *,
                        citations: CitationMode = "auto", chat_type: ChatType = "direct",
                        minimal: bool = False, sessions: bool = False) -> str:
    """``base`` followed by the Memory Recall section (when it applies)."""
    section = memory_recall_section(tools, citations=citations, chat_type=chat_type,
                                    minimal=minimal, sessions=sessions)
    if not section:
        return base
    return f"{base.rstrip()}\n\n{section}" if base.strip() else section


def _sources(chat_type: ChatType, sessions: bool) -> str:
    # MEMORY.md is never searchable in group chats: do not advertise it there.
    parts = ["MEMORY.md"] if chat_type == "direct" else []
    parts.append("the notes in memory/")
    if sessions:
        parts.append("past session transcripts")
    return "it covers " + (" and ".join(parts) if len(parts) < 3 else ", ".join(parts[:-1])
                           + " and " + parts[-1])


def _citation_rule(citations: CitationMode, chat_type: ChatType) -> str:
    if citations_enabled(citations, chat_type):
        return ("When it helps the user check a memory, add a line 'Source: <path#line>' with "
                "the citation the tool returned.")
    return ("Do not mention memory file paths or line numbers in your replies unless the user "
            "explicitly asks for them.")


def _tool_names(tools: Iterable[BaseTool | Mapping[str, Any] | str]) -> set[str]:
    names: set[str] = set()
    for tool in tools:
        if isinstance(tool, str):
            names.add(tool)
        elif isinstance(tool, BaseTool):
            names.add(tool.name)
        elif isinstance(tool, Mapping):
            function = tool.get("function")
            name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
            if isinstance(name, str):
                names.add(name)
    return names


class MemoryRecallPromptMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """``create_agent`` middleware appending the section to the system prompt of each call.

    It looks at the tools actually bound for the call (other middleware may remove some) and
    at the run's chat type, so group chats get the no-paths wording under ``auto``.
    """

    def __init__(self, citations: CitationMode = "auto", *, minimal: bool = False,
                 sessions: bool = False) -> None:
        super().__init__()
        self.citations: CitationMode = citations
        self.minimal = minimal
        self.sessions = sessions

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
                        ) -> ModelResponse[Any] | AIMessage:
        return handler(self._with_section(request))

    async def awrap_model_call(
            self, request: ModelRequest[Any],
            handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        return await handler(self._with_section(request))

    def _with_section(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        chat_type = resolve_chat_type(var_child_runnable_config.get(), request.runtime.context)
        base = request.system_message.text if request.system_message is not None else ""
        prompt = build_system_prompt(base, request.tools, citations=self.citations,
                                     chat_type=chat_type, minimal=self.minimal,
                                     sessions=self.sessions)
        if prompt == base:
            return request
        return request.override(system_message=SystemMessage(content=prompt))
