"""A deployed memory agent: one graph for every user, memory from the server's store.

``langgraph.json`` names this module's ``graph`` and ``store.py``'s ``generate_store``. The
memory tools get no index here: each call finds its user in ``config["configurable"]
["user_id"]`` and works in ``memory/users/<user_id>/`` of the store's workspace, so users never
see each other's notes, and langmem memories saved under ``("users", "<user_id>")`` are found
by ``memory_search`` too. Citations are shown in direct chats and stripped in group chats
(``configurable.chat_type``).

The model is any OpenAI-compatible endpoint (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``,
``OPENCLAW_AGENT_MODEL``).
"""

from __future__ import annotations

import os

from langchain.agents import create_agent
from langchain_openai import ChatOpenAI

from openclaw_memory.langchain import MemoryScope, memory_tools
from openclaw_memory.langgraph import CitationPolicyMiddleware, MemoryRecallPromptMiddleware

SCOPE = MemoryScope(namespace=("users", "{user_id}"))

graph = create_agent(
    ChatOpenAI(model=os.environ.get("OPENCLAW_AGENT_MODEL", "gpt-4o-mini")),
    tools=memory_tools(SCOPE),
    middleware=[MemoryRecallPromptMiddleware(), CitationPolicyMiddleware("auto")],
)
