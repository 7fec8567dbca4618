"""The vector side of the index: the in-memory matrix while it fits the memory budget,
compressed vectors (bits, bytes, exact cosine for the best) past it, the vec0 table built
only where it answers, and cosine lookups. A mixin of :class:`~openclaw_memory.store.db.Store`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.store.binary_vectors import BinaryVectors, code_bytes
from openclaw_memory.store.connection import is_corruption
from openclaw_memory.store.parts import StorePart
from openclaw_memory.store.paths import prefix_range
from openclaw_memory.store.vectors import NumpyVectors, Vec0Vectors, VectorHits, placeholders, rank

__all__ = ["VectorQueries"]

FloatArray = npt.NDArray[np.float32]


class VectorQueries(StorePart):
    """Vector search of :class:`Store` (its connection and lock)."""

    vector_backend: str
    vector_path: str
    vector_reason: str
    max_matrix_bytes: int
    _vec0: Vec0Vectors
    _numpy: NumpyVectors
    _binary: BinaryVectors
    _auto_generation: int | None = None

    def cosines(self, query: FloatArray, rowids: Sequence[int]) -> dict[int, float]:
        """Cosine of the query with the stored vectors of the given chunks."""
        return {key: row[0] for key, row in self.cosines_many(query[None, :], rowids).items()}

    def cosines_many(self, queries: FloatArray, rowids: Sequence[int]) -> dict[int, list[float]]:
        """Cosines of each of ``queries`` (rows) with the stored vectors of the given chunks,
        the vectors read once."""
        if not rowids:
            return {}
        q = queries.astype(np.float32)
        out: dict[int, list[float]] = {}
        loaded = self._numpy.loaded(self.generation())
        if loaded is not None and loaded[1].shape[1] == q.shape[1]:
            # The vectors of the matrix searches use: reading a dated question's thousand
            # candidates' vectors from the database was its slowest part in a new process.
            held, matrix = loaded
            wanted = np.asarray(rowids, dtype=np.int64)
            at = np.minimum(np.searchsorted(held, wanted), max(len(held) - 1, 0))
            found = held[at] == wanted
            for rowid, scores in zip(wanted[found].tolist(), (matrix[at[found]] @ q.T).tolist(),
                                     strict=True):
                out[int(rowid)] = [float(x) for x in scores]
            rowids = wanted[~found].tolist()  # another source's, or without a vector
            if not rowids:
                return out
        rows = self.query(f"select rowid, embedding from chunks where embedding is not null "
                          f"and rowid in ({placeholders(len(rowids))})", rowids)
        for rowid, blob in rows:
            v = np.frombuffer(blob, np.float32)
            if v.shape[0] == q.shape[1]:
                out[int(rowid)] = [float(x) for x in q @ v]
        return out

    # -- the vec0 table: kept only where it answers ------------------------------------------
    def _vec0_live(self, conn: Any, dims: int) -> bool:
        """Whether writes must keep ``chunks_vec`` up to date: exactly when it exists.

        The table exists only once :meth:`settle_vector_index` built it complete, so "it
        exists" means "it holds every vector", for writers of any version.
        """
        if not self.driver.vec_loadable or not self._vec0.has_table(conn):
            return False
        self._vec0.ensure_table(conn, dims)
        return True

    def _wants_vec0(self) -> tuple[bool, int]:
        vectors, dims = self._vector_shape()
        if self.vector_backend == "vec0":
            return True, dims
        # auto: past the float matrix's budget the compressed vectors answer; vec0 only past theirs.
        over = code_bytes(vectors, dims) > self.max_matrix_bytes
        return self.vector_backend == "auto" and over, dims

    def settle_vector_index(self) -> str | None:
        """Build the vec0 table when this index answers from it, drop it when it does not.

        A vector stored three times cost 12 KB per chunk: ``auto`` answers from the in-memory
        matrix (read from ``chunks.embedding``) while it fits ``store.max_matrix_mb``, then from
        compressed vectors (``binary``), so vec0 is only built, from the stored vectors, once
        even the codes outgrow that budget or when ``vector_backend="vec0"`` asks for it.
        Called at the end of a sync; returns what it did ("built"/"dropped") or None.
        """
        if not self.driver.vec_loadable:
            return None
        want, dims = self._wants_vec0()
        with self._lock:
            has = self._vec0.has_table(self._conn)
            if want and not has and dims:
                with self.write() as conn:
                    self._vec0.ensure_table(conn, dims)
                    conn.execute(
                        "insert into chunks_vec(rowid, source, embedding) select rowid, source, "
                        "embedding from chunks where embedding is not null and "
                        "length(embedding) = ?", (dims * 4,))
                self._auto_generation = None
                return "built"
            if not want and has and self.vector_backend == "auto":
                with self.write() as conn:
                    conn.execute("drop table chunks_vec")
                self._vec0 = Vec0Vectors()
                self._auto_generation = None
                return "dropped"
        return None

    def _auto_path(self) -> tuple[str, str]:
        """Which path ``auto`` answers with now, and why (shown by ``status``)."""
        vectors, dims = self._vector_shape()
        size = vectors * dims * 4
        budget = f"store.max_matrix_mb {self.max_matrix_bytes // 1048576}"
        if size <= self.max_matrix_bytes:
            if not self.driver.vec_loadable:
                return "numpy", f"in-memory matrix ({self.driver.reason})"
            return "numpy", (f"auto: in-memory matrix of {vectors} vectors ({size / 1e6:.0f} MB, "
                             f"{budget}); no vec0 table needed ({self.driver.reason})")
        codes = code_bytes(vectors, dims)
        if codes <= self.max_matrix_bytes:
            return "binary", (f"auto: {vectors} vectors ({size / 1e6:.0f} MB) exceed {budget}: "
                              f"compressed vectors in memory ({codes / 1e6:.0f} MB: bits, then "
                              f"bytes, then exact cosine for the best {self._binary.exact})")
        if not self.driver.vec_loadable:  # nothing smaller to answer from
            return "binary", (f"auto: {vectors} vectors exceed {budget} even compressed "
                              f"({codes / 1e6:.0f} MB), and vec0 is unavailable "
                              f"({self.driver.reason}): compressed vectors anyway")
        if not self._vec0.has_table(self._conn):
            return "numpy", (f"auto: {vectors} vectors ({size / 1e6:.0f} MB) exceed {budget} but "
                             "the vec0 table is not built yet (the next sync builds it): "
                             "in-memory matrix meanwhile")
        return "vec0", (f"auto: {vectors} vectors ({size / 1e6:.0f} MB) exceed {budget}: "
                        f"vec0 scan ({self.driver.reason})")

    def vector_memory_bytes(self) -> int:
        """What the vector path answering now holds in memory, at most."""
        # auto: the path as of now (vector_path is refreshed by the next vector search).
        path = self._auto_path()[0] if self.vector_backend == "auto" else self.vector_path
        if path not in ("numpy", "binary"):
            return 0
        vectors, dims = self._vector_shape()
        return vectors * dims * 4 if path == "numpy" else code_bytes(vectors, dims)

    def _vector_shape(self) -> tuple[int, int]:
        """(chunks, dimensions): an upper bound of the matrix, without reading every row."""
        try:
            count = self._conn.execute("select count(*) from chunks").fetchone()[0]
            one = self._conn.execute("select length(embedding) from chunks "
                                     "where embedding is not null limit 1").fetchone()
        except self.driver.errors:
            return 0, 0
        return int(count or 0), int(one[0]) // 4 if one else 0

    def vector_search(self, query: FloatArray, k: int, sources: Sequence[str], *,
                      path_prefix: str | None = None) -> VectorHits:
        """The ``k`` nearest chunks; ``path_prefix`` restricts them to files under it before
        the top ``k`` are taken (exactly on the matrix and the codes; vec0, which cannot
        filter by path, is asked for more and filtered, so there it is best effort).

        On the in-memory matrix only the snapshot is taken under the store's lock; the
        product runs outside it, so other threads' queries are not held up by it. (Running
        the product beside the same search's keyword side was measured: no gain on two
        cores, where the product already uses both.)
        """
        with self._lock:
            try:
                if self.vector_backend == "auto":
                    self._refresh_auto_path()
                path = self.vector_path
                if path == "vec0" and not self._vec0.has_table(self._conn):
                    path = "numpy"  # vec0 asked for, not built yet (the next sync builds it)
                inside: list[int] | None = None
                if path_prefix is not None:
                    low, high = prefix_range(path_prefix)
                    inside = [int(r[0]) for r in self._conn.execute(
                        "select rowid from chunks where path >= ? and path < ?", (low, high))]
                if path == "vec0":
                    if inside is None:
                        return self._vec0.search(self._conn, query, k, sources)
                    wanted = set(inside)
                    hits = self._vec0.search(self._conn, query, min(4096, k * 20), sources)
                    return [hit for hit in hits if hit[0] in wanted][:k]
                if path == "binary":
                    return self._binary.search(self._conn, query, k, sources, self.generation(),
                                               among=inside)
                rowids, matrix = self._numpy.matrix(self._conn, self.generation(), sources)
            except self.driver.errors as exc:  # e.g. vectors of another dimension
                if is_corruption(exc):
                    raise IndexCorruptError(f"the index file is damaged: {exc}") from exc
                raise StoreError(f"vector search failed: {exc}") from exc
            except ValueError as exc:  # numpy: a matrix of another dimension
                raise StoreError(f"vector search failed: {exc}") from exc
        try:
            return rank(rowids, matrix, query, k, inside)
        except ValueError as exc:
            raise StoreError(f"vector search failed: {exc}") from exc

    def _refresh_auto_path(self) -> None:
        generation = self.generation()
        if self._auto_generation != generation:
            self.vector_path, self.vector_reason = self._auto_path()
            self._auto_generation = generation
            if self.vector_path != "numpy":
                self._numpy.release()  # over the budget: do not keep a matrix around
            if self.vector_path != "binary":
                self._binary.release()
