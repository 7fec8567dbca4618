"""Binary codes of the stored vectors, for an index whose float32 matrix exceeds the memory
budget (``store.max_matrix_mb``): a million 512-dimension vectors are 2 GB as floats and 64 MB
as codes.

Each vector becomes one bit per dimension: whether it lies above that dimension's mean (the
mean of a sample of the stored vectors, so the bits split the data, not the origin). A search
ranks every code by its Hamming distance to the query's, takes the closest ``pool``
candidates and scores those exactly, by cosine with their stored float32 vectors read back
from the index; the top ``k`` of those exact scores are the answer. The scores are therefore
exact, and the ranking is exact whenever the true top ``k`` lie within the pool
(``benchmarks/scale.py`` measures how often, against exact search).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from openclaw_memory.store.vectors import VectorHits, placeholders

FloatArray = npt.NDArray[np.float32]

__all__ = ["DEFAULT_POOL", "BinaryVectors", "code_bytes"]

# Candidates scored exactly per search. 1 024 rows read back by rowid cost a few ms; at a
# million chunks of real notes the true top 6 were within this pool for >= 99 % of questions.
DEFAULT_POOL = 1024
_SAMPLE = 20_000  # vectors read to estimate each dimension's mean
_BLOCK = 65_536  # rows of codes compared at once (keeps temporaries in cache)
_READ = 4_096  # vectors decoded and coded at once while loading

CodeArray = npt.NDArray[np.uint64]
_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def code_bytes(vectors: int, dims: int) -> int:
    """Memory of the codes and rowids of ``vectors`` vectors of ``dims`` dimensions."""
    return vectors * (((dims + 63) // 64) * 8 + 8)


def _popcount_rows(words: CodeArray) -> npt.NDArray[np.uint16]:
    """Set bits per row of a (rows, words) uint64 array."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        counts: npt.NDArray[np.uint16] = np.bitwise_count(words).sum(axis=1, dtype=np.uint16)
        return counts
    as_bytes = words.view(np.uint8).reshape(words.shape[0], -1)
    table: npt.NDArray[np.uint16] = _POPCOUNT8[as_bytes].sum(axis=1, dtype=np.uint16)
    return table


class BinaryVectors:
    """Hamming pre-selection over in-memory codes, exact cosine re-scoring of a pool."""

    name = "binary"

    def __init__(self, pool: int = DEFAULT_POOL) -> None:
        self.pool = pool
        self._lock = threading.Lock()
        self._key: tuple[int, tuple[str, ...]] | None = None
        self._rowids: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._codes: CodeArray = np.zeros((0, 0), np.uint64)
        self._center: FloatArray = np.zeros(0, np.float32)

    def nbytes(self) -> int:
        return int(self._codes.nbytes + self._rowids.nbytes)

    def invalidate(self) -> None:
        with self._lock:
            self._key = None
            self._rowids = np.zeros(0, np.int64)
            self._codes = np.zeros((0, 0), np.uint64)
            self._center = np.zeros(0, np.float32)

    release = invalidate

    # -- codes ---------------------------------------------------------------------------
    def _code(self, matrix: FloatArray) -> CodeArray:
        bits = np.packbits(matrix > self._center, axis=1, bitorder="little")
        pad = (-bits.shape[1]) % 8
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        return np.ascontiguousarray(bits).view(np.uint64)

    def _estimate_center(self, conn: Any, where: str, sources: Sequence[str], count: int) -> None:
        step = max(1, count // _SAMPLE)
        rows = conn.execute(f"select embedding from chunks where {where} and rowid % ? = 0 "
                            f"limit ?", (*sources, step, _SAMPLE)).fetchall()
        if not rows:  # rowids that all miss the stride: take the first ones instead
            rows = conn.execute(f"select embedding from chunks where {where} limit ?",
                                (*sources, _SAMPLE)).fetchall()
        sample = np.stack([np.frombuffer(r[0], np.float32) for r in rows]) if rows else None
        self._center = (sample.mean(axis=0).astype(np.float32) if sample is not None
                        else np.zeros(0, np.float32))

    def _read(self, conn: Any, sql: str, params: Sequence[Any]) -> tuple[npt.NDArray[np.int64], CodeArray]:
        """Rows of (rowid, embedding) coded a batch at a time (never a float matrix whole)."""
        ids: list[npt.NDArray[np.int64]] = []
        codes: list[CodeArray] = []
        batch_ids: list[int] = []
        batch: list[FloatArray] = []

        def flush() -> None:
            if batch:
                matrix = np.stack(batch)
                if matrix.shape[1] != self._center.shape[0]:
                    raise ValueError("the stored vectors changed shape while being read")
                ids.append(np.asarray(batch_ids, np.int64))
                codes.append(self._code(matrix))
                batch_ids.clear()
                batch.clear()

        for rowid, blob in conn.execute(sql, tuple(params)):
            batch_ids.append(int(rowid))
            batch.append(np.frombuffer(blob, np.float32))
            if len(batch) >= _READ:
                flush()
        flush()
        if not ids:
            return np.zeros(0, np.int64), np.zeros((0, 0), np.uint64)
        return np.concatenate(ids), np.concatenate(codes)

    @staticmethod
    def _where(sources: Sequence[str]) -> str:
        return f"embedding is not null and source in ({placeholders(len(sources))})"

    def _load(self, conn: Any, sources: Sequence[str]) -> None:
        where = self._where(sources)
        count = int(conn.execute(f"select count(*) from chunks where {where}", tuple(sources)
                                 ).fetchone()[0])
        self._estimate_center(conn, where, sources, count)
        self._rowids, self._codes = self._read(
            conn, f"select rowid, embedding from chunks where {where} order by rowid", sources)

    def _update(self, conn: Any, sources: Sequence[str]) -> None:
        """Only rowids that appeared are read (chunks are immutable rows); the mean stays."""
        where = self._where(sources)
        current = np.fromiter((r[0] for r in conn.execute(
            f"select rowid from chunks where {where} order by rowid", tuple(sources))), np.int64)
        keep = np.isin(self._rowids, current, assume_unique=True)
        new = np.setdiff1d(current, self._rowids, assume_unique=True)
        rowids, codes = [self._rowids[keep]], [self._codes[keep]]
        for start in range(0, len(new), 500):
            part = new[start:start + 500].tolist()
            more_ids, more = self._read(
                conn, f"select rowid, embedding from chunks where rowid in ({placeholders(len(part))}) "
                      f"and {where}", [*part, *sources])
            rowids.append(more_ids)
            codes.append(more)
        joined_ids = np.concatenate(rowids)
        filled = [c for c in codes if c.size]
        joined = np.concatenate(filled) if filled else self._codes[:0]
        order = np.argsort(joined_ids, kind="stable")
        self._rowids, self._codes = joined_ids[order], np.ascontiguousarray(joined[order])

    def codes(self, conn: Any, generation: int, sources: Sequence[str]) -> tuple[
            npt.NDArray[np.int64], CodeArray]:
        key = (generation, tuple(sorted(sources)))
        with self._lock:
            if self._key != key:
                same_rows = self._key is not None and self._key[1] == key[1] and self._codes.size
                try:
                    if same_rows:
                        self._update(conn, sources)
                    else:
                        self._load(conn, sources)
                except ValueError:  # another dimension (a new model): read everything again
                    self._load(conn, sources)
                self._key = key
            return self._rowids, self._codes

    # -- search --------------------------------------------------------------------------
    def _closest(self, codes: CodeArray, query: CodeArray, wanted: int) -> npt.NDArray[np.int64]:
        """Positions of the ``wanted`` codes nearest the query's (Hamming distance)."""
        distances = np.empty(codes.shape[0], np.uint16)
        for start in range(0, codes.shape[0], _BLOCK):
            block = codes[start:start + _BLOCK]
            distances[start:start + block.shape[0]] = _popcount_rows(np.bitwise_xor(block, query))
        if wanted >= distances.shape[0]:
            return np.arange(distances.shape[0], dtype=np.int64)
        return np.argpartition(distances, wanted - 1)[:wanted].astype(np.int64)

    def search(self, conn: Any, query: FloatArray, k: int, sources: Sequence[str],
               generation: int, among: Sequence[int] | None = None) -> VectorHits:
        """Top ``k`` by exact cosine among the ``pool`` closest codes."""
        rowids, codes = self.codes(conn, generation, sources)
        if among is not None and codes.shape[0]:
            wanted_ids = np.asarray(sorted(among), dtype=np.int64)
            at = np.searchsorted(rowids, wanted_ids)
            at = at[(at < len(rowids)) & (rowids[np.minimum(at, len(rowids) - 1)] == wanted_ids)]
            rowids, codes = rowids[at], codes[at]
        if codes.shape[0] == 0:
            return []
        if self._center.shape[0] != query.shape[0]:
            raise ValueError(f"the index holds {self._center.shape[0]}-dimensional vectors, the "
                             f"query has {query.shape[0]}")
        q = query.astype(np.float32)
        picked = rowids[self._closest(codes, self._code(q[None, :]), max(self.pool, k))]
        scores = self._exact(conn, q, picked.tolist())
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [(rowid, score) for rowid, score in best]

    @staticmethod
    def _exact(conn: Any, query: FloatArray, rowids: Sequence[int]) -> dict[int, float]:
        scores: dict[int, float] = {}
        for start in range(0, len(rowids), 500):
            part = rowids[start:start + 500]
            for rowid, blob in conn.execute(
                    f"select rowid, embedding from chunks where rowid in ({placeholders(len(part))})",
                    tuple(part)):
                vector = np.frombuffer(blob, np.float32)
                if vector.shape[0] == query.shape[0]:
                    scores[int(rowid)] = float(vector @ query)
        return scores
