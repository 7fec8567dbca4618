"""The index database: one facade over chunks, FTS rows, vectors, cache and metadata.

Writers take ``BEGIN IMMEDIATE`` so two processes (a watcher and an agent) serialise on the
write lock instead of failing mid-transaction; readers never block in WAL mode. Every change
bumps ``meta.generation`` so caches (the numpy matrix) in any process notice it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.language.dates import DateWindow
from openclaw_memory.language.textsearch import fts_body
from openclaw_memory.sessions.delta import SessionState
from openclaw_memory.store.binary_vectors import BinaryVectors
from openclaw_memory.store.cache_rows import Identity, claim, copy_attached, identity_of, lookup, retire
from openclaw_memory.store.connection import (
    PAGE_SIZE,
    DriverInfo,
    connect,
    is_corruption,
    probe_driver,
    read_only_index,
)
from openclaw_memory.store.daily_names import DailyNames
from openclaw_memory.store.fts_table import delete_rows as delete_fts_rows
from openclaw_memory.store.keyword_side import KeywordQueries, QueryTimeoutError
from openclaw_memory.store.postings_keeper import MIN_CHUNKS, PostingsKeeper
from openclaw_memory.store.postings_read import QueryTokens
from openclaw_memory.store.rows import ChunkRow, FileRow, chunk_id, next_rowid
from openclaw_memory.store.schema import FINGERPRINT_KEY, migrate
from openclaw_memory.store.term_lookup import CandidateTerms
from openclaw_memory.store.vector_side import VectorQueries
from openclaw_memory.store.vectors import NumpyVectors, Vec0Vectors, placeholders
from openclaw_memory.types import Chunk, MemoryFile

__all__ = ["QueryTimeoutError", "StaleReadError", "Store"]

FloatArray = npt.NDArray[np.float32]


def _private_file(path: Path) -> None:
    """Create the index file (and its missing folders) readable by the owner only.

    The index holds every note's text. SQLite creates its -wal and -shm files with the mode of
    the database file, so they follow; an existing file keeps the mode it has.
    """
    missing = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))



class StaleReadError(StoreError):
    """A write was abandoned because its file changed after it was read (see ``guard``)."""


class Store(KeywordQueries, VectorQueries):
    """An open index file. Thread-safe: one connection guarded by a re-entrant lock."""

    def __init__(self, path: Path, *, vector_backend: str = "auto", fts_tokenizer: str = "unicode61",
                 busy_timeout_ms: int = 10_000, max_matrix_mb: int = 1024,
                 page_size: int = PAGE_SIZE, keyword_backend: str = "auto",
                 postings_min_chunks: int = MIN_CHUNKS) -> None:
        self.path = path
        self.fts_tokenizer = fts_tokenizer
        self.driver: DriverInfo = probe_driver(vector_backend not in ("numpy", "binary"))
        self.vector_backend = vector_backend
        self.max_matrix_bytes = max_matrix_mb * 1024 * 1024
        # The vec0 table exists only where it answers (settle_vector_index).
        self.vector_path = "vec0" if self.driver.vec_loadable else "numpy"
        if vector_backend == "vec0" and not self.driver.vec_loadable:
            self.vector_reason = f"vec0 requested but unavailable: {self.driver.reason}"
        elif vector_backend in ("numpy", "binary"):
            self.vector_path = vector_backend
            self.vector_reason = f"{vector_backend} path selected by configuration"
        else:
            self.vector_reason = self.driver.reason
        self._lock = threading.RLock()
        self._term_cache = {}
        self._vec0 = Vec0Vectors()
        self._numpy = NumpyVectors()
        self._binary = BinaryVectors()
        self._daily = DailyNames()
        self._terms = CandidateTerms()
        self._query_tokens = QueryTokens()
        self._postings = PostingsKeeper(path, self.driver, enabled=keyword_backend == "auto",
                                        min_chunks=postings_min_chunks)
        #: An index this process may only read (a shared, read-only deployment): searched as
        #: it is; a sync's write fails with a StoreError that says so.
        self.read_only = read_only_index(path)
        try:
            if not self.read_only:
                _private_file(path)
        except OSError as exc:
            raise StoreError(f"cannot create the index at {path}: {exc.strerror or exc}; "
                             "choose a writable location with --index or store.path") from None
        try:
            self._conn = connect(path, self.driver, busy_timeout_ms=busy_timeout_ms,
                                 load_vec=self.driver.vec_loadable, page_size=page_size,
                                 read_only=self.read_only)
        except self.driver.errors as exc:
            raise StoreError(f"cannot open the index at {path}: {exc}") from exc
        try:
            migrate(self._conn, fts_tokenizer=fts_tokenizer)
        except IndexCorruptError:
            self._conn.close()
            raise
        except self.driver.module.OperationalError as exc:  # e.g. locked: not corruption
            self._conn.close()
            raise StoreError(f"cannot prepare index {path}: {exc}") from exc
        except self.driver.errors as exc:
            self._conn.close()
            raise IndexCorruptError(f"the index file is not a usable database: {exc}") from exc
        if vector_backend == "auto":
            self.vector_path, self.vector_reason = self._auto_path()

    # -- plumbing -------------------------------------------------------------------------
    def close(self) -> None:
        self._postings.close()
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def write(self, *, bump: bool = True) -> Iterator[Any]:
        """One write transaction; bumps the generation so every reader's cache refreshes
        (``bump=False``: a write no reader caches, as the embedding cache's rows)."""
        with self._lock:
            conn = self._conn
            try:
                conn.execute("begin immediate")
            except self.driver.errors as exc:
                raise StoreError(f"index is locked or read-only: {exc}") from exc
            try:
                yield conn
                if bump:
                    conn.execute(
                        "insert into meta(key, value) values('generation', '1') on conflict(key) "
                        "do update set value = cast(value as integer) + 1")
                conn.execute("commit")
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    conn.execute("rollback")
                if is_corruption(exc):
                    raise IndexCorruptError(f"the index file is damaged: {exc}") from exc
                raise

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return list(self._conn.execute(sql, tuple(params)).fetchall())
            except self.driver.errors as exc:
                if is_corruption(exc):
                    raise IndexCorruptError(f"the index file is damaged: {exc}") from exc
                raise StoreError(f"index query failed: {exc}") from exc

    # -- meta -----------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        rows = self.query("select value from meta where key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, values: Mapping[str, str], *, bump: bool = True) -> None:
        """Write meta values; ``bump=False`` for a value no reader caches (when the last sync
        ran), so that a sync that changed nothing leaves every reader's cache standing."""
        with self.write(bump=bump) as conn:
            conn.executemany(
                "insert into meta(key, value) values(?, ?) on conflict(key) "
                "do update set value = excluded.value", list(values.items()))

    def generation(self) -> int:
        value = self.meta("generation")
        return int(value) if value else 0

    # -- files and chunks -----------------------------------------------------------------
    def files(self, source: str | None = None) -> dict[str, FileRow]:
        sql = "select path, source, hash, mtime_ns, size, chunks, indexed_at from files"
        rows = self.query(sql + " where source = ?", (source,)) if source else self.query(sql)
        return {r[0]: FileRow(*r) for r in rows}

    def replace_file(self, file: MemoryFile, file_hash: str, chunks: Sequence[Chunk],
                     vectors: FloatArray | None, model: str,
                     session: SessionState | None = None,
                     read_at: float | None = None,
                     guard: Callable[[], bool] | None = None) -> tuple[int, int]:
        """Swap one file's rows in a single transaction; returns (removed, added) chunks.

        ``guard`` runs once the write lock is held; when it returns False nothing is written
        and :class:`StaleReadError` is raised. Sync passes "the file has not moved since it
        was read": another process may have indexed newer bytes while this one waited for
        the lock, and an older read must not replace them.

        ``read_at`` is when the file's bytes were read (default: now); sync uses it to spot
        stats recorded too close to a write to be trusted.

        ``session`` (transcripts only) is recorded in the same transaction, so the delta
        baseline always describes the rows that are in the index.
        """
        with self.write() as conn:
            return self.replace_file_rows(conn, file, file_hash, chunks, vectors, model,
                                          session, read_at, guard)

    def replace_file_rows(self, conn: Any, file: MemoryFile, file_hash: str,
                          chunks: Sequence[Chunk], vectors: FloatArray | None, model: str,
                          session: SessionState | None = None, read_at: float | None = None,
                          guard: Callable[[], bool] | None = None) -> tuple[int, int]:
        """:meth:`replace_file` inside a transaction the caller holds (see :meth:`apply`)."""
        if guard is not None and not guard():
            raise StaleReadError(f"{file.path} changed after it was read")
        if session is not None:
            _record_session(conn, session)
        now = time.time()
        dims = None if vectors is None or vectors.size == 0 else int(vectors.shape[1])
        vec0_live = dims is not None and self._vec0_live(conn, dims)
        # One float32 conversion per file, and one vec0 statement per file, not per chunk.
        matrix = None if dims is None or vectors is None else vectors.astype(
            np.float32, copy=False)
        # An invalid (NaN) row stores no vector: the chunk is keyword-only until backfill.
        blobs = [None if matrix is None or np.isnan(matrix[i]).any() else matrix[i].tobytes()
                 for i in range(len(chunks))]
        stored = {c.hash for c, blob in zip(chunks, blobs, strict=True) if blob is not None}
        identity = self._identity(conn)
        rowid = next_rowid(conn)  # read before the delete: a deleted rowid is never reused
        removed = self._delete_path(conn, file.path, identity, keep=stored)
        vec_rows: list[tuple[int, str, bytes]] = []
        for chunk, blob in zip(chunks, blobs, strict=True):
            cid = chunk_id(chunk, model)
            rowid += 1
            conn.execute(
                "insert into chunks(rowid, id, path, source, start_line, end_line, hash, model, "
                "text, embedding, updated_at) values (?,?,?,?,?,?,?,?,?,?,?)",
                (rowid, cid, chunk.path, chunk.source, chunk.start_line, chunk.end_line,
                 chunk.hash, model, chunk.text, blob, now))
            conn.execute("insert into chunks_fts(rowid, body) values (?, ?)",
                         (rowid, fts_body(chunk.text)))
            if blob is not None and vec0_live:
                vec_rows.append((rowid, chunk.source, blob))
        if vec_rows:
            self._vec0.insert(conn, vec_rows)
        conn.execute("insert into meta(key, value) values('rowid_high', ?) on conflict(key) "
                     "do update set value = excluded.value", (str(rowid),))
        claim(conn, identity, stored)
        conn.execute(
            "insert into files(path, source, hash, mtime_ns, size, chunks, indexed_at) "
            "values (?,?,?,?,?,?,?) on conflict(path) do update set source=excluded.source, "
            "hash=excluded.hash, mtime_ns=excluded.mtime_ns, size=excluded.size, "
            "chunks=excluded.chunks, indexed_at=excluded.indexed_at",
            (file.path, file.source, file_hash, file.mtime_ns, file.size, len(chunks),
             now if read_at is None else read_at))
        return removed, len(chunks)

    def apply(self, writes: Sequence[Callable[[Any], Any]]) -> list[Any]:
        """Run several files' writes in one transaction, each inside its own savepoint.

        Returns each write's result, or the :class:`StaleReadError` it raised (that write
        alone is rolled back; the others commit). Any other error rolls everything back.
        One commit for many files is what makes a bulk index fast: a commit per file was
        half the time of indexing with a fast embedder (FTS5 flushes its segments at
        every commit).
        """
        out: list[Any] = []
        with self.write() as conn:
            for write in writes:
                conn.execute("savepoint one_file")
                try:
                    out.append(write(conn))
                except StaleReadError as exc:
                    conn.execute("rollback to one_file")
                    out.append(exc)
                conn.execute("release one_file")
        return out

    def chunks_without_vectors(self, limit: int) -> list[tuple[int, str]]:
        """(rowid, text) of chunks whose vectors are missing (a provider outage), oldest first."""
        rows = self.query("select rowid, text from chunks where embedding is null "
                          "order by rowid limit ?", (limit,))
        return [(int(r), str(t)) for r, t in rows]

    def missing_vectors(self) -> int:
        return int(self.query("select count(*) from chunks where embedding is null")[0][0])

    def set_vectors(self, rowids: Sequence[int], vectors: FloatArray) -> int:
        """Store backfilled vectors for chunks that still lack them; returns how many."""
        matrix = vectors.astype(np.float32, copy=False)
        with self.write() as conn:
            vec0_live = bool(matrix.size) and self._vec0_live(conn, int(matrix.shape[1]))
            done = 0
            hashes: set[str] = set()
            vec_rows: list[tuple[int, str, bytes]] = []
            for rowid, row in zip(rowids, matrix, strict=True):
                blob = row.tobytes()
                cur = conn.execute("update chunks set embedding = ? where rowid = ? "
                                   "and embedding is null returning source, hash", (blob, rowid))
                found = cur.fetchone()
                if found is not None:
                    done += 1
                    vec_rows.append((int(rowid), str(found[0]), blob))
                    hashes.add(str(found[1]))
            if vec_rows and vec0_live:
                self._vec0.insert(conn, vec_rows)
            claim(conn, self._identity(conn), hashes)
        return done

    def touch_file(self, file: MemoryFile, session: SessionState | None = None,
                   read_at: float | None = None) -> None:
        """Record a new mtime/size for a file whose content hash did not change."""
        with self.write() as conn:
            self.touch_file_rows(conn, file, session, read_at)

    @staticmethod
    def touch_file_rows(conn: Any, file: MemoryFile, session: SessionState | None = None,
                        read_at: float | None = None) -> None:
        """:meth:`touch_file` inside a transaction the caller holds."""
        if session is not None:
            _record_session(conn, session)
        conn.execute("update files set mtime_ns = ?, size = ?, indexed_at = ? where path = ?",
                     (file.mtime_ns, file.size, time.time() if read_at is None else read_at,
                      file.path))

    def delete_files(self, paths: Sequence[str]) -> int:
        removed = 0
        for path in paths:  # one transaction per file, like indexing
            with self.write() as conn:
                removed += self._delete_path(conn, path, self._identity(conn))
                conn.execute("delete from files where path = ?", (path,))
                conn.execute("delete from session_state where path = ?", (path,))
        return removed

    def _delete_path(self, conn: Any, path: str, identity: Identity | None,
                     keep: Collection[str] = ()) -> int:
        rows = conn.execute("select rowid, text from chunks where path = ?", (path,)).fetchall()
        rowids = [r[0] for r in rows]
        if rowids:
            retire(conn, identity, path, keep)
            delete_fts_rows(conn, rows)
            if self.driver.vec_loadable and self._vec0.has_table(conn):
                self._vec0.delete(conn, rowids)
            conn.execute("delete from chunks where path = ?", (path,))
        return len(rowids)

    def session_states(self) -> dict[str, SessionState]:
        """What each indexed transcript looked like when indexed (the delta baselines)."""
        rows = self.query("select path, indexed_bytes, indexed_lines, malformed, anchor "
                          "from session_state")
        return {r[0]: SessionState(*r) for r in rows}

    def chunks(self, rowids: Sequence[int]) -> dict[int, ChunkRow]:
        if not rowids:
            return {}
        rows = self.query(
            f"select rowid, id, path, source, start_line, end_line, text from chunks "
            f"where rowid in ({placeholders(len(rowids))})", rowids)
        return {r[0]: ChunkRow(*r) for r in rows}

    def daily_paths(self, windows: Sequence[DateWindow],
                    path_prefix: str | None = None) -> list[str]:
        """Indexed Markdown notes named as a date in ``windows`` (``.../YYYY-MM-DD.md``),
        under a folder; found by name in a sorted list read once per index generation."""
        def read() -> list[tuple[str, str]]:
            return self.query("select substr(path, -13), path from files where source = "
                              "'memory' and path like '%-__-__.md' order by 1, 2")
        with self._lock:
            return self._daily.paths(self.generation(), read, windows, path_prefix)

    def chunk_keys(self, paths: Sequence[str], limit: int | None = None) -> list[int]:
        """The chunks of these files (at most ``limit``: a caller that only wants to know
        whether there are more stops reading there)."""
        keys: list[int] = []
        for start in range(0, len(paths), 500):  # under SQLite's bound-parameter limit
            batch = list(paths[start:start + 500])
            keys += [int(r[0]) for r in self.query(
                f"select rowid from chunks where path in ({placeholders(len(batch))})", batch)]
            if limit is not None and len(keys) >= limit:
                return keys[:limit]
        return keys

    def counts(self) -> dict[str, int]:
        files = self.query("select count(*) from files")[0][0]
        chunks = self.query("select count(*) from chunks")[0][0]
        vectors = self.query("select count(*) from chunks where embedding is not null")[0][0]
        cache = self.query("select count(*) from embedding_cache")[0][0]
        return {"files": files, "chunks": chunks, "vectors": vectors, "cache_entries": cache}

    # -- search ---------------------------------------------------------------------------
    # -- embedding cache (the CacheBackend protocol of embeddings.cache) -----------------
    def _identity(self, conn: Any) -> Identity | None:
        """Whose vectors ``chunks`` holds: the provider the index fingerprint records."""
        row = conn.execute("select value from meta where key = ?", (FINGERPRINT_KEY,)).fetchone()
        return identity_of(row[0] if row else None)

    def get_many(self, provider_id: str, model: str, provider_key: str,
                 hashes: Sequence[str]) -> dict[str, FloatArray]:
        with self._lock:
            try:
                found = lookup(self._conn, (provider_id, model, provider_key),
                                          self._identity(self._conn), hashes)
            except self.driver.errors as exc:
                if is_corruption(exc):
                    raise IndexCorruptError(f"the index file is damaged: {exc}") from exc
                raise StoreError(f"index query failed: {exc}") from exc
        return {h: np.frombuffer(b, np.float32).copy() for h, b in found.items()}

    def put_many(self, provider_id: str, model: str, provider_key: str,
                 items: Mapping[str, FloatArray]) -> None:
        if not items:
            return
        now = time.time()
        # No generation bump: no search result and no reader's cache (postings, terms,
        # vectors) depends on these rows, and a bump would void them all.
        with self.write(bump=False) as conn:
            conn.executemany(
                "insert into embedding_cache(provider, model, provider_key, hash, embedding, "
                "dims, updated_at) values (?,?,?,?,?,?,?) on conflict do update set "
                "embedding = excluded.embedding, dims = excluded.dims, "
                "updated_at = excluded.updated_at",
                [(provider_id, model, provider_key, h, v.astype(np.float32).tobytes(),
                  int(v.shape[0]), now) for h, v in items.items()])

    def copy_cache_from(self, other: Path) -> int:
        """Seed this (new) index's cache from another index file, for a safe rebuild."""
        with self._lock:
            # ATTACH is refused inside a transaction, so it brackets the write.
            self._conn.execute("attach database ? as old", (str(other),))
            try:
                with self.write() as conn:
                    return copy_attached(conn)
            finally:
                self._conn.execute("detach database old")

    def page_size(self) -> int:
        """The page size of this index file (a rebuild's new file must use the same)."""
        return int(self.query("pragma page_size")[0][0])

    def replace_with(self, other: Store) -> None:
        """Overwrite this index with ``other`` in one step (SQLite online backup).

        The backup runs as a single write transaction on this database: other connections,
        in this or another process, see either the old index or the new one, and a process
        killed halfway leaves the old index intact.
        """
        with self._lock, other._lock:
            try:
                other._conn.backup(self._conn)
            except self.driver.errors as exc:
                raise StoreError(f"cannot swap the rebuilt index into {self.path}: {exc}; "
                                 "the old index is unchanged") from exc
            self._numpy.invalidate()
            self._binary.invalidate()
            self._daily.forget()
            self._vec0 = Vec0Vectors()
            self._terms.forget()
            self._query_tokens.forget()
            self._postings.forget()
            self._auto_generation = None
            self._keyword_index_checked = False

    def refresh(self) -> None:
        """Drop cached vector state: another connection replaced the database wholesale
        (a rebuild's backup may leave the generation counter at a value seen before)."""
        with self._lock:
            self._numpy.invalidate()
            self._binary.invalidate()
            self._daily.forget()
            self._vec0 = Vec0Vectors()
            self._terms.forget()
            self._query_tokens.forget()
            self._postings.forget()
            self._auto_generation = None
            self._keyword_index_checked = False

    def prune_cache(self, max_entries: int) -> int:
        """Drop the oldest cache rows past ``max_entries``; no write when under it."""
        if int(self.query("select count(*) from embedding_cache")[0][0]) <= max_entries:
            return 0
        with self.write() as conn:
            cur = conn.execute(
                "delete from embedding_cache where rowid in (select rowid from embedding_cache "
                "order by updated_at desc limit -1 offset ?)", (max_entries,))
            return int(cur.rowcount)


def _record_session(conn: Any, state: SessionState) -> None:
    conn.execute(
        "insert into session_state(path, indexed_bytes, indexed_lines, malformed, anchor, "
        "indexed_at) values (?,?,?,?,?,?) on conflict(path) do update set "
        "indexed_bytes=excluded.indexed_bytes, indexed_lines=excluded.indexed_lines, "
        "malformed=excluded.malformed, anchor=excluded.anchor, indexed_at=excluded.indexed_at",
        (state.path, state.indexed_bytes, state.indexed_lines, state.malformed, state.anchor,
         time.time()))
