"""Group commit for a sync: files are prepared outside any transaction and written together.

Reading, chunking and embedding a file happen before anything is written; the prepared
writes then commit several files at a time (:meth:`Store.apply`), each file in its own
savepoint. The write lock is held only for the database work, never while a model or an
API embeds, and a commit per file, which cost half of indexing time with a fast embedder,
becomes a commit per batch. A batch commits when it holds :data:`MAX_FILES` files or
:data:`MAX_CHUNKS` chunks, or when its oldest file waited :data:`MAX_AGE_S` (so that other
processes see a long sync progress), and at the end of the sync.

A file that moved between its read and the commit (another process indexed newer bytes)
is rolled back alone and handed back to the sync, which reads it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openclaw_memory.store import StaleReadError, Store

__all__ = ["MAX_AGE_S", "MAX_CHUNKS", "MAX_FILES", "PendingWrite", "WriteBatch"]

MAX_FILES = 128
MAX_CHUNKS = 4096
MAX_AGE_S = 0.5


@dataclass
class PendingWrite:
    """One file's write, and what to do once it committed or turned out stale."""

    write: Callable[[Any], Any]
    done: Callable[[Any], None]
    stale: Callable[[], None]
    chunks: int = 0


class WriteBatch:
    """Prepared writes waiting for one commit."""

    def __init__(self, store: Store, *, max_files: int = MAX_FILES, max_chunks: int = MAX_CHUNKS,
                 max_age_s: float = MAX_AGE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.max_files, self.max_chunks, self.max_age_s = max_files, max_chunks, max_age_s
        self.clock = clock
        self._items: list[PendingWrite] = []
        self._chunks = 0
        self._since: float | None = None
        self.commits = 0

    def add(self, item: PendingWrite) -> None:
        if not self._items:
            self._since = self.clock()
        self._items.append(item)
        self._chunks += item.chunks
        if self._due():
            self.flush()

    def _due(self) -> bool:
        return (len(self._items) >= self.max_files or self._chunks >= self.max_chunks
                or (self._since is not None and self.clock() - self._since >= self.max_age_s))

    def finish(self) -> None:
        """Commit everything, including files read again after a stale commit."""
        while self._items:
            self.flush()

    def flush(self) -> None:
        """Commit what is pending; then report each file (a stale one is handed back)."""
        items, self._items, self._chunks, self._since = self._items, [], 0, None
        if not items:
            return
        results = self.store.apply([item.write for item in items])
        self.commits += 1
        for item, result in zip(items, results, strict=True):
            if isinstance(result, StaleReadError):
                item.stale()
            else:
                item.done(result)
