"""The custom store of a deployed graph: ``"store": {"path": "./store.py:generate_store"}`` in
``langgraph.json``.

The server enters ``generate_store()`` once at start-up and gives the store it yields to every
graph run: ``get_store()`` and ``InjectedStore`` in tools, ``runtime.store`` in nodes,
langmem's memory tools and the memory tools of ``graph.py`` all read and write the same
memory. The backend comes from the settings: a Markdown workspace folder
(``OPENCLAW_MEMORY_WORKSPACE``) by default, or a PostgreSQL workspace with
``OPENCLAW_MEMORY_STORE__BACKEND=postgres`` and ``OPENCLAW_MEMORY_STORE__DSN`` (replicas on
several machines); every other setting from ``OPENCLAW_MEMORY_*`` variables or the workspace's
``openclaw-memory.toml``.

Items put with a TTL (``ttl`` in minutes, as LangGraph's API takes it) expire: the server
skips its own TTL sweeper for a custom store, so this one runs the store's sweeper
(``OPENCLAW_TTL_SWEEP_MINUTES``, default 5) while the server runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from openclaw_memory.langgraph import OpenClawMemoryStore
from openclaw_memory.opening import open_memory


@contextlib.asynccontextmanager
async def generate_store() -> AsyncIterator[OpenClawMemoryStore]:
    if os.environ.get("OPENCLAW_MEMORY_STORE__BACKEND") == "postgres":
        memory = open_memory(os.environ.get("OPENCLAW_MEMORY_STORE__WORKSPACE_NAME"))
    else:
        workspace = Path(os.environ.get("OPENCLAW_MEMORY_WORKSPACE",
                                        "/data/agent-memory")).expanduser()
        workspace.mkdir(parents=True, exist_ok=True)
        # A deployed graph runs for days: it follows the memory files as people edit them
        # (sync.watch), unless OPENCLAW_MEMORY_SYNC__WATCH says otherwise.
        watch = {} if "OPENCLAW_MEMORY_SYNC__WATCH" in os.environ else {"sync": {"watch": True}}
        memory = open_memory(workspace, **watch)
    sweep = float(os.environ.get("OPENCLAW_TTL_SWEEP_MINUTES", "5"))
    store = OpenClawMemoryStore(memory, owns_index=True,
                                ttl={"refresh_on_read": True, "sweep_interval_minutes": sweep})
    sweeper = asyncio.create_task(store.start_ttl_sweeper())
    try:
        yield store
    finally:
        sweeper.cancel()
        store.close()
