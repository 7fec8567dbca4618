"""Citation policy: ``on`` | ``off`` | ``auto`` for memory tool results and final answers.

``auto`` (the default) keeps ``path#Lx-Ly`` citations in direct chats and removes them in
group and channel chats, where file paths and line numbers of someone's private notes are
noise at best. The chat type comes from the run (see :mod:`openclaw_memory.langgraph.scope`),
so one compiled agent serves every kind of chat. Three ways to apply it:

* ``create_agent`` (LangChain v1): ``CitationPolicyMiddleware(mode)``. It re-scopes the memory
  tools per call (chat type and citation mode, so ``MEMORY.md`` stays out of group chats), cleans
  their results, and cleans the model's answers before they enter the state. When citations
  are removed, the answer's tokens are not streamed one by one (the raw tokens could carry a
  citation); the cleaned message is still streamed, whole, when the model node ends.
* hand-built ``StateGraph``: ``ToolNode(tools, wrap_tool_call=policy.wrap_tool_call,
  awrap_tool_call=policy.awrap_tool_call)`` for tools, ``policy.call_model(...)`` inside the
  model node (same streaming rule as the middleware), or ``policy.as_node()`` after a model node
  you do not own (post-hoc: tokens already streamed are not recalled).
* plain chains: ``with_citation_policy(chain, mode)``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM

from openclaw_memory.index import ChatType
from openclaw_memory.langchain._common import CitationMode, citations_enabled
from openclaw_memory.langchain.tools import (
    MemoryEditTool,
    MemoryGetTool,
    MemorySearchTool,
    MemoryWriteTool,
)
from openclaw_memory.langgraph._common import state_messages
from openclaw_memory.langgraph._optional import AgentMiddleware, AgentState
from openclaw_memory.langgraph.citation_stream import CitationFreeChatModel
from openclaw_memory.langgraph.scope import current_context, resolve_chat_type

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.types import Command

__all__ = [
    "MEMORY_TOOL_NAMES",
    "CitationMode",
    "CitationPolicy",
    "CitationPolicyMiddleware",
    "strip_citations",
    "with_citation_policy",
]

MEMORY_TOOL_NAMES: frozenset[str] = frozenset({"memory_search", "memory_get", "memory_write",
                                               "memory_edit"})
_MEMORY_TOOL_TYPES = (MemorySearchTool, MemoryGetTool, MemoryWriteTool, MemoryEditTool)
_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseMessage)

# ---------------------------------------------------------------------- stripping text

# A citation: a Markdown or transcript (JSONL) path, "#L<start>" and optionally "-L<end>",
# maybe in backticks.
_CITE = r"`?[\w~./\\-]*\.(?:md|jsonl)#L\d+(?:-L\d+)?`?"
_CITES = rf"{_CITE}(?:[ \t]*(?:[,;&]|and)[ \t]*{_CITE})*"
_SOURCE_LINE = re.compile(
    rf"^[ \t]*(?:[-*>][ \t]*)*(?:\*\*|__)?(?:sources?|citations?|refs?)(?:\*\*|__)?[ \t]*:"
    rf"(?:\*\*|__)?[ \t]*{_CITES}[ \t]*\.?[ \t]*(?:\n|$)",
    re.IGNORECASE | re.MULTILINE)
_LINKED = re.compile(rf"\[([^\]\n]+)\]\([ \t]*{_CITE}[ \t]*\)")
_BRACKETED = re.compile(
    rf"[ \t]*[(\[][ \t]*(?:(?:sources?|see|from|per|cf\.?)[ \t]*:?[ \t]*)?{_CITES}[ \t]*[)\]]",
    re.IGNORECASE)
_INLINE_SOURCE = re.compile(rf"[ \t]*[-\u2013\u2014]?[ \t]*\b(?:sources?)[ \t]*:[ \t]*{_CITES}",
                            re.IGNORECASE)
# "Per path#L2, you like tea." -> "You like tea." (a lead-in that only introduced the citation)
_LEAD_IN = re.compile(
    rf"(^|(?<=[.!?])[ \t]+)(?:per|according to|see|cf\.?)[ \t]+{_CITES}[ \t]*[,:.]?[ \t]*(\w?)",
    re.IGNORECASE | re.MULTILINE)
# "- see path#L3" / ", cf. path#L3": a pointer that only pointed at the citation goes with it.
_SEE = re.compile(rf"[ \t]*[,;]?[ \t]*[-\u2013\u2014]?[ \t]*\b(?:see|cf\.?)[ \t]*:?[ \t]*{_CITES}",
                  re.IGNORECASE)
# "noted in path#L3", "I found this in: path#L3", "From path#L3:": the sentence needs its
# object, so the citation becomes a plain "my notes".
_PLACE = re.compile(rf"\b(in|from|at|to)[ \t]*:?[ \t]*{_CITES}", re.IGNORECASE)
_BARE = re.compile(rf"[ \t]*(?<![\w/]){_CITES}")
_ANY = re.compile(_CITE)


def strip_citations(text: str) -> str:
    """``text`` without ``Source: path#Lx-Ly`` lines and inline ``path#Lx-Ly`` citations.

    Text without any citation is returned unchanged (not even re-spaced).
    """
    if not _ANY.search(text):
        return text
    out = _SOURCE_LINE.sub("", text)
    out = _LINKED.sub(r"\1", out)
    out = _BRACKETED.sub("", out)
    out = _INLINE_SOURCE.sub("", out)
    out = _LEAD_IN.sub(lambda m: m.group(1) + m.group(2).upper(), out)
    out = _SEE.sub("", out)
    out = _PLACE.sub(r"\1 my notes", out)
    out = _BARE.sub("", out)
    return _tidy(out)


def _tidy(text: str) -> str:
    # Removing a citation leaves "word ." or doubled spaces and blank lines behind.
    text = re.sub("[ \t]+([.,;:!?\u3002\uff0c])", r"\1", text)
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def _strip_data(data: Any) -> Any:
    """A JSON-like value without ``citation`` keys and with citations removed from strings."""
    if isinstance(data, Mapping):
        return {k: _strip_data(v) for k, v in data.items() if k != "citation"}
    if isinstance(data, list):
        return [_strip_data(v) for v in data]
    if isinstance(data, str):
        return strip_citations(data)
    return data


def _strip_tool_content(content: str) -> str:
    try:
        data = json.loads(content)
    except ValueError:
        return strip_citations(content)  # an error message, plain text
    return json.dumps(_strip_data(data), ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------- the policy


@dataclass(frozen=True)
class CitationPolicy:
    """A citation mode applied per run; the building block of every integration here."""

    mode: CitationMode = "auto"
    tool_names: frozenset[str] = MEMORY_TOOL_NAMES
    """Results of these tools (besides the memory tool classes) are cleaned too."""

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "on", "off"):
            raise ValueError(f"unknown citation mode {self.mode!r}: use 'auto', 'on' or 'off'")

    def shows(self, chat_type: ChatType) -> bool:
        """Whether citations are kept for a run of this chat type."""
        return citations_enabled(self.mode, chat_type)

    # -- text and messages ---------------------------------------------------------------------
    def clean_text(self, text: str, chat_type: ChatType) -> str:
        return text if self.shows(chat_type) else strip_citations(text)

    def clean_message(self, message: _M, chat_type: ChatType) -> _M:
        """The message with citations removed when this chat type does not show them."""
        if self.shows(chat_type):
            return message
        if isinstance(message, ToolMessage):
            return self._clean_tool_message(message)
        content = _clean_content(message.content)
        if content == message.content:
            return message
        return message.model_copy(update={"content": content})

    def _clean_tool_message(self, message: _M) -> _M:
        assert isinstance(message, ToolMessage)
        update: dict[str, Any] = {}
        if isinstance(message.content, str):
            update["content"] = _strip_tool_content(message.content)
        else:
            update["content"] = _clean_content(message.content)
        if message.artifact is not None:
            update["artifact"] = _strip_data(message.artifact)
        return message.model_copy(update=update)

    # -- tools ------------------------------------------------------------------------------
    def is_memory_tool(self, tool: BaseTool | None, name: str) -> bool:
        return isinstance(tool, _MEMORY_TOOL_TYPES) or name in self.tool_names

    def scope_tool(self, tool: BaseTool, chat_type: ChatType) -> BaseTool:
        """A memory tool bound to this run's chat type and citation mode (other tools unchanged).

        Tools are usually built once per agent; this is what keeps ``MEMORY.md`` out of a
        group chat even when the same compiled agent also serves direct chats.
        """
        if not isinstance(tool, _MEMORY_TOOL_TYPES):
            return tool
        # Only ever narrow: a tool built for a group chat stays a group tool in a run that
        # says (or defaults to) "direct"; an explicit citation setting on the tool is kept,
        # and the result is cleaned afterwards if this policy hides citations.
        scope = tool.chat_type if tool.chat_type != "direct" else chat_type
        return tool.scoped(scope, tool.citations or self.mode)

    def scope_tools(self, tools: Sequence[_T], chat_type: ChatType) -> list[_T]:
        """``scope_tool`` over a list of tools (other kinds, e.g. dict schemas, unchanged);
        ``memory_edit`` is not offered at all outside direct chats."""
        return [self.scope_tool(t, chat_type) if isinstance(t, BaseTool) else t  # type: ignore[misc]
                for t in tools
                if chat_type == "direct" or not isinstance(t, MemoryEditTool)]

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
                       ) -> ToolMessage | Command[Any]:
        """``ToolNode(wrap_tool_call=...)`` hook: scope the memory tool, clean its result."""
        chat_type = _tool_chat_type(request)
        request = self._scoped_request(request, chat_type)
        return self._clean_tool_result(request, handler(request), chat_type)

    async def awrap_tool_call(
            self, request: ToolCallRequest,
            handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        chat_type = _tool_chat_type(request)
        request = self._scoped_request(request, chat_type)
        return self._clean_tool_result(request, await handler(request), chat_type)

    def _scoped_request(self, request: ToolCallRequest, chat_type: ChatType) -> ToolCallRequest:
        if request.tool is None or not isinstance(request.tool, _MEMORY_TOOL_TYPES):
            return request
        return request.override(tool=self.scope_tool(request.tool, chat_type))

    def _clean_tool_result(self, request: ToolCallRequest, result: _T, chat_type: ChatType) -> _T:
        if isinstance(result, ToolMessage) and self.is_memory_tool(request.tool,
                                                                   request.tool_call["name"]):
            return self.clean_message(result, chat_type)
        return result

    # -- model calls --------------------------------------------------------------------------
    def call_model(self, model: Runnable[LanguageModelInput, BaseMessage],
                   messages: Sequence[BaseMessage], *, chat_type: ChatType,
                   config: RunnableConfig | None = None) -> BaseMessage:
        """Invoke a model inside your own graph node and apply the policy to its answer
        (a chat model, bound or not, has its tokens filtered as they stream)."""
        if self.shows(chat_type):
            return model.invoke(list(messages), config)
        answer = _filtering(model).invoke(list(messages), _hidden_tokens_config(config))
        return self.clean_message(answer, chat_type)

    async def acall_model(self, model: Runnable[LanguageModelInput, BaseMessage],
                          messages: Sequence[BaseMessage], *, chat_type: ChatType,
                          config: RunnableConfig | None = None) -> BaseMessage:
        if self.shows(chat_type):
            return await model.ainvoke(list(messages), config)
        answer = await _filtering(model).ainvoke(list(messages), _hidden_tokens_config(config))
        return self.clean_message(answer, chat_type)

    def as_node(self) -> Runnable[Any, dict[str, Any]]:
        """A graph node that cleans the last assistant message (for model nodes you do not own)."""

        def clean_last(state: Any, config: RunnableConfig) -> dict[str, Any]:
            chat_type = resolve_chat_type(config, current_context())
            messages = state_messages(state)
            if not messages or not isinstance(messages[-1], AIMessage):
                return {}
            cleaned = self.clean_message(messages[-1], chat_type)
            return {} if cleaned is messages[-1] else {"messages": [cleaned]}

        return RunnableLambda(clean_last, name="citation_policy")


def _clean_content(content: str | list[str | dict[Any, Any]]) -> str | list[str | dict[Any, Any]]:
    if isinstance(content, str):
        return strip_citations(content)
    blocks: list[str | dict[Any, Any]] = []
    for block in content:
        if isinstance(block, str):
            blocks.append(strip_citations(block))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            blocks.append({**block, "text": strip_citations(block["text"])})
        else:
            blocks.append(block)
    return blocks


def _tool_chat_type(request: ToolCallRequest) -> ChatType:
    runtime = request.runtime
    return resolve_chat_type(getattr(runtime, "config", None), getattr(runtime, "context", None))


def _filtering(model: Runnable[LanguageModelInput, BaseMessage],
               ) -> Runnable[LanguageModelInput, BaseMessage]:
    """``model`` with its tokens filtered (a chat model, or one bound with tools)."""
    if isinstance(model, BaseChatModel) and not isinstance(model, CitationFreeChatModel):
        return CitationFreeChatModel.around(model, strip_citations)
    if isinstance(model, RunnableBinding) and isinstance(model.bound, BaseChatModel):
        return model.model_copy(update={"bound": _filtering(model.bound)})
    return model


def _hidden_tokens_config(config: RunnableConfig | None) -> RunnableConfig:
    # The raw tokens could carry a citation that the cleaned message will not: keep them out
    # of token streaming; the node's (cleaned) output message is still streamed whole.
    base: RunnableConfig = dict(config or {})  # type: ignore[assignment]
    parent = var_child_runnable_config.get() or {}
    tags = list(base.get("tags") or parent.get("tags") or [])
    base["tags"] = [*tags, TAG_NOSTREAM]
    return base


@contextlib.contextmanager
def _tokens_hidden() -> Iterator[None]:
    """Tag model calls made inside the block ``nostream`` (they inherit the run's config)."""
    config = var_child_runnable_config.get()
    if config is None:
        yield
        return
    token = var_child_runnable_config.set(
        {**config, "tags": [*(config.get("tags") or []), TAG_NOSTREAM]})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


# ---------------------------------------------------------------------- create_agent middleware


class CitationPolicyMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """``create_agent`` middleware applying a :class:`CitationPolicy` to tools and answers.

    >>> agent = create_agent(model, tools=memory_tools(index),              # doctest: +SKIP
    ...                      middleware=[CitationPolicyMiddleware("auto")])
    >>> agent.invoke({"messages": [...]}, context={"chat_type": "group"})   # doctest: +SKIP
    """

    def __init__(self, mode: CitationMode = "auto", *,
                 tool_names: frozenset[str] = MEMORY_TOOL_NAMES) -> None:
        super().__init__()
        self.policy = CitationPolicy(mode, tool_names)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
                       ) -> ToolMessage | Command[Any]:
        return self.policy.wrap_tool_call(request, handler)

    async def awrap_tool_call(
            self, request: ToolCallRequest,
            handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return await self.policy.awrap_tool_call(request, handler)

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
                        ) -> ModelResponse[Any] | AIMessage:
        chat_type = _model_chat_type(request)
        request = self._offered(request, chat_type)
        if self.policy.shows(chat_type):
            return handler(request)
        with _tokens_hidden():
            response = handler(self._filtered_model(request))
        return self._clean_response(response, chat_type)

    async def awrap_model_call(
            self, request: ModelRequest[Any],
            handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        chat_type = _model_chat_type(request)
        request = self._offered(request, chat_type)
        if self.policy.shows(chat_type):
            return await handler(request)
        with _tokens_hidden():
            response = await handler(self._filtered_model(request))
        return self._clean_response(response, chat_type)

    @staticmethod
    def _filtered_model(request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with its model's tokens filtered at the source: ``nostream`` keeps
        them out of LangGraph's messages stream only, and ``astream_events`` or a handler on
        the model would otherwise see every raw token."""
        model = request.model
        if not isinstance(model, BaseChatModel) or isinstance(model, CitationFreeChatModel):
            return request
        return request.override(model=CitationFreeChatModel.around(model, strip_citations))

    def _offered(self, request: ModelRequest[Any], chat_type: ChatType) -> ModelRequest[Any]:
        # The model is offered the memory tools as this chat allows them (no MEMORY.md in
        # group chats): their descriptions and schemas, not only their behaviour.
        return request.override(tools=self.policy.scope_tools(list(request.tools), chat_type))

    def _clean_response(self, response: _T, chat_type: ChatType) -> _T:
        if isinstance(response, AIMessage):
            return self.policy.clean_message(response, chat_type)
        result = getattr(response, "result", None)
        if not dataclasses.is_dataclass(response) or not isinstance(result, list):
            return response
        cleaned = [self.policy.clean_message(m, chat_type) if isinstance(m, AIMessage) else m
                   for m in result]
        return dataclasses.replace(response, result=cleaned)  # type: ignore[type-var]


def _model_chat_type(request: ModelRequest[Any]) -> ChatType:
    return resolve_chat_type(var_child_runnable_config.get(), request.runtime.context)


# ---------------------------------------------------------------------- plain chains


def with_citation_policy(runnable: Runnable[Any, Any], mode: CitationMode = "auto",
                         ) -> Runnable[Any, Any]:
    """Wrap a chain so its output (text, messages, or a dict of them) follows the policy.

    The chat type comes from ``config["configurable"]["chat_type"]``. When citations are
    removed the wrapped chain's tokens are not streamed (``stream`` yields the cleaned output
    once), so no citation escapes through partial output.
    """
    policy = CitationPolicy(mode)

    def run(value: Any, config: RunnableConfig) -> Any:
        chat_type = resolve_chat_type(config, current_context())
        if policy.shows(chat_type):
            return runnable.invoke(value, config)
        return _clean_output(runnable.invoke(value, _hidden_tokens_config(config)), policy, chat_type)

    async def arun(value: Any, config: RunnableConfig) -> Any:
        chat_type = resolve_chat_type(config, current_context())
        if policy.shows(chat_type):
            return await runnable.ainvoke(value, config)
        answer = await runnable.ainvoke(value, _hidden_tokens_config(config))
        return _clean_output(answer, policy, chat_type)

    return RunnableLambda(run, afunc=arun, name="with_citation_policy")


def _clean_output(value: Any, policy: CitationPolicy, chat_type: ChatType) -> Any:
    if isinstance(value, str):
        return policy.clean_text(value, chat_type)
    if isinstance(value, BaseMessage):
        return policy.clean_message(value, chat_type)
    if isinstance(value, Mapping):
        return {k: _clean_output(v, policy, chat_type) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_clean_output(v, policy, chat_type) for v in value)
    return value
