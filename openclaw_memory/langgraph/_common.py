"""Helpers the LangGraph layer shares: silent model calls, state access, message text."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from pydantic import SecretStr

from openclaw_memory.config import MemorySettings
from openclaw_memory.memory_base import Memory
from openclaw_memory.redact import SAFE_HEADERS, redact_text

__all__ = [
    "TokenCounter",
    "answer_args",
    "bind_answer_tool",
    "chat_model_of",
    "context_window_of",
    "current_run_config",
    "default_token_counter",
    "effective_tokens",
    "message_text",
    "reported_tokens",
    "settings_of",
    "state_get",
    "state_messages",
    "without_dangling_tool_calls",
]

TokenCounter = Callable[[Sequence[BaseMessage]], int]


def default_token_counter(messages: Sequence[BaseMessage]) -> int:
    """LangChain's approximate counter, the default of its own compaction step too."""
    return count_tokens_approximately(messages)


def reported_tokens(messages: Sequence[BaseMessage]) -> int:
    """``total_tokens`` the provider reported for the last assistant message, else 0.

    It covers what a message-only estimate cannot see: the system prompt and the tool
    schemas sent with every request. LangChain's summarizer compacts on it too.
    """
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            total = message.usage_metadata["total_tokens"] if message.usage_metadata else 0
            return total if isinstance(total, int) and total > 0 else 0
    return 0


def effective_tokens(messages: Sequence[BaseMessage], counter: TokenCounter) -> int:
    """The larger of the counter's estimate and the provider's reported usage."""
    return max(counter(messages), reported_tokens(messages))


def state_get(state: Any, key: str, default: Any = None) -> Any:
    """Read a key of a graph state that may be a mapping or an object (dataclass, pydantic)."""
    if isinstance(state, Mapping):
        return state.get(key, default)
    return getattr(state, key, default)


def state_messages(state: Any) -> list[BaseMessage]:
    messages = state_get(state, "messages", None) or []
    return list(messages)


def message_text(message: BaseMessage) -> str:
    """Plain text of a message whose content is a string or a list of content blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def context_window_of(model: Any) -> int | None:
    """``max_input_tokens`` from a chat model's profile, when the model has one."""
    profile = getattr(model, "profile", None)
    if not isinstance(profile, Mapping):
        return None
    value = profile.get("max_input_tokens")
    return value if isinstance(value, int) and value > 0 else None


def without_dangling_tool_calls(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Drop tool calls that were never answered (and answers to unknown calls).

    Providers reject a history where an assistant tool call has no tool result; a flush or
    summary can be asked for at any point of a run, so the history is repaired first.
    """
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    asked: set[str] = set()
    kept: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            ids = [call.get("id") or "" for call in message.tool_calls]
            if not all(i in answered for i in ids):
                if message_text(message).strip():
                    kept.append(AIMessage(content=message.content, id=message.id))
                continue
            asked.update(ids)
        elif isinstance(message, ToolMessage) and message.tool_call_id not in asked:
            continue
        kept.append(message)
    return kept


def settings_of(memory: Any) -> MemorySettings:
    """The settings an agent step reads its defaults from: its index's (a scope's shared
    index's), else, for a scope that opens a workspace per run, the environment's and the
    working folder's file."""
    if isinstance(memory, Memory):
        return memory.settings
    index = getattr(memory, "index", None)
    if isinstance(index, Memory):
        return index.settings
    from openclaw_memory.settings_sources import load_settings

    return load_settings(None)[0]


def bind_answer_tool(model: BaseChatModel, schema: dict[str, Any], name: str) -> Any:
    """``model`` bound to the one tool an internal turn answers with, the call forced where
    the provider can force it. Providers without ``tool_choice`` refuse it at bind time
    (TypeError, ValueError, NotImplementedError); they get the tool offered (consolidation
    also reads a proposal written as JSON text; capture takes no call as nothing to keep)."""
    try:
        return model.bind_tools([schema], tool_choice=name)
    except (TypeError, ValueError, NotImplementedError):
        return model.bind_tools([schema])


def answer_args(reply: BaseMessage, tool: str, what: str) -> dict[str, Any] | str | None:
    """The arguments an internal turn answered with: its ``tool`` call, else a JSON object in
    its text (a model that ignored the tool); None for an empty or ``NO_REPLY`` answer; a
    line saying what is missing (``what``: "a proposal") when the text holds none."""
    calls = reply.tool_calls if isinstance(reply, AIMessage) else []
    args = next((c["args"] for c in calls if c["name"] == tool), None)
    if args is not None:
        return dict(args)
    text = message_text(reply).strip()
    if not text or text == "NO_REPLY":
        return None
    start, end = text.find("{"), text.rfind("}")
    try:
        found = json.loads(text[start:end + 1]) if 0 <= start < end else None
    except ValueError:
        found = None
    if not isinstance(found, dict):
        return f"the model answered without {what}: {text[:200]!r}"
    return found


def model_error(model: Any, exc: BaseException) -> str:
    """A chat model's failure as one line a report, a log or a terminal may show: the model's
    own credentials (its ``SecretStr`` fields: ``api_key`` ...; its non-standard headers) and
    anything shaped like a key cut out, since a server may echo the key in its error."""
    secrets: list[str] = []
    for value in dict(getattr(model, "__dict__", {})).values():
        if isinstance(value, SecretStr):
            secrets.append(value.get_secret_value())
        elif isinstance(value, Mapping):
            secrets += [v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)
                        and k.lower() not in SAFE_HEADERS]
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return redact_text(text, secrets)[:500]


def chat_model_of(model: BaseChatModel | str) -> BaseChatModel:
    """A chat model, or one built from a ``"provider:model"`` string (the ``agents`` extra)."""
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    return model


def current_run_config() -> RunnableConfig | None:
    """The config of the run a middleware hook is called in (LangChain keeps it in a context
    variable; hooks are not given it)."""
    from langchain_core.runnables.config import var_child_runnable_config

    return var_child_runnable_config.get()
