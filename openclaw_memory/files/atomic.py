"""Atomic file replacement inside an open directory: temp file, fsync, rename, fsync the dir.

Used by every writer that rewrites a whole Markdown file (``MEMORY.md`` edits, vector-store
documents). Readers, including a sync running at the same moment, see the old file or the new
one, never half of either.
"""

from __future__ import annotations

import contextlib
import os
import secrets

__all__ = ["swap_in", "write_all"]

# Memory is private: a file the library creates is readable by its owner only.
_NEW_FILE_MODE = 0o600


def write_all(fd: int, payload: bytes) -> None:
    """``os.write`` until every byte is out (a single write may be short)."""
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def swap_in(dir_fd: int, name: str, payload: bytes, *, mode: int | None = None,
            avoid_stat: tuple[int, int] | None = None) -> None:
    """Replace ``name`` in ``dir_fd`` with ``payload`` in one rename.

    ``mode`` keeps the permissions of the file being replaced. ``avoid_stat`` is the
    (size, mtime_ns) the index recorded for this path: sync skips files whose size and mtime are
    unchanged, so on a coarse-clock file system a same-size rewrite within one tick would go
    unseen; the new file's mtime is nudged when it collides.
    """
    # The temp name does not end in ".md", so discovery never indexes a half-written file.
    temp = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, _NEW_FILE_MODE, dir_fd=dir_fd)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            write_all(fd, payload)
            os.fsync(fd)
            _nudge_mtime(fd, avoid_stat)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    # Make the rename itself durable; some file systems refuse fsync on a directory.
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def _nudge_mtime(fd: int, avoid_stat: tuple[int, int] | None) -> None:
    if avoid_stat is None:
        return
    info = os.fstat(fd)
    if (info.st_size, info.st_mtime_ns) == avoid_stat:
        os.utime(fd, ns=(info.st_atime_ns, info.st_mtime_ns + 1))
