"""The second connection a background sync writes through, so searches on the main one never
wait for it (not even while it waits for another process's write lock)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from openclaw_memory.config import StoreSettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.cache import CachedProvider
from openclaw_memory.store import Store
from openclaw_memory.store.recovery import new_store

__all__ = ["SyncConnection"]


class SyncConnection:
    """Opened on the first background sync, kept for the next ones, dropped when the main
    store is replaced (a damaged index set aside) or the memory is closed."""

    def __init__(self, index_path: Path, settings: StoreSettings, cache: bool) -> None:
        self._index_path = index_path
        self._settings = settings
        self._cache = cache
        # (main store it belongs to, its own store, its provider wrapper)
        self._open: tuple[Store, Store, EmbeddingProvider | None] | None = None

    def get(self, main: Store, provider: EmbeddingProvider | None,
            ) -> tuple[Store, EmbeddingProvider | None]:
        """The store to sync through and the provider to embed with, for ``main``."""
        if self._open is not None and self._open[0] is not main:
            self.drop()  # the main store was replaced (index set aside)
        if self._open is None:
            store = new_store(self._index_path, self._settings, keyword_backend="fts5")
            # Its own cache wrapper: a rebuild points the wrapper at its temporary database.
            wrapped = CachedProvider(provider, store) if self._cache and provider else provider
            self._open = (main, store, wrapped)
        return self._open[1], self._open[2]

    def drop(self) -> None:
        if self._open is not None:
            with contextlib.suppress(Exception):
                self._open[1].close()
            self._open = None
