"""Compressed vectors in memory, for an index whose float32 matrix exceeds the memory budget
(``store.max_matrix_mb``): a million 512-dimension vectors are 2 GB as floats, 584 MB here.

Each vector is kept twice, small: as one bit per dimension (whether it lies above that
dimension's mean, estimated on a sample of the stored vectors, so the bits split the data,
not the origin) and as one signed byte per dimension (scaled by that dimension's largest
magnitude in the sample). A search ranks every code by Hamming distance to the query's (the
bits are stored word by word, so each pass over them is one long vectorised loop), scores the
closest ``pool`` by the bytes, and the best ``exact`` of those by exact cosine with their
stored float32 vectors, read back from the index. Scores are therefore exact; the ranking is
exact whenever the true top ``k`` survive both cuts (``benchmarks/scale.py`` measures how
often, against exact search).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from openclaw_memory.store.vectors import VectorHits, changed_rows, placeholders

__all__ = ["DEFAULT_POOL", "BinaryVectors", "code_bytes"]

FloatArray = npt.NDArray[np.float32]
CodeArray = npt.NDArray[np.uint64]
ByteArray = npt.NDArray[np.int8]

# Candidates scored by their bytes: a twentieth of the rows, within bounds. On real notes
# scaled up to 100k chunks (benchmarks/scale.py's, where every note has hundreds of
# near-identical copies, the hardest case), the exact top 6 survived a cut of 4 096 for 98 %
# of the questions and one of 16 384 for 99.9 %; scoring 16k rows by their bytes costs ~10 ms.
DEFAULT_POOL = None
POOL_SHARE, POOL_MIN, POOL_MAX = 20, 4_096, 65_536
EXACT = 64
_SAMPLE = 20_000  # vectors read to estimate each dimension's mean and range
_BLOCK = 131_072  # rows whose distances are summed at once (keeps temporaries in cache)
_READ = 4_096  # vectors decoded and coded at once while loading

_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def code_bytes(vectors: int, dims: int) -> int:
    """Memory of ``vectors`` vectors of ``dims`` dimensions here: bits, bytes and rowids."""
    return vectors * (dims + ((dims + 63) // 64) * 8 + 8)


def _popcount(words: CodeArray) -> npt.NDArray[np.uint8]:
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        counts: npt.NDArray[np.uint8] = np.bitwise_count(words)
        return counts
    table: npt.NDArray[np.uint8] = _POPCOUNT8[words.view(np.uint8)].reshape(*words.shape, 8).sum(
        axis=-1, dtype=np.uint8)
    return table


class BinaryVectors:
    """Hamming pre-selection, byte re-scoring, exact cosine for the last few."""

    name = "binary"

    def __init__(self, pool: int | None = DEFAULT_POOL, exact: int = EXACT) -> None:
        self.pool = pool
        self.exact = exact
        self._lock = threading.Lock()
        self._key: tuple[int, tuple[str, ...]] | None = None
        self._rowids: npt.NDArray[np.int64] = np.zeros(0, np.int64)
        self._codes: CodeArray = np.zeros((0, 0), np.uint64)  # (words, rows): word by word
        self._bytes: ByteArray = np.zeros((0, 0), np.int8)  # (rows, dims)
        self._center: FloatArray = np.zeros(0, np.float32)
        self._scale: FloatArray = np.zeros(0, np.float32)

    def nbytes(self) -> int:
        return int(self._codes.nbytes + self._bytes.nbytes + self._rowids.nbytes)

    def invalidate(self) -> None:
        with self._lock:
            self._key = None
            self._rowids = np.zeros(0, np.int64)
            self._codes = np.zeros((0, 0), np.uint64)
            self._bytes = np.zeros((0, 0), np.int8)
            self._center = np.zeros(0, np.float32)
            self._scale = np.zeros(0, np.float32)

    release = invalidate

    # -- coding --------------------------------------------------------------------------
    def _code(self, matrix: FloatArray) -> CodeArray:
        """(words, rows) bits of the rows above the mean."""
        bits = np.packbits(matrix > self._center, axis=1, bitorder="little")
        pad = (-bits.shape[1]) % 8
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        return np.ascontiguousarray(np.ascontiguousarray(bits).view(np.uint64).T)

    def _quantise(self, matrix: FloatArray) -> ByteArray:
        small: ByteArray = np.clip(np.rint(matrix * self._scale), -127, 127).astype(np.int8)
        return small

    def _estimate(self, conn: Any, where: str, sources: Sequence[str], count: int) -> None:
        step = max(1, count // _SAMPLE)
        rows = conn.execute(f"select embedding from chunks where {where} and rowid % ? = 0 "
                            f"limit ?", (*sources, step, _SAMPLE)).fetchall()
        if not rows:  # rowids that all miss the stride: take the first ones instead
            rows = conn.execute(f"select embedding from chunks where {where} limit ?",
                                (*sources, _SAMPLE)).fetchall()
        if not rows:
            self._center = self._scale = np.zeros(0, np.float32)
            return
        sample = np.stack([np.frombuffer(r[0], np.float32) for r in rows])
        self._center = sample.mean(axis=0).astype(np.float32)
        # A little headroom past the sample's largest magnitude; beyond it values clip.
        largest = np.maximum(np.abs(sample).max(axis=0) * 1.25, 1e-6)
        self._scale = (127.0 / largest).astype(np.float32)

    def _read(self, conn: Any, sql: str, params: Sequence[Any],
              ) -> tuple[npt.NDArray[np.int64], CodeArray, ByteArray]:
        """Rows of (rowid, embedding), coded a batch at a time (never a float matrix whole)."""
        ids: list[npt.NDArray[np.int64]] = []
        codes: list[CodeArray] = []
        small: list[ByteArray] = []
        batch_ids: list[int] = []
        batch: list[FloatArray] = []

        def flush() -> None:
            if batch:
                matrix = np.stack(batch)
                if matrix.shape[1] != self._center.shape[0]:
                    raise ValueError("the stored vectors changed shape while being read")
                ids.append(np.asarray(batch_ids, np.int64))
                codes.append(self._code(matrix))
                small.append(self._quantise(matrix))
                batch_ids.clear()
                batch.clear()

        for rowid, blob in conn.execute(sql, tuple(params)):
            batch_ids.append(int(rowid))
            batch.append(np.frombuffer(blob, np.float32))
            if len(batch) >= _READ:
                flush()
        flush()
        if not ids:
            words = (self._center.shape[0] + 63) // 64
            return (np.zeros(0, np.int64), np.zeros((words, 0), np.uint64),
                    np.zeros((0, self._center.shape[0]), np.int8))
        return np.concatenate(ids), np.concatenate(codes, axis=1), np.concatenate(small)

    @staticmethod
    def _where(sources: Sequence[str]) -> str:
        return f"embedding is not null and source in ({placeholders(len(sources))})"

    def _load(self, conn: Any, sources: Sequence[str]) -> None:
        where = self._where(sources)
        count = int(conn.execute(f"select count(*) from chunks where {where}", tuple(sources)
                                 ).fetchone()[0])
        self._estimate(conn, where, sources, count)
        self._rowids, self._codes, self._bytes = self._read(
            conn, f"select rowid, embedding from chunks where {where} order by rowid", sources)

    def _update(self, conn: Any, sources: Sequence[str]) -> None:
        """Only rowids that appeared are read (chunks are immutable rows); mean and scale stay."""
        where = self._where(sources)
        keep, new = changed_rows(conn, where, sources, self._rowids)
        rowids, codes, small = [self._rowids[keep]], [self._codes[:, keep]], [self._bytes[keep]]
        for start in range(0, len(new), 500):
            part = new[start:start + 500].tolist()
            more_ids, more_codes, more_bytes = self._read(
                conn, f"select rowid, embedding from chunks where rowid in ({placeholders(len(part))}) "
                      f"and {where}", [*part, *sources])
            rowids.append(more_ids)
            codes.append(more_codes)
            small.append(more_bytes)
        joined_ids = np.concatenate(rowids)
        order = np.argsort(joined_ids, kind="stable")
        self._rowids = joined_ids[order]
        self._codes = np.ascontiguousarray(np.concatenate(codes, axis=1)[:, order])
        self._bytes = np.ascontiguousarray(np.concatenate(small)[order])

    def _ensure(self, conn: Any, generation: int, sources: Sequence[str]) -> None:
        key = (generation, tuple(sorted(sources)))
        if self._key == key:
            return
        same_rows = self._key is not None and self._key[1] == key[1] and self._rowids.size
        try:
            if same_rows:
                self._update(conn, sources)
            else:
                self._load(conn, sources)
        except ValueError:  # another dimension (a new model): read everything again
            self._load(conn, sources)
        self._key = key

    # -- search --------------------------------------------------------------------------
    def _distances(self, codes: CodeArray, query: CodeArray) -> npt.NDArray[np.uint16]:
        rows = codes.shape[1]
        out = np.empty(rows, np.uint16)
        for start in range(0, rows, _BLOCK):
            end = min(rows, start + _BLOCK)
            total = _popcount(np.bitwise_xor(codes[0, start:end], query[0])).astype(np.uint16)
            for word in range(1, codes.shape[0]):
                total += _popcount(np.bitwise_xor(codes[word, start:end], query[word]))
            out[start:end] = total
        return out

    @staticmethod
    def _closest(distances: npt.NDArray[np.uint16], wanted: int) -> npt.NDArray[np.int64]:
        """Positions of the ``wanted`` smallest distances (ties at the cut all kept, within
        twice ``wanted``): a histogram of distances finds the cut without sorting."""
        if wanted >= distances.shape[0]:
            return np.arange(distances.shape[0], dtype=np.int64)
        cumulative = np.cumsum(np.bincount(distances))
        cut = int(np.searchsorted(cumulative, wanted))
        chosen = np.flatnonzero(distances <= cut)
        if chosen.shape[0] > 2 * wanted:
            chosen = chosen[np.argpartition(distances[chosen], wanted - 1)[:wanted]]
        return chosen.astype(np.int64)

    def search(self, conn: Any, query: FloatArray, k: int, sources: Sequence[str],
               generation: int, among: Sequence[int] | None = None) -> VectorHits:
        """Top ``k`` by exact cosine among the ``exact`` best by bytes of the ``pool``
        closest codes."""
        with self._lock:
            self._ensure(conn, generation, sources)
            rowids, codes, small = self._rowids, self._codes, self._bytes
            center, scale = self._center, self._scale
        if among is not None and rowids.shape[0]:
            wanted_ids = np.asarray(sorted(among), dtype=np.int64)
            at = np.searchsorted(rowids, wanted_ids)
            at = at[(at < len(rowids)) & (rowids[np.minimum(at, len(rowids) - 1)] == wanted_ids)]
            rowids, codes, small = rowids[at], codes[:, at], small[at]
        if rowids.shape[0] == 0:
            return []
        if center.shape[0] != query.shape[0]:
            raise ValueError(f"the index holds {center.shape[0]}-dimensional vectors, the "
                             f"query has {query.shape[0]}")
        q = query.astype(np.float32)
        bits = np.packbits((q > center)[None, :], axis=1, bitorder="little")
        bits = np.pad(bits, ((0, 0), (0, (-bits.shape[1]) % 8)))
        wanted = self.pool or min(POOL_MAX, max(POOL_MIN, rowids.shape[0] // POOL_SHARE))
        pool = np.sort(self._closest(self._distances(codes, bits.view(np.uint64)[0]),
                                     max(wanted, k)))  # rows in order: a forward gather
        approx = small[pool].astype(np.float32) @ (q / scale)
        best = pool[np.argsort(-approx, kind="stable")[:max(self.exact, k)]]
        scores = self._exact(conn, q, rowids[best].tolist())
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [(rowid, score) for rowid, score in ranked]

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
