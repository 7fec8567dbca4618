"""``open_memory``: a workspace's memory on the backend its settings name."""

from __future__ import annotations

import os
from typing import Any

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.index import MemoryIndex
from openclaw_memory.memory_base import Memory
from openclaw_memory.settings_sources import ENV_PREFIX, load_settings

__all__ = ["open_memory"]


def open_memory(workspace: str | os.PathLike[str] | None = None, *,
                settings: MemorySettings | None = None, embedder: EmbeddingProvider | None = None,
                **overrides: Any) -> Memory:
    """Open a workspace's memory on the backend its settings name (``store.backend``):
    ``sqlite`` (a folder and an index file; ``workspace`` is its path) or ``postgres`` (a
    shared database; ``workspace`` is its name there, default ``store.workspace_name``). The
    CLI and configuration files go through this."""
    named = _names_postgres(settings, overrides)  # then ``workspace`` is a name, not a path
    resolved, origin = load_settings(None if named else workspace, settings=settings,
                                     overrides=overrides)
    if resolved.store.backend == "postgres":
        from openclaw_memory.postgres import PostgresMemory  # psycopg: optional

        name = str(workspace) if named and workspace is not None else None
        return PostgresMemory.open(None, workspace=name, settings=resolved, embedder=embedder)
    return MemoryIndex(resolved, embedder=embedder, origin=origin)


def _names_postgres(settings: MemorySettings | None, overrides: dict[str, Any]) -> bool:
    """Whether the backend is chosen before any workspace folder is read (argument,
    settings object or environment): the ``workspace`` argument is then a database name."""
    store = overrides.get("store")
    if isinstance(store, dict) and store.get("backend") == "postgres":
        return True
    if settings is not None and settings.store.backend == "postgres":
        return True
    return os.environ.get(f"{ENV_PREFIX}STORE__BACKEND", "").strip().lower() == "postgres"
