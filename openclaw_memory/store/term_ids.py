"""A keyword vocabulary's ``{term: id}`` read in place from the postings file, not rebuilt.

A vocabulary of identifiers holds some 645 000 distinct terms at 100k chunks. Turning them
back into a dict took ~0.15 s of a new process's postings load, with the interpreter lock
held while the process's first searches ran beside it. :class:`TermIds` answers ``get``
from the terms as they lie in the file (one UTF-8 blob, their ends, and the ids in the
terms' byte order) by binary search (~20 us), and remembers what it found: a search looks
terms up again and again (2 210 look-ups of 623 terms over ten questions), and questions
share their words.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator, Mapping

import numpy as np
import numpy.typing as npt

__all__ = ["MEMO_TERMS", "TermIds", "term_arrays"]

IntArray = npt.NDArray[np.int64]

#: Look-ups remembered before the memo starts over (a few MB at most).
MEMO_TERMS = 100_000
_UNSEEN = -2


def term_arrays(terms: list[str]) -> tuple[bytes, IntArray, IntArray]:
    """(blob, ends, order) of ``terms`` given in id order: the UTF-8 blob, each term's end
    in it (``ends[0]`` is 0, term ``i`` is ``blob[ends[i]:ends[i + 1]]``), and the ids sorted
    by the terms' bytes."""
    encoded = [term.encode("utf-8", "surrogatepass") for term in terms]
    ends = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=ends[1:])
    order = np.asarray(sorted(range(len(encoded)), key=encoded.__getitem__), np.int64)
    return b"".join(encoded), ends, order


class TermIds(Mapping[str, int]):
    """Terms and their ids (``0..n-1``, iterated in id order), over :func:`term_arrays`."""

    __slots__ = ("_blob", "_ends", "_memo", "_order")

    def __init__(self, blob: bytes, ends: IntArray, order: IntArray) -> None:
        if ends.shape[0] != order.shape[0] + 1 or (ends.shape[0] and int(ends[-1]) != len(blob)):
            raise ValueError("the terms' ends do not match their blob")
        self._blob = blob
        self._ends = ends
        self._order = order
        # term -> id, or -1 for absent. Shared by threads: a dict's get and set are atomic,
        # and clearing it loses nothing but time.
        self._memo: dict[str, int] = {}

    def _key(self, term_id: int) -> bytes:
        return self._blob[int(self._ends[term_id]):int(self._ends[term_id + 1])]

    def get(self, term: str, default: int | None = None) -> int | None:  # type: ignore[override]
        found = self._memo.get(term, _UNSEEN)
        if found == _UNSEEN:
            found = self._search(term)
            if len(self._memo) >= MEMO_TERMS:
                self._memo.clear()
            self._memo[term] = found
        return default if found < 0 else found

    def _search(self, term: str) -> int:
        key = term.encode("utf-8", "surrogatepass")
        order, lo, hi = self._order, 0, self._order.shape[0]
        while lo < hi:
            mid = (lo + hi) // 2
            if self._key(int(order[mid])) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < order.shape[0] and self._key(int(order[lo])) == key:
            return int(order[lo])
        return -1

    def __getitem__(self, term: str) -> int:
        found = self.get(term)
        if found is None:
            raise KeyError(term)
        return found

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.get(term) is not None

    def __iter__(self) -> Iterator[str]:
        text = self._blob.decode("utf-8", "surrogatepass")
        if len(text) == len(self._blob):  # all ASCII: character and byte offsets agree
            ends = self._ends.tolist()
            return (text[a:b] for a, b in itertools.pairwise(ends))
        return (self._key(i).decode("utf-8", "surrogatepass") for i in range(len(self)))

    def __len__(self) -> int:
        return int(self._order.shape[0])

    @property
    def nbytes(self) -> int:
        return len(self._blob) + self._ends.nbytes + self._order.nbytes + sys.getsizeof(self)
