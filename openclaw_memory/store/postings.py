"""The keyword index's postings in memory, scored by FTS5's own BM25, bit for bit.

At 100k chunks of real notes FTS5 spent 9 ms scoring a question's matches and the coverage
look-ups 7 ms more (a scratch FTS5 table filled with the candidates' text), while the vector
side read the whole matrix in 7 ms. The postings here are FTS5's own (read from its
``fts5vocab`` table, so every token is exactly as FTS5 made it: stems, folded case, CJK
characters): per term, the chunks holding it and how often; for single CJK characters also
their positions, which a CJK pair's phrase needs. A question is then scored with numpy:
a scatter-add per term over its chunks.

The score is FTS5's ``bm25()`` computed the way its C code computes it (same operations in
the same order, in double precision): IDF ``log((N - n + 0.5) / (n + 0.5))`` floored at
1e-6, ``k1 = 1.2``, ``b = 0.75``, the row's token count against FTS5's own average, negated.
Ties are ordered by rowid. ``tests/test_postings.py`` checks rankings and scores against
FTS5 on the same index.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field

import numpy as np
import numpy.typing as npt

from openclaw_memory.store.term_ids import TermIds

__all__ = ["K1", "SPAN", "B", "PhraseHits", "Postings", "position_keys"]

K1 = 1.2
B = 0.75

IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

#: Positions are kept as ``doc * SPAN + offset`` keys; a chunk never holds this many tokens.
SPAN = 1 << 24


@dataclass(frozen=True, slots=True)
class PhraseHits:
    """The chunks (document indexes, ascending) holding a phrase, and how often each does."""

    docs: Int32Array
    freqs: FloatArray

    @property
    def count(self) -> int:
        return int(self.docs.shape[0])


_NONE = PhraseHits(np.zeros(0, np.int32), np.zeros(0, np.float64))


@dataclass(slots=True)
class Postings:
    """One index generation's postings (read-only once built; safe to share across threads).

    ``rowids`` are the chunks with at least one token, ascending; arrays indexed by
    "document" follow that order. ``rows`` and ``tokens`` are FTS5's own totals (its
    averages record), which its BM25 reads. ``terms`` iterates in id order (ids ``0..n-1``);
    ``given_norms``: the BM25 length norms when already known (saved beside the index).
    """

    generation: int
    rows: int
    tokens: int
    rowids: IntArray
    sources: npt.NDArray[np.int8]
    source_names: tuple[str, ...]
    terms: Mapping[str, int]
    starts: IntArray
    docs: Int32Array
    freqs: FloatArray
    positions: Mapping[int, IntArray]
    given_norms: InitVar[FloatArray | None] = None
    norms: FloatArray = field(init=False)
    _phrases: dict[tuple[str, ...], PhraseHits] = field(init=False, default_factory=dict)

    def __post_init__(self, given_norms: FloatArray | None) -> None:
        if given_norms is not None:
            self.norms = given_norms
            return
        lengths = np.bincount(self.docs, weights=self.freqs, minlength=self.rowids.shape[0])
        avgdl = self.tokens / self.rows if self.rows else 1.0
        # FTS5: k1 * (1 - b + b * D / avgdl), evaluated in this order.
        self.norms = (K1 * ((1 - B) + ((B * lengths) / avgdl))).astype(np.float64)

    @property
    def nbytes(self) -> int:
        """The memory these postings hold: their arrays, and the terms' dict and strings (a
        vocabulary of identifiers is most of it)."""
        held = sum(a.nbytes for a in self.positions.values())
        terms = self.terms.nbytes if isinstance(self.terms, TermIds) else (
            sys.getsizeof(self.terms) + sum(sys.getsizeof(t) + 28 for t in self.terms))
        return int(self.rowids.nbytes + self.sources.nbytes + self.starts.nbytes
                   + self.docs.nbytes + self.freqs.nbytes + self.norms.nbytes + held + terms)

    # -- phrases ----------------------------------------------------------------------------
    def hits(self, tokens: Sequence[str]) -> PhraseHits | None:
        """Where a phrase of FTS5 tokens occurs; None when these postings cannot tell (a
        phrase of several tokens that are not single CJK characters: no positions kept)."""
        if not tokens:
            return None
        ids = [self.terms.get(t) for t in tokens]
        if len(ids) == 1:
            tid = ids[0]
            if tid is None:
                return _NONE
            lo, hi = int(self.starts[tid]), int(self.starts[tid + 1])
            return PhraseHits(self.docs[lo:hi], self.freqs[lo:hi])
        key = tuple(tokens)
        found = self._phrases.get(key)
        if found is None:
            found = self._phrase(ids)
            if found is None:
                return None
            if len(self._phrases) > 4096:
                self._phrases.clear()
            self._phrases[key] = found
        return found

    def _phrase(self, ids: Sequence[int | None]) -> PhraseHits | None:
        if any(i is not None and i not in self.positions for i in ids):
            return None
        if any(i is None for i in ids):
            return _NONE
        starts = self.positions[ids[0]]  # type: ignore[index]
        for step, tid in enumerate(ids[1:], start=1):
            following = self.positions[tid]  # type: ignore[index]
            starts = starts[np.isin(starts + step, following, assume_unique=True)]
            if not starts.shape[0]:
                return _NONE
        docs, counts = np.unique(starts // SPAN, return_counts=True)
        return PhraseHits(docs.astype(np.int32), counts.astype(np.float64))

    def idf(self, hits: PhraseHits) -> float:
        """FTS5's IDF of a phrase found in ``hits.count`` rows."""
        value = math.log((self.rows - hits.count + 0.5) / (hits.count + 0.5))
        return value if value > 0.0 else 1e-6

    # -- scoring ----------------------------------------------------------------------------
    def scores(self, phrases: Sequence[PhraseHits],
               every: bool = False) -> tuple[Int32Array, FloatArray]:
        """(documents matching, their bm25) for an OR (``every``: AND) of ``phrases``."""
        total = np.zeros(self.rowids.shape[0], np.float64)
        matched = np.zeros(self.rowids.shape[0], np.int32)
        for hits in phrases:
            if not hits.count:
                continue
            f = hits.freqs
            total[hits.docs] += self.idf(hits) * ((f * (K1 + 1.0)) / (f + self.norms[hits.docs]))
            matched[hits.docs] += 1
        need = len(phrases) if every else 1
        docs = np.flatnonzero(matched >= need).astype(np.int32)
        return docs, -1.0 * total[docs]

    def best(self, docs: Int32Array, scores: FloatArray, limit: int) -> list[tuple[int, float]]:
        """(rowid, bm25) of the ``limit`` best, lowest score first, ties by rowid."""
        if docs.shape[0] > limit:
            cut = np.argpartition(scores, limit - 1)[:limit]
            edge = scores[cut].max()
            keep = scores <= edge  # every document tied with the last one kept, then ordered
            docs, scores = docs[keep], scores[keep]
        order = np.lexsort((docs, scores))[:limit]
        rowids = self.rowids[docs[order]]
        return [(int(r), float(s)) for r, s in zip(rowids, scores[order], strict=True)]

    def documents(self, rowids: Sequence[int]) -> tuple[IntArray, Int32Array]:
        """The given rowids that have postings, and their document indexes."""
        wanted = np.asarray(sorted(set(rowids)), np.int64)
        if not self.rowids.shape[0]:
            return wanted[:0], np.zeros(0, np.int32)
        at = np.minimum(np.searchsorted(self.rowids, wanted), self.rowids.shape[0] - 1)
        present = self.rowids[at] == wanted
        return wanted[present], at[present].astype(np.int32)

    def source_mask(self, sources: Sequence[str]) -> npt.NDArray[np.bool_]:
        codes = [i for i, name in enumerate(self.source_names) if name in set(sources)]
        return np.isin(self.sources, np.asarray(codes, np.int8))


def position_keys(docs: Int32Array, offsets: npt.NDArray[np.int64]) -> IntArray:
    """Sorted position keys of a token's occurrences (document, offset)."""
    keys = docs.astype(np.int64) * SPAN + offsets.astype(np.int64)
    keys.sort()
    return keys
