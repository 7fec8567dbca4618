"""Whether a memory file is unchanged since it was indexed, by its ``stat`` alone, and when
that cannot be trusted (a rewrite within one timestamp tick of the read: git's "racy clean").
"""

from __future__ import annotations

import os
from typing import Any

from openclaw_memory.sessions.delta import SessionState
from openclaw_memory.types import MemoryFile

__all__ = ["RACY_WINDOW_S", "is_racy", "lstat_or_none", "same_stat", "stat_unchanged",
           "unreadable_reason"]

#: Seconds of timestamp coarseness tolerated by the stat short-circuit (FAT has 2 s mtimes).
RACY_WINDOW_S = 2.0


def is_racy(file: MemoryFile, known: Any) -> bool:
    """True when the recorded stat cannot prove that a memory file is unchanged.

    A same-size rewrite within one timestamp tick of the read that produced the rows keeps
    size and mtime as recorded (git's "racy clean" entries). So a stat recorded less than
    :data:`RACY_WINDOW_S` before that read is not trusted: the file is read and hashed again
    (nothing is re-embedded when the hash matches) until a sync reads it well after its
    last write, which records a stat that can be trusted.
    """
    return file.source == "memory" and known.mtime_ns >= (known.indexed_at - RACY_WINDOW_S) * 1e9


def unreadable_reason(exc: OSError) -> str:
    """One spelling per cause (as discovery's), so that reports can count them."""
    if isinstance(exc, FileNotFoundError):
        return "vanished during sync"
    return f"unreadable: {(exc.strerror or type(exc).__name__).lower()}"


def lstat_or_none(file: MemoryFile) -> os.stat_result | None:
    try:
        return os.lstat(file.abs_path)
    except OSError:
        return None


def same_stat(now: os.stat_result | None, before: os.stat_result) -> bool:
    return now is not None and (now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns, before.st_ctime_ns)


def stat_unchanged(file: MemoryFile, known: Any, states: dict[str, SessionState]) -> bool:
    if known is None or (known.size, known.mtime_ns) != (file.size, file.mtime_ns):
        return False
    # A transcript indexed before delta tracking existed has no baseline yet: record one.
    return file.source != "sessions" or file.path in states
