"""Exact vector paths: sqlite-vec ``vec0`` KNN in the database, or a numpy matrix (the third,
compressed vectors re-scored exactly, is in ``binary_vectors``).

Both rank by exact cosine similarity over the same float32 vectors, so they return the same
hits (tested). The numpy path keeps a matrix loaded from the ``chunks.embedding`` BLOBs and
brings it up to date when the index generation changes, which makes it the fast path for a
long-running agent (about 4 ms at 100k x 512 here, versus about 75 ms for a vec0 scan); it is
what ``vector_backend="auto"`` answers with while the matrix fits ``store.max_matrix_mb``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["NumpyVectors", "Vec0Vectors", "VectorHits", "changed_rows", "placeholders", "rank"]

FloatArray = npt.NDArray[np.float32]
VectorHits = list[tuple[int, float]]


def placeholders(n: int) -> str:
    return ",".join("?" * n)


def changed_rows(conn: Any, where: str, sources: Sequence[str], known: npt.NDArray[np.int64],
                 ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """Which of the ``known`` rowids are still there (a mask) and which rowids are new:
    chunks are immutable rows with growing rowids, so an in-memory copy of their vectors is
    brought up to date by dropping the ones gone and reading only the new."""
    current = np.fromiter((r[0] for r in conn.execute(
        f"select rowid from chunks where {where} order by rowid", tuple(sources))), np.int64)
    return (np.isin(known, current, assume_unique=True),
            np.setdiff1d(current, known, assume_unique=True))


class Vec0Vectors:
    """KNN through a ``vec0`` virtual table keyed by ``chunks.rowid``."""

    name = "vec0"

    def __init__(self) -> None:
        self._dims: int | None = None

    def ensure_table(self, conn: Any, dims: int) -> None:
        """Create ``chunks_vec`` for ``dims`` (recreate on a dimension change)."""
        if self._dims == dims:
            return
        row = conn.execute(
            "select sql from sqlite_master where name = 'chunks_vec'").fetchone()
        if row is not None and f"float[{dims}]" not in row[0]:
            conn.execute("drop table chunks_vec")
            row = None
        if row is None:
            conn.execute(
                f"create virtual table chunks_vec using vec0("
                f"embedding float[{dims}] distance_metric=cosine, source text)")
        self._dims = dims

    def has_table(self, conn: Any) -> bool:
        return conn.execute(
            "select 1 from sqlite_master where name = 'chunks_vec'").fetchone() is not None

    def insert(self, conn: Any, rows: Sequence[tuple[int, str, bytes]]) -> None:
        # vec0 rejects INSERT OR REPLACE / ON CONFLICT: callers delete first (see delete()).
        conn.executemany(
            "insert into chunks_vec(rowid, source, embedding) values (?, ?, ?)", rows)

    def delete(self, conn: Any, rowids: Sequence[int]) -> None:
        if rowids and self.has_table(conn):
            conn.executemany("delete from chunks_vec where rowid = ?", [(r,) for r in rowids])

    def search(self, conn: Any, query: FloatArray, k: int, sources: Sequence[str]) -> VectorHits:
        if not self.has_table(conn):
            return []
        sql = (f"select rowid, distance from chunks_vec where embedding match ? and k = ? "
               f"and source in ({placeholders(len(sources))}) order by distance")
        rows = conn.execute(sql, (query.astype(np.float32).tobytes(), k, *sources)).fetchall()
        return [(int(r), 1.0 - float(d)) for r, d in rows]


#: Vectors read per batch when the matrix is loaded (2 MB at 512 dimensions).
_READ_BATCH = 1024


class NumpyVectors:
    """Brute-force cosine over an in-memory matrix of the stored float32 BLOBs.

    Loaded on first use into one preallocated array (never two copies at once), and brought up
    to date incrementally when the index changes: chunks are immutable rows with growing
    rowids, so only the rowids that appeared are read and those that vanished are dropped
    (a write to a 100k-chunk index re-reads a few rows, not 200 MB).
    """

    name = "numpy"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[int, tuple[str, ...]] | None = None
        self._rowids: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._matrix: FloatArray = np.zeros((0, 0), np.float32)

    def nbytes(self) -> int:
        """Bytes held by the loaded matrix (0 before the first search)."""
        return int(self._matrix.nbytes)

    def invalidate(self) -> None:
        """Forget what is loaded (the database was replaced wholesale)."""
        with self._lock:
            self._key = None
            self._rowids = np.zeros(0, np.int64)
            self._matrix = np.zeros((0, 0), np.float32)

    release = invalidate

    @staticmethod
    def _where(sources: Sequence[str]) -> str:
        return f"embedding is not null and source in ({placeholders(len(sources))})"

    def _read(self, conn: Any, sql: str, params: Sequence[Any], count: int,
              ) -> tuple[npt.NDArray[np.int64], FloatArray]:
        """Rows of (rowid, embedding) into preallocated arrays, a batch at a time: one
        ``frombuffer`` per batch of joined BLOBs, not one per row (a new process's first
        search read 100k vectors row by row), and never more than a batch held twice."""
        rowids = np.zeros(count, np.int64)
        matrix: FloatArray | None = None
        filled = 0
        cursor = conn.execute(sql, tuple(params))
        while batch := cursor.fetchmany(_READ_BATCH):
            if matrix is None:
                matrix = np.empty((count, len(batch[0][1]) // 4), np.float32)
            width = matrix.shape[1]
            end = filled + len(batch)
            joined = b"".join(blob for _, blob in batch)
            if end > count or len(joined) != 4 * width * len(batch) or any(
                    len(blob) != 4 * width for _, blob in batch):
                raise ValueError("the stored vectors changed shape while being read")
            rowids[filled:end] = [rowid for rowid, _ in batch]
            matrix[filled:end] = np.frombuffer(joined, np.float32).reshape(len(batch), width)
            filled = end
        if matrix is None:
            return np.zeros(0, np.int64), np.zeros((0, 0), np.float32)
        return rowids[:filled], matrix[:filled]

    def _load(self, conn: Any, sources: Sequence[str]) -> tuple[npt.NDArray[np.int64], FloatArray]:
        where = self._where(sources)
        count = int(conn.execute(f"select count(*) from chunks where {where}", tuple(sources)
                                 ).fetchone()[0])
        return self._read(conn, f"select rowid, embedding from chunks where {where} order by rowid",
                          sources, count)

    def _update(self, conn: Any, sources: Sequence[str]) -> None:
        where = self._where(sources)
        keep, new = changed_rows(conn, where, sources, self._rowids)
        rowids, matrix = self._rowids[keep], self._matrix[keep]
        for start in range(0, len(new), 500):
            part = new[start:start + 500].tolist()
            more_ids, more = self._read(
                conn, f"select rowid, embedding from chunks where rowid in ({placeholders(len(part))}) "
                      f"and {where}", [*part, *sources], len(part))
            if more.size and matrix.size and more.shape[1] != matrix.shape[1]:
                raise ValueError("dimension changed")
            rowids = np.concatenate([rowids, more_ids])
            matrix = np.concatenate([matrix, more]) if matrix.size else more
        order = np.argsort(rowids, kind="stable")
        self._rowids, self._matrix = rowids[order], np.ascontiguousarray(matrix[order])

    def matrix(self, conn: Any, generation: int, sources: Sequence[str]) -> tuple[
            npt.NDArray[np.int64], FloatArray]:
        key = (generation, tuple(sorted(sources)))
        with self._lock:
            if self._key != key:
                same_rows = self._key is not None and self._key[1] == key[1] and self._matrix.size
                try:
                    if same_rows:
                        self._update(conn, sources)
                    else:
                        self._rowids, self._matrix = self._load(conn, sources)
                except ValueError:  # another dimension (a new model): read everything again
                    self._rowids, self._matrix = self._load(conn, sources)
                self._key = key
            return self._rowids, self._matrix

    def loaded(self, generation: int) -> tuple[npt.NDArray[np.int64], FloatArray] | None:
        """The matrix read for ``generation`` (of whichever sources), or None: a caller
        comparing a few chunks reads them here instead of from the database."""
        with self._lock:
            if self._key is None or self._key[0] != generation or not self._matrix.size:
                return None
            return self._rowids, self._matrix

    def search(self, conn: Any, query: FloatArray, k: int, sources: Sequence[str],
               generation: int, among: Sequence[int] | None = None) -> VectorHits:
        """Top ``k`` by cosine, over every row or only the rowids ``among``."""
        rowids, matrix = self.matrix(conn, generation, sources)
        return rank(rowids, matrix, query, k, among)


def rank(rowids: npt.NDArray[np.int64], matrix: FloatArray, query: FloatArray, k: int,
         among: Sequence[int] | None = None) -> VectorHits:
    """Top ``k`` rows of a matrix snapshot by cosine (no connection, no lock: the matrix is
    replaced whole when the index changes, never written in place)."""
    if among is not None and matrix.shape[0]:
        wanted = np.asarray(sorted(among), dtype=np.int64)
        at = np.searchsorted(rowids, wanted)
        at = at[(at < len(rowids)) & (rowids[np.minimum(at, len(rowids) - 1)] == wanted)]
        rowids, matrix = rowids[at], matrix[at]
    if matrix.shape[0] == 0:
        return []
    if matrix.shape[1] != query.shape[0]:
        # Another process rebuilt the index with other vectors: say so (the search answers
        # keyword-only and notes why) rather than silently finding nothing.
        raise ValueError(f"the index holds {matrix.shape[1]}-dimensional vectors, the "
                         f"query has {query.shape[0]}")
    scores = matrix @ query.astype(np.float32)
    k = min(k, scores.shape[0])
    top = np.argpartition(-scores, k - 1)[:k]
    # Stable order: score descending, then rowid, the same tie-break vec0 effectively uses.
    order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), int(rowids[i])))
    return [(int(rowids[i]), float(scores[i])) for i in order]
