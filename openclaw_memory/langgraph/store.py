"""``OpenClawMemoryStore``: a LangGraph ``BaseStore`` whose items are Markdown files.

Anything that takes a LangGraph store takes this one: ``create_agent(..., store=store)``,
``graph.compile(store=store)``, ``get_store()`` / ``InjectedStore`` in tools, langmem's memory
tools. Each item is a file under ``memory/`` (format in :mod:`.store_items`): a namespace is a
folder, a key a file, the value is kept exactly in the file's header and its indexed fields are
the text a person reads and the hybrid search finds. The SQLite index is only a cache: delete
it and the next search rebuilds it from the files.

Semantics, compared with LangGraph's ``InMemoryStore`` (tested side by side):

* ``get``, ``put``, ``delete``, ``list_namespaces`` (prefix, suffix, ``*`` wildcards,
  ``max_depth``, limit, offset) and ``search`` filters, limit and offset behave the same.
* ``created_at`` survives an update (``InMemoryStore`` resets it on every put; LangGraph's
  Postgres store keeps it, as here).
* Without a query, ``search`` lists items newest first by ``updated_at`` (as the Postgres store
  does; ``InMemoryStore`` keeps insertion order).
* With a query, items are ranked by the engine's hybrid score (cosine + keyword coverage), and
  the relevance gates apply: an off-topic query returns nothing, where ``InMemoryStore``
  returns every item with a low cosine. Items stored with ``index=False`` are never found by a
  query (``InMemoryStore`` appends them, unscored, when results run short).
* TTLs (``put(..., ttl=minutes)``, ``TTLConfig``'s ``default_ttl``, ``refresh_on_read`` and
  ``sweep_interval_minutes``): an item's expiry is written in its file's header; an expired
  item is never returned, listed or found (``omit_expired`` is always on: the file is the
  truth), reads refresh it when asked, and :meth:`sweep_ttl` (run every
  ``sweep_interval_minutes`` by :meth:`start_ttl_sweeper`) deletes the files of expired items,
  as ``delete`` does. A LangGraph server skips its own sweeper for a custom store, so the
  deployed ``generate_store`` starts this one.
* Any namespace and key a LangGraph store takes is stored and found: ``put`` refuses what
  LangGraph refuses (``InvalidNamespaceError``, answered 4xx by its server), and
  ``batch([PutOp(...)])``, which does not check, may write an empty namespace or label, dots,
  ``..``: each label maps to one folder by :mod:`openclaw_memory.files.namespaces` (long ones
  digest-tagged, the empty one ``%~``), the empty namespace to ``memory/%~root``.

Reads and searches of one batch see the store as it was before the batch's writes (as
``InMemoryStore``), writes are applied in order with the last write to a key winning, and the
index is synced once per batch that wrote. Async calls run the batch in a worker thread, so
they never block the event loop; one lock serialises batches, so concurrent calls never race.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from openclaw_memory.errors import ContentError, OpenClawMemoryError, WorkspaceError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.langchain.scope import resolve_chat_type
from openclaw_memory.langgraph.store_items import (
    StoredItem,
    check_label,
    decode_item,
    encode_item,
    folder_of,
    index_of,
    item_path,
)
from openclaw_memory.memory_base import Memory
from openclaw_memory.scope.availability import decide
from openclaw_memory.scope.filters import Predicate, compile_filter

__all__ = ["OpenClawMemoryStore"]

_log = logging.getLogger(__name__)
_MAX_FETCH = 200  # the engine's own cap on one search's results



#: The longest TTL with an expiry: about 1 000 years in minutes. Longer ones (1e10, inf) are
#: kept with no expiry, as LangGraph's own store keeps them (a date that far is out of range).
MAX_TTL_MINUTES = 1000 * 366 * 24 * 60.0


def lasting(ttl: float | None) -> float | None:
    """The TTL in minutes an item expires after, or None for an item that never expires: no
    TTL, one no date can hold (over :data:`MAX_TTL_MINUTES`, infinite, NaN), or zero and
    below, which LangGraph's store keeps too."""
    if ttl is None:
        return None
    minutes = float(ttl)
    if not math.isfinite(minutes) or minutes <= 0 or minutes > MAX_TTL_MINUTES:
        return None
    return minutes


class OpenClawMemoryStore(BaseStore):
    """A LangGraph store over a memory workspace.

    ``OpenClawMemoryStore(memory)`` uses an open :class:`MemoryIndex` (and its embedding
    provider); :meth:`open` opens one on a workspace. ``index``: LangGraph's index
    configuration; its ``fields`` choose what is searchable (default the whole value), and
    ``embed`` (any LangChain ``Embeddings``, given to :meth:`open`) replaces the engine's
    embedding provider.
    """

    supports_ttl = True

    def __init__(self, memory: Memory, *, index: IndexConfig | None = None,
                 owns_index: bool = False, ttl: TTLConfig | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.memory = memory
        self.space = memory.documents()
        self.index_config = index
        self.ttl_config = ttl
        self._fields = list(index.get("fields") or ["$"]) if index else None
        self._lock = threading.RLock()
        self._owns_index = owns_index
        self._now = clock or (lambda: datetime.now(UTC))
        self._sweeper: asyncio.Task[None] | None = None

    @classmethod
    def open(cls, workspace: str | os.PathLike[str], *, index: IndexConfig | None = None,
             index_path: str | os.PathLike[str] | None = None, ttl: TTLConfig | None = None,
             **settings: Any) -> OpenClawMemoryStore:
        """Open a workspace's index and wrap it (closed by :meth:`close`). A workspace folder
        that does not exist yet is created (owner only), as LangGraph's stores create what they
        need."""
        try:
            Path(workspace).expanduser().mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(f"cannot create the workspace {workspace}: "
                                 f"{exc.strerror or exc}") from None
        embedder = None
        if index and index.get("embed") is not None:
            from langchain_core.embeddings import Embeddings

            from openclaw_memory.embeddings.langchain import LangChainEmbeddingsProvider

            embed = index["embed"]
            if not isinstance(embed, Embeddings):
                raise TypeError("index['embed'] must be a LangChain Embeddings instance here")
            embedder = LangChainEmbeddingsProvider(embed)  # dims are learnt from the vectors
        memory = MemoryIndex.open(workspace, index_path=index_path, embedder=embedder, **settings)
        return cls(memory, index=index, owns_index=True, ttl=ttl)

    def close(self) -> None:
        self.stop_ttl_sweeper()
        if self._owns_index:
            self.memory.close()

    def __enter__(self) -> OpenClawMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- BaseStore ---------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        with self._lock:
            results: list[Result] = []
            writes: dict[tuple[tuple[str, ...], str], PutOp] = {}
            denied = any(isinstance(op, GetOp | SearchOp) for op in ops) and self._denied()
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(None if denied else self._get(op))
                elif isinstance(op, SearchOp):
                    results.append([] if denied else self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list_namespaces(op))
                elif isinstance(op, PutOp):
                    writes[(op.namespace, op.key)] = op
                    results.append(None)
                else:
                    raise ValueError(f"unknown store operation {type(op).__name__}")
            if writes:
                for write in writes.values():
                    self._put(write)
                self.space.settle("written through the LangGraph store")
            return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # The engine is synchronous (SQLite, file I/O); a worker thread keeps the loop free.
        return await asyncio.to_thread(self.batch, list(ops))

    # -- TTL -----------------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Delete the files of expired items; how many were deleted."""
        with self._lock:
            now = self._now()
            expired = [path for _parts, path in self._item_paths(())
                       if (stored := self._read_own(path)) is not None and stored.expired(now)]
            for path in expired:
                self.space.remove(path)
            if expired:
                self.space.settle("expired store items swept")
            return len(expired)

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> None:
        """Sweep every ``sweep_interval_minutes`` (default: the TTL config's, else 5) until
        :meth:`stop_ttl_sweeper` or cancellation; run it as a task."""
        config = self.ttl_config or {}
        minutes = sweep_interval_minutes or config.get("sweep_interval_minutes") or 5
        self._sweeper = asyncio.current_task()
        try:
            while True:
                await asyncio.to_thread(self.sweep_ttl)
                await asyncio.sleep(float(minutes) * 60)
        except asyncio.CancelledError:
            return

    def stop_ttl_sweeper(self) -> None:
        if self._sweeper is not None and not self._sweeper.done():
            self._sweeper.cancel()
        self._sweeper = None

    def _refreshed(self, stored: StoredItem, path: str, refresh: bool | None) -> StoredItem:
        if lasting(stored.ttl) is None:
            return stored  # an item written by an older version with a TTL no date holds
        """``stored`` with its expiry moved on by a read that asks for it."""
        if not refresh or stored.ttl is None or stored.expires_at is None:
            return stored
        now = self._now()
        moved = now + timedelta(minutes=stored.ttl)
        # A read moves the expiry only when that is worth rewriting the file for: by a
        # second, or a hundredth of the TTL (minutes * 60 s / 100).
        if (moved - stored.expires_at).total_seconds() < max(1.0, stored.ttl * 0.6):
            return stored
        fresh = dataclasses.replace(stored, expires_at=moved)
        data = self.space.read(path)
        if data is not None:
            self.space.write(path, encode_item(fresh, index_of(data), self._fields))
        return fresh

    # -- operations --------------------------------------------------------------------------
    def _denied(self) -> bool:
        """Whether the scope rules deny memory to the run this call belongs to (its chat
        type and session key, from the run's config; outside a run: a direct call)."""
        try:
            from langgraph.config import get_config

            config: Any = get_config()
        except (ImportError, RuntimeError):
            config = None
        try:
            chat_type = resolve_chat_type(config)
        except ValueError:
            chat_type = "channel"  # an unknown chat type is not taken for a private one
        key = ((config or {}).get("configurable") or {}).get("session_key")
        decision = decide(self.memory.settings.scope, chat_type,
                          key if isinstance(key, str) else None)
        if not decision.allowed:
            self.memory.count_event("scope_denied")
        return not decision.allowed

    def _get(self, op: GetOp) -> Item | None:
        try:
            path = item_path(op.namespace, op.key)
        except (OpenClawMemoryError, ValueError, UnicodeError):
            return None
        stored = self._read_own(path)
        if stored is None or stored.key != op.key or stored.namespace != tuple(op.namespace):
            return None
        if stored.expired(self._now()):
            return None
        return self._refreshed(stored, path, op.refresh_ttl).as_item()

    def _put(self, op: PutOp) -> None:
        for label in (*op.namespace, op.key):
            check_label(label)
        rel_path = self.space.check(item_path(op.namespace, op.key), purpose="write")
        if op.value is None:
            self.space.remove(rel_path)
            return
        now = self._now()
        previous = self._read(rel_path)
        created = previous.created_at if previous is not None and previous.key == op.key else now
        ttl = lasting(op.ttl)
        item = StoredItem(tuple(op.namespace), op.key, dict(op.value), created, now, ttl,
                          None if ttl is None else now + timedelta(minutes=ttl))
        index = op.index if op.index is False or op.index is None else list(op.index)
        data = encode_item(item, index, self._fields)
        limit = self.memory.settings.sync.max_file_bytes
        if len(data) > limit:  # the index would skip the file: stored, never found
            raise ContentError(f"item {op.key!r} takes {len(data)} bytes as a file, more than "
                               f"sync.max_file_bytes ({limit}); no search could find it")
        self.space.write(rel_path, data)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        keep = compile_filter(op.filter)
        if op.query:
            found = self._query(op, keep)
        else:
            items = [item for item in self._items_below(op.namespace_prefix)
                     if keep is None or keep(item.value)]
            items.sort(key=lambda item: (item.updated_at, item.namespace, item.key), reverse=True)
            found = [_search_item(item, None) for item in items[op.offset: op.offset + op.limit]]
        if op.refresh_ttl:
            for hit in found:
                stored = self._read_own(item_path(hit.namespace, hit.key))
                if stored is not None:
                    self._refreshed(stored, item_path(hit.namespace, hit.key), True)
        return found

    def _query(self, op: SearchOp, keep: Predicate | None) -> list[SearchItem]:
        prefix = folder_of(op.namespace_prefix) + "/"
        wanted = op.offset + op.limit
        fetch = min(_MAX_FETCH, max(wanted * 4, 20))
        while True:
            # No text budget: it bounds what a model is handed, not a store's pages.
            response = self.memory.search(op.query or "", max_results=fetch, path_prefix=prefix,
                                          path_filter=lambda path: path.startswith(prefix),
                                          max_injected_chars=0)
            ranked: dict[str, SearchItem] = {}
            for hit in response.results:  # best first: an item's best chunk scores it
                if hit.path in ranked:
                    continue
                stored = self._read_own(hit.path)
                if stored is None or stored.expired(self._now()) or (
                        keep is not None and not keep(stored.value)):
                    continue
                ranked[hit.path] = _search_item(stored, hit.score)
            if len(ranked) >= wanted or len(response.results) < fetch or fetch >= _MAX_FETCH:
                return list(ranked.values())[op.offset: wanted]
            fetch = min(_MAX_FETCH, fetch * 4)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = sorted({item_ns for item_ns in self._namespaces()
                        if all(_matches(condition, item_ns)
                               for condition in op.match_conditions or ())})
        if op.max_depth is not None:
            found = sorted({ns[: op.max_depth] for ns in found})
        return found[op.offset: op.offset + op.limit]

    # -- documents ---------------------------------------------------------------------------
    def _read(self, rel_path: str) -> StoredItem | None:
        try:
            data = self.space.read(rel_path)
        except ContentError as exc:  # too large to be an item: skipped, never read whole
            _log.warning("skipped %s: %s", rel_path, exc)
            return None
        return decode_item(data) if data is not None else None

    def _read_own(self, rel_path: str) -> StoredItem | None:
        """The item a file holds, only when its header names this very file: an item is
        read from its own namespace folder and key file, never from what a note's text
        claims (a note in bob's folder starting with a header naming alice is bob's note,
        not alice's item)."""
        stored = self._read(rel_path)
        if stored is None:
            return None
        try:
            own = item_path(stored.namespace, stored.key)
        except (OpenClawMemoryError, ValueError, UnicodeError):
            return None
        return stored if own == rel_path else None

    def _item_paths(self, start: Sequence[str]) -> Iterator[tuple[tuple[str, ...], str]]:
        """(folder parts below memory/, document path) of every document in ``start``'s
        folder and below it."""
        for path in self.space.paths(folder_of(start)):
            parts = tuple(path.split("/")[1:-1])
            if parts:  # memory/ itself holds daily logs, never items (namespaces are non-empty)
                yield parts, path

    def _items_below(self, prefix: Sequence[str]) -> Iterator[StoredItem]:
        try:
            start = list(prefix)
            folder_of(start)
        except (OpenClawMemoryError, ValueError, UnicodeError):
            return
        now = self._now()
        for _parts, path in self._item_paths(start):
            stored = self._read_own(path)
            if stored is not None and not stored.expired(now):
                yield stored

    def _namespaces(self) -> Iterator[tuple[str, ...]]:
        # From the items' own headers (checked against their folder): a long label's folder
        # name is digest-tagged and does not decode back.
        seen: set[str] = set()
        now = self._now()
        for _parts, path in self._item_paths(()):
            folder = path.rsplit("/", 1)[0]
            if folder in seen:
                continue
            stored = self._read_own(path)
            if stored is not None and not stored.expired(now):
                seen.add(folder)
                yield stored.namespace


def _search_item(item: StoredItem, score: float | None) -> SearchItem:
    return SearchItem(namespace=item.namespace, key=item.key, value=item.value,
                      created_at=item.created_at, updated_at=item.updated_at, score=score)


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = zip(namespace, path, strict=False) if condition.match_type == "prefix" else zip(
        reversed(namespace), reversed(path), strict=False)
    return all(want == "*" or have == want for have, want in pairs)
