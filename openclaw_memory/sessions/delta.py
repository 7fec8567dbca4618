"""When a session transcript is due for re-indexing: byte and line deltas since it was indexed.

Transcripts grow by appends, one JSONL record per message, often many times a minute; re-indexing
on every append would re-chunk (and re-embed) the whole conversation each time. So, like OpenClaw,
a transcript that is already indexed waits until it has grown by ``delta_bytes`` bytes or
``delta_lines`` JSONL lines (newlines) since then. Unlike OpenClaw the baseline is what the index
recorded (:class:`SessionState`, in the index file), not an in-memory counter, so the decision
survives restarts and holds for any process that opens the index.

A transcript that is not an append of what was indexed (it shrank, or the bytes that were indexed
changed) is due at once: its old rows may cite lines that now say something else. The check reads
two small windows (the head and the tail of the indexed bytes), so it costs two ``pread`` calls
whatever the size; an edit strictly between them with the same length is caught by a full or
forced sync, which compares content hashes.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANCHOR_WINDOW",
    "SessionDelta",
    "SessionState",
    "anchor_of_bytes",
    "is_due",
    "measure_delta",
]

#: Bytes hashed at each end of the indexed prefix to tell an append from a rewrite.
ANCHOR_WINDOW = 4096
_READ_BLOCK = 64 * 1024


@dataclass(frozen=True, slots=True)
class SessionState:
    """What a transcript looked like when it was indexed (one row of ``session_state``)."""

    path: str
    indexed_bytes: int
    indexed_lines: int
    malformed: int
    anchor: str


@dataclass(frozen=True, slots=True)
class SessionDelta:
    """How far a transcript is ahead of its index rows.

    ``new``: never indexed; ``rewritten``: not an append of what was indexed (re-indexed at once,
    and the pending figures then count the whole file); ``due``: the next sync re-indexes it.
    """

    path: str
    pending_bytes: int
    pending_lines: int
    new: bool = False
    rewritten: bool = False
    due: bool = False
    indexed_bytes: int = 0
    indexed_lines: int = 0
    malformed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "pending_bytes": self.pending_bytes,
            "pending_lines": self.pending_lines, "new": self.new, "rewritten": self.rewritten,
            "due": self.due, "indexed_bytes": self.indexed_bytes,
            "indexed_lines": self.indexed_lines, "malformed": self.malformed,
        }


def anchor_of_bytes(data: bytes) -> str:
    """Digest of the length, head window and tail window of ``data``."""
    head = data[:ANCHOR_WINDOW]
    tail = data[max(0, len(data) - ANCHOR_WINDOW):]
    return _digest(len(data), head, tail)


def _digest(size: int, head: bytes, tail: bytes) -> str:
    hasher = hashlib.sha256(str(size).encode())
    hasher.update(b"\0" + head + b"\0" + tail)
    return hasher.hexdigest()


def _anchor_of_fd(fd: int, size: int) -> str:
    head = os.pread(fd, min(ANCHOR_WINDOW, size), 0)
    start = max(0, size - ANCHOR_WINDOW)
    tail = os.pread(fd, size - start, start)
    return _digest(size, head, tail)


def _count_newlines(fd: int, start: int, end: int) -> int:
    count = 0
    offset = start
    while offset < end:
        block = os.pread(fd, min(_READ_BLOCK, end - offset), offset)
        if not block:
            break  # truncated while we read: count what was there
        count += block.count(b"\n")
        offset += len(block)
    return count


def measure_delta(abs_path: str, rel_path: str, state: SessionState | None, *,
                  lines_needed: bool = True) -> SessionDelta:
    """Compare the file on disk with ``state``. Raises :class:`OSError` if it cannot be read.

    ``lines_needed=False`` skips counting newlines (``pending_lines`` is then 0): the sync does
    not need them once the byte threshold alone decides.
    """
    fd = os.open(abs_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{rel_path} is not a regular file")
        size = info.st_size
        if state is None:
            lines = _count_newlines(fd, 0, size) if lines_needed else 0
            return SessionDelta(rel_path, size, lines, new=True)
        rewritten = (size < state.indexed_bytes
                     or _anchor_of_fd(fd, state.indexed_bytes) != state.anchor)
        # A rewrite makes the whole file pending, as OpenClaw counts a shrunk file.
        start = 0 if rewritten else state.indexed_bytes
        lines = _count_newlines(fd, start, size) if lines_needed else 0
        return SessionDelta(rel_path, size - start, lines, rewritten=rewritten,
                            indexed_bytes=state.indexed_bytes,
                            indexed_lines=state.indexed_lines, malformed=state.malformed)
    finally:
        os.close(fd)


def is_due(delta: SessionDelta, *, delta_bytes: int, delta_lines: int) -> bool:
    """True when the next sync should re-index: new, rewritten, or a threshold is reached.

    A threshold of 0 means "any change" (OpenClaw's rule for thresholds <= 0).
    """
    if delta.new or delta.rewritten:
        return True
    if delta.pending_bytes <= 0:
        return False
    if delta_bytes == 0 or delta_lines == 0:
        return True
    return delta.pending_bytes >= delta_bytes or delta.pending_lines >= delta_lines
