"""The custom store of a deployed graph: ``"store": {"path": "./store.py:generate_store"}`` in
``langgraph.json``.

The server enters ``generate_store()`` once at start-up and gives the store it yields to every
graph run: ``get_store()`` and ``InjectedStore`` in tools, ``runtime.store`` in nodes,
langmem's memory tools and the memory tools of ``graph.py`` all read and write the same
Markdown workspace. The workspace comes from ``OPENCLAW_MEMORY_WORKSPACE``; every other
setting from ``OPENCLAW_MEMORY_*`` variables or the workspace's ``openclaw-memory.toml``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from openclaw_memory.langgraph import OpenClawMemoryStore


@contextlib.asynccontextmanager
async def generate_store() -> AsyncIterator[OpenClawMemoryStore]:
    workspace = Path(os.environ.get("OPENCLAW_MEMORY_WORKSPACE", "/data/agent-memory")).expanduser()
    workspace.mkdir(parents=True, exist_ok=True)
    store = OpenClawMemoryStore.open(workspace)
    try:
        yield store
    finally:
        store.close()
