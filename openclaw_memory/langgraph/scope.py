"""Which kind of chat a run belongs to, read from the run itself (context or config).

The chat type decides two privacy rules: ``MEMORY.md`` is only loaded or returned in direct
(private) chats, and ``citations="auto"`` shows ``path#Lx-Ly`` citations in direct chats only.
Everything in this package resolves it the same way, in this order:

1. the LangGraph runtime ``context`` (``context.chat_type``, a mapping key or an attribute);
2. ``config["configurable"]["chat_type"]``;
3. ``config["configurable"]["session_key"]``: a ``:``-separated key containing the token
   ``channel`` or ``group`` (OpenClaw's convention, e.g. ``agent:main:telegram:group:42``);
4. otherwise ``"direct"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast, get_args

from langchain_core.runnables import RunnableConfig

from openclaw_memory.index import ChatType

__all__ = ["ChatType", "current_context", "resolve_chat_type"]

_CHAT_TYPES: frozenset[str] = frozenset(get_args(ChatType))


def resolve_chat_type(config: RunnableConfig | Mapping[str, Any] | None = None,
                      context: Any = None, *, default: ChatType = "direct") -> ChatType:
    """The chat type of a run (see the module docstring for the lookup order).

    An unknown value raises ``ValueError``: silently treating a misspelt ``"grup"`` as a
    direct chat would leak private memory into a group.
    """
    value = _from_context(context)
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    if value is None:
        value = configurable.get("chat_type")
    if value is None:
        value = _from_session_key(configurable.get("session_key"))
    if value is None:
        return default
    return _validated(value)


def current_context() -> Any:
    """The LangGraph runtime context of the running graph, or None outside a graph run."""
    try:
        from langgraph.runtime import get_runtime

        return get_runtime().context
    except (RuntimeError, KeyError, AttributeError):
        return None


def _from_context(context: Any) -> Any:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get("chat_type")
    return getattr(context, "chat_type", None)


def _from_session_key(key: Any) -> ChatType | None:
    if not isinstance(key, str) or not key:
        return None
    tokens = set(key.lower().split(":"))
    if "channel" in tokens:
        return "channel"
    if "group" in tokens:
        return "group"
    return None


def _validated(value: Any) -> ChatType:
    text = str(value).strip().lower()
    if text not in _CHAT_TYPES:
        raise ValueError(f"unknown chat_type {value!r}: use 'direct', 'group' or 'channel'")
    return cast(ChatType, text)
