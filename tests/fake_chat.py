"""A scripted chat model for agent tests: tool calls, token streaming, recorded calls.

Each call takes the next entry of ``script``: an ``AIMessage`` or a function of the messages
the model received returning one. ``bind_tools`` records the tool names and returns the same
model (so the script and the record are shared). When streaming, text comes out word by word
and tool calls as one final chunk, the way real providers stream.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import Field

Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]


def call(name: str, **args: Any) -> dict[str, Any]:
    """A tool call for ``AIMessage(tool_calls=[...])``."""
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:8]}", "type": "tool_call"}


def ai(text: str = "", *calls: dict[str, Any]) -> AIMessage:
    return AIMessage(content=text, tool_calls=list(calls))


class ScriptedChatModel(BaseChatModel):
    script: list[Any] = Field(default_factory=list)
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[list[str]] = Field(default_factory=list)
    repeat_last: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        self.bound_tools.append([t.name if isinstance(t, BaseTool) else str(t) for t in tools])
        return self  # type: ignore[return-value]

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        self.calls.append(list(messages))
        if not self.script:
            raise AssertionError(f"script exhausted after {len(self.calls) - 1} calls")
        step = self.script[0] if self.repeat_last and len(self.script) == 1 else self.script.pop(0)
        message = step(messages) if callable(step) else step
        return message.model_copy(update={"id": message.id or f"run-{uuid.uuid4().hex[:12]}"})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        message = self._next(messages)
        text = message.content if isinstance(message.content, str) else ""
        for piece in re.findall(r"\S+\s*|\s+", text):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece, id=message.id))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        if message.tool_calls:
            chunks = [{"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i,
                       "type": "tool_call_chunk"} for i, c in enumerate(message.tool_calls)]
            chunk = ChatGenerationChunk(message=AIMessageChunk(content="", id=message.id,
                                                               tool_call_chunks=chunks))
            if run_manager:
                run_manager.on_llm_new_token("", chunk=chunk)
            yield chunk
