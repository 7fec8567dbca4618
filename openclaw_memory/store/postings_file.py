"""Keyword postings kept beside the index, so that a new process has them at once.

Reading the postings from FTS5 takes 19-23 s at 100k chunks with a vocabulary of identifiers
(issue 47): a CLI call, a serverless worker or a reloaded ``langgraph dev`` waited that long
for fast keyword search, FTS5 answering meanwhile. Once read, they are written beside the
index (``<index>.postings``), which the next process maps and brings up to date with the
chunks changed since (postings_merge.py).

The file is a JSON header and raw arrays at aligned offsets, mapped read-only: nothing is
parsed or copied at load (an ``.npz`` of the same arrays took 1.4 s to read and rebuild at
100k chunks, the interpreter lock held while the process's first searches ran beside it),
and only the pages of the terms a question asks for are ever read. The terms stay as they
lie in the file (store/term_ids.py). No pickle: the folder may be shared.

It is a cache: never trusted without the index file it was written from (device and inode),
its generation, and FTS5's totals; removed when it does not fit; replaced, never rewritten
in place (a mapping stays valid); and the index never depends on it (a read-only folder
simply has none).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import secrets
import struct
from pathlib import Path
from typing import IO, Any

import numpy as np

from openclaw_memory.store.postings import SPAN, Postings
from openclaw_memory.store.term_ids import TermIds, term_arrays

__all__ = ["FORMAT", "load_postings", "postings_path", "save_postings"]

FORMAT = 2
_MAGIC = b"OCMPOST2"
_HEAD = struct.Struct("<8sQ")  # magic, then the JSON header's length
_ALIGN = 64
# What each array may be: a header naming anything else is not ours.
_DTYPES = {"<i8", "<i4", "<f8", "|i1", "|u1"}
_LEGACY = ".postings.npz"  # format 1, an .npz read whole: removed when the new file is saved


def postings_path(index: Path) -> Path:
    return index.with_name(index.name + ".postings")


def _identity(index: Path) -> str:
    info = os.stat(index)
    return f"{info.st_dev}:{info.st_ino}"


def _arrays(postings: Postings) -> dict[str, np.ndarray]:
    blob, ends, order = term_arrays(list(postings.terms))  # in id order
    keys = np.asarray(sorted(postings.positions), np.int64)
    held = [np.asarray(postings.positions[int(k)], np.int64) for k in keys]
    position_starts = np.zeros(len(held) + 1, np.int64)
    np.cumsum([a.shape[0] for a in held], out=position_starts[1:])
    return {
        "rowids": postings.rowids.astype(np.int64, copy=False),
        "sources": postings.sources.astype(np.int8, copy=False),
        "starts": postings.starts.astype(np.int64, copy=False),
        "docs": postings.docs.astype(np.int32, copy=False),
        "freqs": postings.freqs.astype(np.float64, copy=False),
        "norms": postings.norms.astype(np.float64, copy=False),
        "term_blob": np.frombuffer(blob, np.uint8), "term_ends": ends, "term_order": order,
        "position_keys": keys, "position_starts": position_starts,
        "position_values": np.concatenate(held) if held else np.zeros(0, np.int64)}


def _aligned(at: int) -> int:
    return -(-at // _ALIGN) * _ALIGN


def save_postings(index: Path, postings: Postings) -> bool:
    """Write ``postings`` beside ``index`` (owner-only, atomically); False when the folder
    cannot take it (the next process reads from FTS5 again, as without the file)."""
    arrays = _arrays(postings)
    layout: dict[str, list[Any]] = {}
    at = 0
    for name, array in arrays.items():
        layout[name] = [array.dtype.str, list(array.shape), at]
        at = _aligned(at + array.nbytes)
    header = json.dumps({
        "format": FORMAT, "index": _identity(index), "generation": postings.generation,
        "rows": postings.rows, "tokens": postings.tokens,
        "source_names": list(postings.source_names), "arrays": layout}).encode()
    start = _aligned(_HEAD.size + len(header))
    target = postings_path(index)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(_HEAD.pack(_MAGIC, len(header)) + header)
            for name, array in arrays.items():
                _write_at(out, start + layout[name][2], array)
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return False
    _remove(index.with_name(index.name + _LEGACY))
    return True


def _write_at(out: IO[bytes], offset: int, array: np.ndarray) -> None:
    out.write(b"\0" * (offset - out.tell()))
    out.write(np.ascontiguousarray(array).tobytes())


def load_postings(index: Path, room: int) -> Postings | None:
    """The postings written beside ``index``, mapped, when they were written from this very
    file and take at most ``room`` bytes; None otherwise (a stale or broken file is removed
    when it can be). The caller checks their generation and FTS5's totals."""
    target = postings_path(index)
    try:
        with open(target, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > room or size < _HEAD.size:
                return None
            mapped = _mapped(handle.fileno())
    except (OSError, ValueError):
        return None
    try:
        magic, length = _HEAD.unpack_from(mapped)
        if magic != _MAGIC or _HEAD.size + length > size:
            raise ValueError("not a postings file")
        meta = json.loads(mapped[_HEAD.size:_HEAD.size + length].decode())
        if meta.get("format") != FORMAT or meta.get("index") != _identity(index):
            raise ValueError("written for another index file")
        return _postings(meta, _views(mapped, _aligned(_HEAD.size + length), meta["arrays"]))
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        with contextlib.suppress(BufferError):  # views made before the fault go with the GC
            mapped.close()
        _remove(target)
        return None


def _mapped(fileno: int) -> mmap.mmap:
    """The file mapped read-only, its pages mapped in at once where the system can
    (``MAP_POPULATE``, Linux): the postings are loaded in the background, and a search then
    takes no page fault on a term it is the first to ask for (they were a fifth of a new
    question's first search at 100k chunks)."""
    populate = getattr(mmap, "MAP_POPULATE", 0)
    if populate:
        with contextlib.suppress(OSError, ValueError):
            return mmap.mmap(fileno, 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    return mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)


def _views(mapped: mmap.mmap, start: int, layout: dict[str, Any]) -> dict[str, np.ndarray]:
    views: dict[str, np.ndarray] = {}
    for name, (dtype, shape, at) in layout.items():
        if dtype not in _DTYPES or len(shape) != 1 or at < 0:
            raise ValueError(f"unexpected array {name}")
        count = int(shape[0])
        if start + at + count * np.dtype(dtype).itemsize > len(mapped):
            raise ValueError(f"array {name} runs past the end of the file")
        views[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=start + at)
    return views


#: Arrays read at random by every question (a row's norm, rowid and source; a term's start):
#: copied out of the mapping (about 6 MB at 100k chunks, a few ms), where first touching
#: their pages one by one cost a new process's first searches up to 0.1 s.
_COPIED = ("rowids", "sources", "norms", "starts")


def _postings(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> Postings:
    arrays = {name: _copied(a) if name in _COPIED else a for name, a in arrays.items()}
    terms = TermIds(arrays["term_blob"].tobytes(), arrays["term_ends"], arrays["term_order"])
    starts, values = arrays["position_starts"], arrays["position_values"]
    keys = arrays["position_keys"].tolist()
    if len(keys) + 1 != starts.shape[0] or int(starts[-1]) != values.shape[0]:
        raise ValueError("positions do not match their count")
    positions = {k: values[int(starts[i]):int(starts[i + 1])] for i, k in enumerate(keys)}
    rows = arrays["rowids"].shape[0]
    if (arrays["sources"].shape[0] != rows or arrays["norms"].shape[0] != rows
            or arrays["starts"].shape[0] != len(terms) + 1
            or arrays["docs"].shape[0] != arrays["freqs"].shape[0]
            or int(arrays["starts"][-1]) != arrays["docs"].shape[0]):
        raise ValueError("arrays do not match each other")
    _check_indexes(arrays, len(terms), len(meta["source_names"]))
    return Postings(generation=int(meta["generation"]), rows=int(meta["rows"]),
                    tokens=int(meta["tokens"]), rowids=arrays["rowids"],
                    sources=arrays["sources"], source_names=tuple(meta["source_names"]),
                    terms=terms, starts=arrays["starts"], docs=arrays["docs"],
                    freqs=arrays["freqs"], positions=positions, given_norms=arrays["norms"])


def _check_indexes(arrays: dict[str, np.ndarray], terms: int, sources: int) -> None:
    """Every array read as an index stays within what it indexes: a damaged file must fail
    here (FTS5 is read again), never as an IndexError inside a search. A few ms at 100k
    chunks, in the reading thread."""
    rows = arrays["rowids"].shape[0]
    ends, order, starts = arrays["term_ends"], arrays["term_order"], arrays["starts"]
    docs, positions = arrays["docs"], arrays["position_values"]
    checks = (
        bool(np.all(np.diff(ends) >= 0)) and (not ends.shape[0] or int(ends[0]) == 0),
        not terms or (int(order.min()) >= 0 and int(order.max()) < terms),
        bool(np.all(np.diff(starts) >= 0)) and int(starts[0]) == 0,
        not docs.shape[0] or (int(docs.min()) >= 0 and int(docs.max()) < rows),
        not positions.shape[0] or (int(positions.min()) >= 0
                                   and int(positions.max()) < rows * SPAN),
        all(0 <= k < terms for k in arrays["position_keys"].tolist()),
        bool(np.all(np.diff(arrays["position_starts"]) >= 0)),
        not rows or int(arrays["sources"].max()) < sources,
    )
    if not all(checks):
        raise ValueError("an index in the postings file is out of range")


def _copied(array: np.ndarray) -> np.ndarray:
    out = np.array(array)
    out.setflags(write=False)  # as read-only as the mapped ones: postings are shared
    return out


def _remove(target: Path) -> None:
    with contextlib.suppress(OSError):
        target.unlink()
