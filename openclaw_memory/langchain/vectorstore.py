"""``OpenClawMemoryVectorStore``: a LangChain VectorStore whose documents are Markdown files.

Every document is a file ``<folder>/<slug>-<digest>.md`` in the workspace (format in
``_docfile.py``), written through the workspace path gate and then indexed by the ordinary
sync. The SQLite index is only a cache of those files: delete it and reopening rebuilds the
same store. Queries are restricted to the store's folder, so the agent's own notes never show
up as VectorStore documents (while the agent's memory search does see the store's documents).

Ranking is pure vector similarity (cosine), not the engine's hybrid search: a VectorStore
promises "nearest by embedding" (``similarity_search_by_vector``, MMR and the standard tests
rely on it), and the hybrid threshold would hide weak neighbours that a caller asked for with
``k``. Without an embedding provider, ``similarity_search`` falls back to keyword search.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray, normalize_rows
from openclaw_memory.embeddings.langchain import LangChainEmbeddingsProvider
from openclaw_memory.errors import ConfigError, ContentError, PathRefusedError
from openclaw_memory.index import MemoryIndex
from openclaw_memory.langchain._docfile import (
    StoredDocument,
    decode_document,
    encode_document,
    file_name,
)
from openclaw_memory.memory_base import Memory
from openclaw_memory.scope.filters import Predicate, compile_filter

__all__ = ["DEFAULT_FOLDER", "OpenClawMemoryVectorStore"]

DEFAULT_FOLDER = "memory/vectorstore"
_SOURCES = ("memory",)
# vec0 refuses KNN queries above k = 4096; the numpy path has no limit but needs none higher.
_MAX_FETCH = 4096


@dataclass(frozen=True, slots=True)
class _Neighbour:
    """The best chunk of one document file for a query vector."""

    path: str
    score: float
    text: str


class OpenClawMemoryVectorStore(VectorStore):
    """A VectorStore persisted as one Markdown file per document in a memory workspace.

    Open it on a workspace with any LangChain ``Embeddings``::

        store = OpenClawMemoryVectorStore(workspace="~/agent", embedding=embeddings,
                                          index_path="/tmp/agent.sqlite")

    or on an already open :class:`MemoryIndex` (``OpenClawMemoryVectorStore(memory)``), which
    then embeds with its own provider. Other keyword arguments are :class:`MemorySettings`
    sections (``store={"vector_backend": "numpy"}``); a mapping given as ``embedding`` is the
    engine's embedding section (``embedding={"provider": "local"}``), and with no
    ``embedding`` at all the engine's default provider is used. ``folder`` (default
    ``memory/vectorstore``) must lie under ``memory/``.

    Metadata round-trips exactly (key order and types: str, int, float, bool, None, list,
    dict with str keys); anything else is refused with :class:`ContentError` rather than
    silently changed. Scores are cosine similarities; relevance scores clamp them to [0, 1].
    Safe to share across threads (async methods run the sync ones in an executor).
    """

    def __init__(self, index: Memory | None = None, *,
                 embedding: Embeddings | Mapping[str, Any] | None = None,
                 workspace: str | os.PathLike[str] | None = None,
                 index_path: str | os.PathLike[str] | None = None,
                 settings: MemorySettings | None = None, folder: str = DEFAULT_FOLDER,
                 embedding_model: str | None = None, **overrides: Any) -> None:
        if index is not None and (embedding is not None or workspace is not None or overrides):
            raise ConfigError("pass either an open MemoryIndex or embedding/workspace settings, "
                              "not both: an open index already has its embedder")
        if isinstance(embedding, Mapping):
            # ``embedding={"provider": "none"}`` is the engine's settings section, not a model.
            overrides["embedding"], embedding = dict(embedding), None
        self._embedding = embedding
        self._owns_index = index is None
        if index is None:
            if workspace is not None:
                # The store's folder is its storage (as a vector database's persist
                # directory): created on first use, private to the owner.
                Path(workspace).expanduser().mkdir(mode=0o700, parents=True, exist_ok=True)
            embedder = None if embedding is None else LangChainEmbeddingsProvider(
                embedding, model=embedding_model)
            index = MemoryIndex.open(workspace, index_path=index_path, settings=settings,
                                     embedder=embedder, **overrides)
        self.index = index
        self.space = index.documents()
        self.folder = self._checked_folder(folder)
        self._prefix = self.folder + "/"
        self._lock = threading.RLock()

    def _checked_folder(self, folder: str) -> str:
        cleaned = folder.strip().strip("/")
        try:
            self.space.check(f"{cleaned}/{file_name('probe')}", purpose="write")
        except PathRefusedError:
            if self._owns_index:
                self.index.close()
            raise ConfigError(
                f"VectorStore folder {folder!r} is not writable memory: use a folder under "
                "memory/, e.g. 'memory/vectorstore'") from None
        return cleaned

    @property
    def embeddings(self) -> Embeddings | None:
        return self._embedding

    def close(self) -> None:
        """Close the index if this store opened it."""
        if self._owns_index:
            self.index.close()

    # -- writing ---------------------------------------------------------------------------
    def add_texts(self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None,
                  *, ids: list[str] | None = None, **kwargs: Any) -> list[str]:
        """Write (or overwrite) one file per text and index them; returns the ids.

        Missing ids (``None``) get a uuid4. Re-adding an identical document changes nothing
        on disk. The inputs are never modified.
        """
        contents = list(texts)
        metas = list(metadatas) if metadatas is not None else [{} for _ in contents]
        given = list(ids) if ids is not None else [None] * len(contents)
        if not len(metas) == len(given) == len(contents):
            raise ValueError(f"got {len(contents)} texts, {len(metas)} metadatas and "
                             f"{len(given)} ids; the lengths must match")
        final_ids = [str(uuid.uuid4()) if i is None else i for i in given]
        # Encode everything first: one invalid document must not leave half a batch on disk.
        # A later duplicate id wins, as if the documents had been added one by one.
        payloads = {i: encode_document(i, m or {}, t) for i, m, t in zip(final_ids, metas,
                                                                           contents, strict=True)}
        with self._lock:
            written = False
            try:
                for doc_id, payload in payloads.items():
                    written = self._write(doc_id, payload) or written
            finally:
                if written:  # also after a failure: what reached the disk gets indexed
                    self.space.settle("written through the VectorStore")
        return final_ids

    def _write(self, doc_id: str, payload: bytes) -> bool:
        path = self._resolve(doc_id, purpose="write")
        existing = self.space.read(path)
        if existing == payload:
            return False  # idempotent: same bytes, no new mtime, no re-index
        if existing is not None:
            stored = decode_document(existing)
            if stored is not None and stored.id != doc_id:
                raise ContentError(f"file name collision between ids {doc_id!r} and {stored.id!r}")
        return self.space.write(path, payload)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Remove the documents' files, then their index rows. ``None`` removes every document.

        Unknown ids are ignored. A file in the folder that is not a document of this store
        (no valid front matter, or another id) is never removed.
        """
        with self._lock:
            targets = self._all_paths() if ids is None else [
                p for p in (self._own_file(i) for i in ids if _valid_id(i)) if p is not None]
            removed = [self.space.remove(p) for p in targets]
            if any(removed):
                self.space.settle("removed through the VectorStore")
        return True

    def _own_file(self, doc_id: str) -> str | None:
        path = self._resolve(doc_id, purpose="write")
        stored = self._load(path)
        return path if stored is not None and stored.id == doc_id else None

    def _all_paths(self) -> list[str]:
        return [p for p in self.space.paths(self.folder) if self._load(p) is not None]

    # -- reading ---------------------------------------------------------------------------
    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Documents read straight from their files, in the order of ``ids`` (missing skipped)."""
        out = []
        for doc_id in ids:
            if not _valid_id(doc_id):
                continue  # such an id can never have been stored
            stored = self._load(self._resolve(doc_id, purpose="read"))
            if stored is not None and stored.id == doc_id:
                out.append(_document(stored))
        return out

    def _resolve(self, doc_id: str, *, purpose: Literal["read", "write"]) -> str:
        return self.space.check(f"{self._prefix}{file_name(doc_id)}", purpose=purpose)

    def _load(self, path: str) -> StoredDocument | None:
        data = self.space.read(path)  # None also when the gate refuses it (a swapped symlink)
        return None if data is None else decode_document(data)

    def _load_path(self, path: str) -> StoredDocument | None:
        return self._load(path)

    # -- similarity search -------------------------------------------------------------------
    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_with_score(self, query: str, k: int = 4, **kwargs: Any,
                                     ) -> list[tuple[Document, float]]:
        """Documents and cosine similarity (higher is closer), best first.

        ``filter``: a metadata filter (``{"kind": "travel", "year": {"$gte": 2025}}``, the
        operators PGVector documents, see :mod:`openclaw_memory.scope.filters`).
        """
        keep = _options(kwargs)
        provider = self._provider()
        if provider is None:
            return self._keyword_search(query, k, keep)
        return self._by_vector(provider.embed_query(query), k, keep)

    def similarity_search_by_vector(self, embedding: Sequence[float] | FloatArray, k: int = 4,
                                    **kwargs: Any) -> list[Document]:
        pairs = self.similarity_search_with_score_by_vector(embedding, k, **kwargs)
        return [doc for doc, _ in pairs]

    def similarity_search_with_score_by_vector(self, embedding: Sequence[float] | FloatArray,
                                               k: int = 4, **kwargs: Any,
                                               ) -> list[tuple[Document, float]]:
        return self._by_vector(embedding, k, _options(kwargs))

    def _by_vector(self, embedding: Sequence[float] | FloatArray, k: int,
                   keep: Predicate | None) -> list[tuple[Document, float]]:
        found: dict[str, tuple[Document, float]] = {}
        for hit in self._neighbours(self._unit(embedding), k, self._matcher(keep)):
            stored = self._load_path(hit.path)
            # A file copied by hand repeats an id: the closer copy answers for it.
            if stored is not None and stored.id not in found:
                found[stored.id] = (_document(stored), hit.score)
        return list(found.values())

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return _cosine_relevance

    def max_marginal_relevance_search(self, query: str, k: int = 4, fetch_k: int = 20,
                                      lambda_mult: float = 0.5, **kwargs: Any) -> list[Document]:
        provider = self._require_provider()
        return self.max_marginal_relevance_search_by_vector(
            provider.embed_query(query), k, fetch_k, lambda_mult, **kwargs)

    def max_marginal_relevance_search_by_vector(self, embedding: Sequence[float] | FloatArray,
                                                k: int = 4, fetch_k: int = 20,
                                                lambda_mult: float = 0.5, **kwargs: Any,
                                                ) -> list[Document]:
        """Diverse results: MMR over the ``fetch_k`` nearest documents' best chunks
        (``filter=`` as in :meth:`similarity_search_with_score`)."""
        keep = _options(kwargs)
        query = self._unit(embedding)
        candidates = self._neighbours(query, max(k, fetch_k), self._matcher(keep))
        if not candidates:
            return []
        # Chunk vectors come from the embedding cache (they were embedded when indexed).
        vectors = self._require_provider().embed_for_search([c.text for c in candidates])
        picked = maximal_marginal_relevance(query, vectors.tolist(), lambda_mult, k)
        docs = (self._load_path(candidates[i].path) for i in picked)
        return [_document(stored) for stored in docs if stored is not None]

    # -- internals -------------------------------------------------------------------------
    def _provider(self) -> EmbeddingProvider | None:
        self._ensure_synced()
        return self.index.provider

    def _require_provider(self) -> EmbeddingProvider:
        provider = self._provider()
        if provider is None:
            raise ConfigError("this VectorStore has no embedding provider: pass embedding= "
                              "(any LangChain Embeddings) or configure one")
        return provider

    def _ensure_synced(self) -> None:
        # An index opened on existing files answers nothing until its first sync.
        if self.index.last_sync is None:
            with self._lock:
                if self.index.last_sync is None:
                    self.index.sync()

    def _unit(self, embedding: Sequence[float] | FloatArray) -> FloatArray:
        provider = self._require_provider()
        vector: FloatArray = normalize_rows(np.asarray(embedding, dtype=np.float32))[0]
        if provider.dims is not None and vector.shape[0] != provider.dims:
            raise ValueError(f"query vector has {vector.shape[0]} dimensions, the store's "
                             f"embeddings have {provider.dims}")
        return vector

    def _matcher(self, keep: Predicate | None) -> Callable[[str], bool] | None:
        """Path -> whether the document there passes the metadata filter."""
        if keep is None:
            return None

        def accepts(path: str) -> bool:
            stored = self._load_path(path)
            return stored is not None and keep(stored.metadata)
        return accepts

    def _neighbours(self, query: FloatArray, k: int,
                    accepts: Callable[[str], bool] | None = None) -> list[_Neighbour]:
        """The ``k`` nearest documents of this folder (that ``accepts``), one entry per file
        (its best chunk). A selective filter widens the fetch until ``k`` pass or the index
        runs out."""
        self._ensure_synced()
        store = self.index.search_backend()
        fetch = min(max(4 * k, 32), _MAX_FETCH)
        rejected: set[str] = set()
        while True:
            hits = store.vector_search(query, fetch, _SOURCES)
            rows = store.chunks([rowid for rowid, _ in hits])
            best: dict[str, _Neighbour] = {}
            for rowid, score in hits:  # best first: the first chunk seen per file wins
                row = rows.get(rowid)
                if (row is not None and row.path.startswith(self._prefix) and row.path not in best
                        and row.path not in rejected):
                    if accepts is not None and not accepts(row.path):
                        rejected.add(row.path)
                        continue
                    best[row.path] = _Neighbour(row.path, score, row.text)
            exhausted = len(hits) < fetch or fetch >= _MAX_FETCH
            if len(best) >= k or exhausted:
                return list(best.values())[:k]
            fetch = min(fetch * 4, _MAX_FETCH)

    def _keyword_search(self, query: str, k: int,
                        keep: Predicate | None = None) -> list[tuple[Document, float]]:
        response = self.index.search(query, max_results=min(200, 4 * k), min_score=0.0,
                                     path_filter=lambda p: p.startswith(self._prefix))
        found: dict[str, tuple[Document, float]] = {}
        for hit in response.results:
            stored = None if hit.path in found else self._load_path(hit.path)
            if stored is not None and (keep is None or keep(stored.metadata)):
                found[hit.path] = (_document(stored), hit.score)
        return list(found.values())[:k]

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_texts(cls, texts: list[str], embedding: Embeddings,
                   metadatas: list[dict[str, Any]] | None = None, *, ids: list[str] | None = None,
                   **kwargs: Any) -> Self:
        """Open a store (``workspace=``, ``index_path=``, settings...) and add the texts."""
        store = cls(embedding=embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store


def _valid_id(doc_id: object) -> bool:
    return isinstance(doc_id, str) and bool(doc_id)


def _options(kwargs: dict[str, Any]) -> Predicate | None:
    """The metadata filter of a search call; any other option is refused, never ignored."""
    unsupported = sorted(key for key, value in kwargs.items() if value is not None and key != "filter")
    if unsupported:
        raise TypeError(f"unsupported search options {unsupported}: this VectorStore takes "
                        "filter= (metadata) and nothing else")
    return compile_filter(kwargs.get("filter"))


def _document(stored: StoredDocument) -> Document:
    return Document(id=stored.id, page_content=stored.page_content, metadata=stored.metadata)


def _cosine_relevance(similarity: float) -> float:
    # Scores are cosine similarities already; LangChain wants relevance in [0, 1].
    return min(1.0, max(0.0, similarity))
