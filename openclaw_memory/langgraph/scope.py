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

from openclaw_memory.index import ChatType
from openclaw_memory.langchain.scope import current_context, resolve_chat_type

__all__ = ["ChatType", "current_context", "resolve_chat_type"]
