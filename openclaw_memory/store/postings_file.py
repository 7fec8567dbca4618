"""Keyword postings kept beside the index, so that a new process has them in a moment.

Reading the postings from FTS5 takes 19-23 s at 100k chunks with a vocabulary of identifiers
(issue 47): a CLI call, a serverless worker or a reloaded ``langgraph dev`` waited that long
for fast keyword search, FTS5 answering meanwhile. Once read, they are written as one
uncompressed ``.npz`` beside the index (``<index>.postings.npz``: arrays, the terms as one
UTF-8 blob), which the next process loads in a fraction of that and brings up to date with
the chunks changed since (postings_merge.py). It is a cache: never trusted without the index
file it was written from (device and inode), its generation, and FTS5's totals; removed
when it does not fit; and the index never depends on it (a read-only folder simply has none).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_memory.store.postings import Postings

__all__ = ["FORMAT", "load_postings", "postings_path", "save_postings"]

FORMAT = 1
_ARRAYS = ("rowids", "sources", "starts", "docs", "freqs")


def postings_path(index: Path) -> Path:
    return index.with_name(index.name + ".postings.npz")


def _identity(index: Path) -> str:
    info = os.stat(index)
    return f"{info.st_dev}:{info.st_ino}"


def save_postings(index: Path, postings: Postings) -> bool:
    """Write ``postings`` beside ``index`` (owner-only, atomically); False when the folder
    cannot take it (the next process reads from FTS5 again, as without the file)."""
    target = postings_path(index)
    terms = list(postings.terms)  # in id order: dict order is insertion order
    blob = "\x00".join(terms).encode("utf-8", "surrogatepass")
    keys = np.fromiter(postings.positions, dtype=np.int64, count=len(postings.positions))
    held = [postings.positions[int(k)] for k in keys]
    meta = {"format": FORMAT, "index": _identity(index), "generation": postings.generation,
            "rows": postings.rows, "tokens": postings.tokens,
            "source_names": list(postings.source_names), "terms": len(terms)}
    temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as out:
            np.savez(out, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
                     terms=np.frombuffer(blob, np.uint8),
                     position_keys=keys,
                     position_sizes=np.asarray([a.shape[0] for a in held], np.int64),
                     position_values=np.concatenate(held) if held else np.zeros(0, np.int64),
                     **{name: getattr(postings, name) for name in _ARRAYS})
        os.replace(temp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return False
    return True


def load_postings(index: Path, room: int) -> Postings | None:
    """The postings written beside ``index``, when they were written from this very file
    and take at most ``room`` bytes; None otherwise (the stale file is removed when it can
    be). The caller checks their generation and FTS5's totals."""
    target = postings_path(index)
    try:
        if target.stat().st_size > room:
            return None
        with np.load(target, allow_pickle=False) as data:
            arrays: dict[str, Any] = {name: data[name] for name in data.files}
    except (OSError, ValueError, KeyError, EOFError):
        return None
    try:
        meta = json.loads(bytes(arrays["meta"]).decode())
        if meta.get("format") != FORMAT or meta.get("index") != _identity(index):
            _remove(target)
            return None
        return _postings(meta, arrays)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        _remove(target)
        return None


def _postings(meta: dict[str, Any], arrays: dict[str, Any]) -> Postings:
    blob = bytes(arrays["terms"]).decode("utf-8", "surrogatepass")
    terms = blob.split("\x00") if meta["terms"] else []
    if len(terms) != meta["terms"]:
        raise ValueError("terms do not match their count")
    sizes = arrays["position_sizes"]
    values = np.split(arrays["position_values"], np.cumsum(sizes)[:-1]) if sizes.shape[0] else []
    positions = {int(k): np.ascontiguousarray(v) for k, v in zip(arrays["position_keys"], values,
                                                                 strict=True)}
    return Postings(generation=int(meta["generation"]), rows=int(meta["rows"]),
                    tokens=int(meta["tokens"]), rowids=arrays["rowids"],
                    sources=arrays["sources"], source_names=tuple(meta["source_names"]),
                    terms=dict(zip(terms, range(len(terms)), strict=True)),
                    starts=arrays["starts"], docs=arrays["docs"], freqs=arrays["freqs"],
                    positions=positions)


def _remove(target: Path) -> None:
    with contextlib.suppress(OSError):
        target.unlink()
