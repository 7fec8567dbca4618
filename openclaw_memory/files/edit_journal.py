"""An edit of a curated file and its history entry as one unit, whatever stops the process.

The history entry is written before the file changes, as a pending record beside the history
files (``memory-history/.pending-<token>.json``: not Markdown, never read as history). Then the
file is swapped, the entry appended to the day's history and the record removed. A history
folder that cannot be written stops the edit before anything changes. A process killed between
the steps leaves the record, and the next edit of that file settles it first, under the file's
lock: the file holds the edit (its bytes hash as the record's ``after``), so the entry goes to
the history; or it does not, and the record is dropped. The temp files a killed swap leaves
beside the file (``.MEMORY.md.<hex>.tmp``) are removed then too.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from openclaw_memory.files.atomic import write_all

__all__ = ["PendingEdit", "digest", "drop_swap_leftovers", "entry_present", "is_pending",
           "locked_append", "read_pending", "settle_pending"]

_PENDING = re.compile(r"^\.pending-[0-9a-f]{12}\.json$")
_NEW_FILE_MODE = 0o600


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class PendingEdit:
    """The record of one edit in progress: which file, its bytes' hashes before and after,
    and the history entry (the file it goes to, below the history folder, and its lines)."""

    path: str
    before: str
    after: str
    history_name: str
    entry: tuple[str, ...]

    def write(self, history_dir_fd: int) -> str:
        """Write the record (fsynced) in the history folder; its file name."""
        name = f".pending-{secrets.token_hex(6)}.json"
        payload = json.dumps({"path": self.path, "before": self.before, "after": self.after,
                              "history": self.history_name, "entry": list(self.entry)},
                             ensure_ascii=False).encode("utf-8")
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     _NEW_FILE_MODE, dir_fd=history_dir_fd)
        try:
            write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.fsync(history_dir_fd)
        return name

    @classmethod
    def read(cls, history_dir_fd: int, name: str) -> PendingEdit | None:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=history_dir_fd)
            with os.fdopen(fd, "rb") as handle:
                data = json.loads(handle.read(1 << 20))
            return cls(str(data["path"]), str(data["before"]), str(data["after"]),
                       str(data["history"]), tuple(str(line) for line in data["entry"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # torn by a kill while it was written: no edit followed it


def is_pending(name: str) -> bool:
    """Whether a history folder's file ``name`` is a pending edit's record."""
    return bool(_PENDING.match(name))


def read_pending(path: os.PathLike[str] | str) -> PendingEdit | None:
    """The record at ``path`` (None when torn or unreadable)."""
    folder, name = os.path.split(os.fspath(path))
    fd = os.open(folder or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return PendingEdit.read(fd, name)
    finally:
        os.close(fd)


def settle_pending(history_dir_fd: int, rel_path: str, current: bytes,
                   append: Callable[[str, list[str]], object]) -> int:
    """Settle the records of earlier edits of ``rel_path`` (the caller holds its lock and
    read its bytes, ``current``): an edit the file holds has its entry appended to the history
    (``append(history file name, entry)``, unless the entry is there already); the others
    are dropped. How many records were settled."""
    settled = 0
    for name in sorted(os.listdir(history_dir_fd)):
        if not _PENDING.match(name):
            continue
        record = PendingEdit.read(history_dir_fd, name)
        if record is not None and record.path != rel_path:
            continue
        if record is not None and digest(current) == record.after:
            append(record.history_name, list(record.entry))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=history_dir_fd)
        settled += 1
    return settled


def drop_swap_leftovers(dir_fd: int, name: str) -> None:
    """Remove the temp files a killed swap of ``name`` left in its folder (the caller holds
    the file's lock, so no swap of it is under way)."""
    pattern = re.compile(rf"^\.{re.escape(name)}\.[0-9a-f]{{12}}\.tmp$")
    for entry in os.listdir(dir_fd):
        if pattern.match(entry):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry, dir_fd=dir_fd)


def entry_present(history_fd: int, entry: list[str]) -> bool:
    """Whether the history file open at ``history_fd`` holds ``entry``'s heading already."""
    os.lseek(history_fd, 0, os.SEEK_SET)
    heading = entry[0].encode("utf-8")
    tail = b""
    while chunk := os.read(history_fd, 1 << 20):
        if heading in tail + chunk:
            return True
        tail = chunk[-len(heading):]
    return False


def locked_append(dir_fd: int, name: str, block_of: Callable[[int], bytes]) -> None:
    """Append ``block_of(fd)`` to ``name`` in ``dir_fd`` under its lock (created owner-only)."""
    fd = os.open(name, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 _NEW_FILE_MODE, dir_fd=dir_fd)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        block = block_of(fd)
        if block:
            write_all(fd, block)
            os.fsync(fd)
    finally:
        os.close(fd)
