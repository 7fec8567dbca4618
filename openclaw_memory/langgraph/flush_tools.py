"""The flush turn's tool calls: each runs, and a broken or unknown tool answers the model
with an error instead of ending the flush (or the user's turn); what ``memory_write`` wrote
is collected for the flush's report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

__all__ = ["acall_tool", "call_tool"]


def call_tool(tools: Sequence[BaseTool], call: ToolCall, config: RunnableConfig,
              writes: list[Mapping[str, Any]]) -> ToolMessage:
    """Run ``call`` with the tool it names; ``writes`` collects what memory_write wrote."""
    tool = next((t for t in tools if t.name == call["name"]), None)
    if tool is None:
        return _unknown_tool(tools, call)
    try:
        result = tool.invoke({**call, "type": "tool_call"}, config)
    except Exception as exc:  # a broken tool must not end the flush (or the user's turn)
        return ToolMessage(content=f"Tool failed: {exc}", tool_call_id=call["id"] or "",
                           status="error")
    return _record_write(result, call, writes)


async def acall_tool(tools: Sequence[BaseTool], call: ToolCall, config: RunnableConfig,
                     writes: list[Mapping[str, Any]]) -> ToolMessage:
    """:func:`call_tool`, awaited."""
    tool = next((t for t in tools if t.name == call["name"]), None)
    if tool is None:
        return _unknown_tool(tools, call)
    try:
        result = await tool.ainvoke({**call, "type": "tool_call"}, config)
    except Exception as exc:  # a broken tool must not end the flush (or the user's turn)
        return ToolMessage(content=f"Tool failed: {exc}", tool_call_id=call["id"] or "",
                           status="error")
    return _record_write(result, call, writes)


def _unknown_tool(tools: Sequence[BaseTool], call: ToolCall) -> ToolMessage:
    names = ", ".join(t.name for t in tools)
    return ToolMessage(content=f"Unknown tool {call['name']!r}; available here: {names}.",
                       tool_call_id=call["id"] or "", status="error")


def _record_write(result: Any, call: ToolCall, writes: list[Mapping[str, Any]]) -> ToolMessage:
    message = (result if isinstance(result, ToolMessage)
               else ToolMessage(content=str(result), tool_call_id=call["id"] or ""))
    if call["name"] == "memory_write" and isinstance(message.artifact, Mapping):
        writes.append(dict(message.artifact))
    return message
