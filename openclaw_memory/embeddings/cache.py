"""Content-addressed embedding cache in front of any provider.

Re-indexing after a file edit re-chunks the whole file, but most chunks are unchanged;
looking each text's sha256 up first means only new text costs an API call (or CPU time).
Entries are keyed by (provider id, model, provider_key, text hash), so vectors of another
model, endpoint or dimension setting are never served.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray, normalize_rows

__all__ = ["SEARCH_VECTORS", "CacheBackend", "CachedProvider", "MemoryCacheBackend", "text_hash"]

#: Vectors of texts a search compared, kept in memory per provider (about 1.5 KB each at 384
#: dimensions: 6 MB), newest kept.
SEARCH_VECTORS = 4096


def text_hash(text: str) -> str:
    """The cache key of a text: sha256 of its UTF-8 bytes, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CacheBackend(Protocol):
    """Where cached vectors live (the index's SQLite store implements this)."""

    def get_many(
        self, provider_id: str, model: str, provider_key: str, hashes: Sequence[str]
    ) -> dict[str, FloatArray]: ...

    def put_many(
        self, provider_id: str, model: str, provider_key: str, items: dict[str, FloatArray]
    ) -> None: ...


class MemoryCacheBackend:
    """A dict-backed :class:`CacheBackend` for tests and short-lived processes."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str, str, str], FloatArray] = {}
        self._lock = threading.Lock()

    def get_many(
        self, provider_id: str, model: str, provider_key: str, hashes: Sequence[str]
    ) -> dict[str, FloatArray]:
        with self._lock:
            return {
                h: self.entries[key].copy()
                for h in hashes
                if (key := (provider_id, model, provider_key, h)) in self.entries
            }

    def put_many(self, provider_id: str, model: str, provider_key: str, items: dict[str, FloatArray]) -> None:
        with self._lock:
            for h, vector in items.items():
                self.entries[(provider_id, model, provider_key, h)] = vector.copy()


@dataclass
class _SearchVectors:
    """The vectors searches embedded with one provider and model in this process."""

    vectors: OrderedDict[str, FloatArray] = field(default_factory=OrderedDict)
    unsaved: set[str] = field(default_factory=set)
    """Hashes of a costly provider's vectors no sync has written to the cache yet."""
    lock: threading.Lock = field(default_factory=threading.Lock)


_SHARED: dict[str, _SearchVectors] = {}
_SHARED_LOCK = threading.Lock()


def _search_vectors(provider_key: str) -> _SearchVectors:
    """The process's map of vectors searches embedded with this provider and model, shared
    by every memory opened with it: a server or notebook that opens the memory per request
    would otherwise embed the same lines again each time."""
    with _SHARED_LOCK:
        return _SHARED.setdefault(provider_key, _SearchVectors())


class CachedProvider(EmbeddingProvider):
    """``provider`` with a cache: only texts never seen before are embedded, each once.

    Fresh vectors are written to the backend at once only for a ``costly`` provider (an
    API); the index keeps a local model's vectors with their chunks (store/cache_rows.py).

    ``hits`` counts distinct texts served from the cache, ``misses`` distinct texts sent to
    the provider (a text repeated within one call is embedded once and counted once).
    Queries are not cached: they are rarely repeated and must reflect the live provider.
    ``backend`` may be reassigned (e.g. to a fresh index during a rebuild).

    :meth:`embed_for_search` (the lines a search compares) reads the backend but keeps what
    it embeds in a bounded in-process map (:data:`SEARCH_VECTORS` texts, shared by every
    wrapper of the same provider and model in the process): a search never
    writes the index. Writing them had bumped the index generation on every search with a
    costly provider, voiding the in-memory postings (issue 47: 41 bumps in 100 searches), and
    made a search wait for another process's write lock.
    """

    def __init__(self, provider: EmbeddingProvider, backend: CacheBackend) -> None:
        super().__init__()
        self.provider = provider
        self.backend = backend
        self.id = provider.id
        self.costly = provider.costly
        self.model = provider.model
        self.provider_key = provider.provider_key
        self.max_input_tokens = provider.max_input_tokens
        self.hits = 0
        self.misses = 0
        self._counter_lock = threading.Lock()
        shared = _search_vectors(provider.provider_key)
        self._seen, self._seen_lock, self._unsaved = shared.vectors, shared.lock, shared.unsaved

    @property
    def dims(self) -> int | None:
        return self.provider.dims

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        return self._embedded(texts, "embed_documents", self._lookup, self._embed_and_store)

    def embed_query(self, text: str) -> FloatArray:
        return self.provider.embed_query(text)

    def embed_for_search(self, texts: Sequence[str]) -> FloatArray:
        return self._embedded(texts, "embed_for_search", self._seen_or_stored, self._embed_and_keep)

    def _embedded(self, texts: Sequence[str], name: str,
                  lookup: Callable[[list[str]], dict[str, FloatArray]],
                  embed: Callable[[dict[str, str]], dict[str, FloatArray]]) -> FloatArray:
        """Vectors of ``texts``: those ``lookup`` finds by hash, the rest from ``embed`` (each
        distinct text once: dict keeps the first text per hash)."""
        if isinstance(texts, str):
            raise TypeError(f"{name} takes a sequence of texts, not a single str")
        if not texts:
            return np.zeros((0, self.dims or 0), dtype=np.float32)
        hashes = [text_hash(text) for text in texts]
        found = lookup(list(dict.fromkeys(hashes)))
        missing = {h: text for h, text in zip(hashes, texts, strict=True) if h not in found}
        if missing:
            found.update(embed(missing))
        self._count(hits=len(set(hashes)) - len(missing), misses=len(missing))
        return normalize_rows(np.stack([found[h] for h in hashes]))

    def _seen_or_stored(self, hashes: list[str]) -> dict[str, FloatArray]:
        """Vectors a search embedded before (in memory), then those the backend holds."""
        width = self.provider.dims
        with self._seen_lock:
            # Shared by provider key: a vector of another width (a wrapper whose model
            # reports the same key but embeds otherwise) is a miss, as in _lookup.
            found = {h: self._seen[h] for h in hashes if h in self._seen
                     and (width is None or self._seen[h].shape[0] == width)}
            for h in found:
                self._seen.move_to_end(h)
        rest = [h for h in hashes if h not in found]
        return {**found, **self._lookup(rest)} if rest else found

    def _embed_and_keep(self, missing: dict[str, str]) -> dict[str, FloatArray]:
        fresh = dict(zip(missing, self.provider.embed_documents(list(missing.values())),
                         strict=True))
        self._remember({h: v for h, v in fresh.items() if not np.isnan(v).any()})
        return fresh

    def _remember(self, vectors: dict[str, FloatArray]) -> None:
        with self._seen_lock:
            self._seen.update(vectors)
            if self.provider.costly:
                self._unsaved.update(vectors)
            while len(self._seen) > SEARCH_VECTORS:
                self._unsaved.discard(self._seen.popitem(last=False)[0])

    def save_search_vectors(self) -> int:
        """Write to the backend's cache the vectors searches embedded with a costly provider
        since the last save, and return how many: sync calls it, since it writes anyway. A
        new process (a CLI call, a restarted worker) then reads them instead of paying for
        them again over the network. A search itself never writes (issue 47). Raises
        :class:`StoreError` when the backend cannot be written; they stay in memory then."""
        with self._seen_lock:
            items = {h: self._seen[h] for h in self._unsaved if h in self._seen}
        if not items:
            return 0
        self.backend.put_many(self.id, self.model, self.provider_key, items)
        with self._seen_lock:
            self._unsaved.difference_update(items)
        return len(items)

    def _embed(self, texts: list[str]) -> npt.ArrayLike:  # unused: embed_documents overrides
        return self.provider.embed_documents(texts)

    def _lookup(self, hashes: list[str]) -> dict[str, FloatArray]:
        cached = self.backend.get_many(self.id, self.model, self.provider_key, hashes)
        width = self.provider.dims
        # A row of the wrong width (a corrupt or foreign entry) is treated as a miss.
        return {
            h: np.asarray(v, dtype=np.float32)
            for h, v in cached.items()
            if np.ndim(v) == 1 and (width is None or np.shape(v)[0] == width)
        }

    def _embed_and_store(self, missing: dict[str, str]) -> dict[str, FloatArray]:
        vectors = self.provider.embed_documents(list(missing.values()))
        fresh = dict(zip(missing, vectors, strict=True))
        if self.provider.costly:
            # An invalid vector is never cached: the text is asked for again next time.
            valid = {h: v for h, v in fresh.items() if not np.isnan(v).any()}
            self.backend.put_many(self.id, self.model, self.provider_key, valid)
        return fresh

    def _count(self, *, hits: int, misses: int) -> None:
        with self._counter_lock:
            self.hits += hits
            self.misses += misses

    def __repr__(self) -> str:
        return f"CachedProvider({self.provider!r}, hits={self.hits}, misses={self.misses})"
