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
* TTLs are not supported (``supports_ttl`` is False), as in ``InMemoryStore`` without a TTL
  config.

Reads and searches of one batch see the store as it was before the batch's writes (as
``InMemoryStore``), writes are applied in order with the last write to a key winning, and the
index is synced once per batch that wrote. Async calls run the batch in a worker thread, so
they never block the event loop; one lock serialises batches, so concurrent calls never race.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
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
)

from openclaw_memory.errors import ContentError, OpenClawMemoryError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.langgraph.store_items import (
    StoredItem,
    check_label,
    decode_item,
    encode_item,
    folder_of,
    item_path,
    namespace_of,
)
from openclaw_memory.memory_base import Memory
from openclaw_memory.search.filters import Predicate, compile_filter

__all__ = ["OpenClawMemoryStore"]

_log = logging.getLogger(__name__)
_MAX_FETCH = 200  # the engine's own cap on one search's results


class OpenClawMemoryStore(BaseStore):
    """A LangGraph store over a memory workspace.

    ``OpenClawMemoryStore(memory)`` uses an open :class:`MemoryIndex` (and its embedding
    provider); :meth:`open` opens one on a workspace. ``index``: LangGraph's index
    configuration; its ``fields`` choose what is searchable (default the whole value), and
    ``embed`` (any LangChain ``Embeddings``, given to :meth:`open`) replaces the engine's
    embedding provider.
    """

    supports_ttl = False

    def __init__(self, memory: Memory, *, index: IndexConfig | None = None,
                 owns_index: bool = False) -> None:
        self.memory = memory
        self.space = memory.documents()
        self.index_config = index
        self._fields = list(index.get("fields") or ["$"]) if index else None
        self._lock = threading.RLock()
        self._owns_index = owns_index

    @classmethod
    def open(cls, workspace: str | os.PathLike[str], *, index: IndexConfig | None = None,
             index_path: str | os.PathLike[str] | None = None,
             **settings: Any) -> OpenClawMemoryStore:
        """Open a workspace's index and wrap it (closed by :meth:`close`)."""
        embedder = None
        if index and index.get("embed") is not None:
            from langchain_core.embeddings import Embeddings

            from openclaw_memory.embeddings.langchain import LangChainEmbeddingsProvider

            embed = index["embed"]
            if not isinstance(embed, Embeddings):
                raise TypeError("index['embed'] must be a LangChain Embeddings instance here")
            embedder = LangChainEmbeddingsProvider(embed)  # dims are learnt from the vectors
        memory = MemoryIndex.open(workspace, index_path=index_path, embedder=embedder, **settings)
        return cls(memory, index=index, owns_index=True)

    def close(self) -> None:
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
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(op))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
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

    # -- operations --------------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        stored = self._read(item_path(op.namespace, op.key))
        if stored is None or stored.key != op.key or stored.namespace != tuple(op.namespace):
            return None
        return stored.as_item()

    def _put(self, op: PutOp) -> None:
        for label in (*op.namespace, op.key):
            check_label(label)
        rel_path = self.space.check(item_path(op.namespace, op.key), purpose="write")
        if op.value is None:
            self.space.remove(rel_path)
            return
        now = datetime.now(UTC)
        previous = self._read(rel_path)
        created = previous.created_at if previous is not None and previous.key == op.key else now
        item = StoredItem(tuple(op.namespace), op.key, dict(op.value), created, now)
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
            return self._query(op, keep)
        items = [item for item in self._items_below(op.namespace_prefix)
                 if keep is None or keep(item.value)]
        items.sort(key=lambda item: (item.updated_at, item.namespace, item.key), reverse=True)
        return [_search_item(item, None) for item in items[op.offset: op.offset + op.limit]]

    def _query(self, op: SearchOp, keep: Predicate | None) -> list[SearchItem]:
        prefix = folder_of(op.namespace_prefix) + "/"
        wanted = op.offset + op.limit
        fetch = min(_MAX_FETCH, max(wanted * 4, 20))
        while True:
            response = self.memory.search(op.query or "", max_results=fetch, path_prefix=prefix,
                                          path_filter=lambda path: path.startswith(prefix))
            ranked: dict[str, SearchItem] = {}
            for hit in response.results:  # best first: an item's best chunk scores it
                if hit.path in ranked:
                    continue
                stored = self._read_own(hit.path)
                if stored is None or (keep is not None and not keep(stored.value)):
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
        for _parts, path in self._item_paths(prefix):
            stored = self._read_own(path)
            if stored is not None:
                yield stored

    def _namespaces(self) -> Iterator[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for parts, path in self._item_paths(()):
            if parts not in seen and self._read_own(path) is not None:
                seen.add(parts)
                yield namespace_of(parts)


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
