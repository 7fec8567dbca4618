"""sha256 of the model files, remembered across processes.

A pinned model file is checked against its sha256 before use (a swapped file would silently
poison every stored vector). Hashing both of the default model's files takes ~20 ms, which
was small next to loading the model until the ready copy mapped it (benchmarks/cold_start.py:
the load is now ~5 ms): a one-shot CLI search would spend more on the check than on the model.
So a digest is remembered in the cache folder, keyed by the file's path, size, change time
and inode: a file replaced or rewritten (by pip, or by hand) changes at least one of them
and is hashed again. The memo is read only when it is private to this user
(model_cache.private_to_user), like the ready copies of the models.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from openclaw_memory.embeddings.model_cache import private_to_user, replace_private
from openclaw_memory.store.paths import cache_dir

__all__ = ["file_sha256"]

_digests: dict[str, str] = {}
_lock = threading.Lock()
_MEMO = "digests.json"


def file_sha256(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, ctime, inode) in this process and in
    the cache folder."""
    key = _key(path)
    with _lock:
        known = _digests.get(key)
        if known is None:
            known = _read_memo().get(key)
    if known is not None:
        with _lock:
            _digests[key] = known
        return known
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    with _lock:
        _digests[key] = digest
        _write_memo(key, digest)
    return digest


def _key(path: Path) -> str:
    info = path.stat()
    return f"{path.resolve()}|{info.st_size}|{info.st_mtime_ns}|{info.st_ctime_ns}|{info.st_ino}"


def _memo_path() -> Path:
    return cache_dir() / "models" / _MEMO


def _read_memo() -> dict[str, str]:
    memo = _memo_path()
    if not memo.is_file() or not private_to_user(memo):
        return {}
    try:
        data = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_memo(key: str, digest: str) -> None:
    """Adds one digest; a failure (read-only home, full disk) only costs the next process
    the hash."""
    memo = _memo_path()
    try:
        memo.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = {**_read_memo(), key: digest}
        # Entries for files that no longer exist (an upgraded package) are dropped.
        data = {k: v for k, v in data.items() if Path(k.split("|", 1)[0]).exists()}
        replace_private(memo, lambda out: out.write(json.dumps(data).encode("utf-8")))
    except OSError:
        return
