"""Names of the temporary databases a full rebuild writes, and cleanup after a killed one.

A rebuild writes ``<index>.rebuild-<pid>-<random>`` next to the index and deletes it when it
finishes. A process killed mid-rebuild cannot delete it, and each leftover is a whole copy of
the index; the next rebuild removes those whose process is gone. The pid in the name is what
makes that safe: a rebuild still running in another process keeps its file.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from pathlib import Path

from openclaw_memory.freshness.processes import pid_alive, process_started_at

__all__ = ["rebuild_path", "remove_stale_rebuilds"]

_SUFFIXES = ("", "-wal", "-shm", "-journal")


def rebuild_path(live: Path) -> Path:
    """A fresh temporary path for rebuilding ``live``, tagged with this process's id."""
    return live.with_name(f"{live.name}.rebuild-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _alive(pid: int, written_at: float) -> bool:
    """Whether the rebuild that wrote a file last modified at ``written_at`` may still run:
    its process exists and started before the file was written (a process started since
    has only been given the dead one's pid)."""
    if pid == os.getpid():
        return True  # another index object of this process may be rebuilding right now
    if not pid_alive(pid):
        return False
    started = process_started_at(pid)
    return started is None or started <= written_at + 1.0


def remove_stale_rebuilds(live: Path) -> list[str]:
    """Delete leftovers of rebuilds whose process no longer runs; returns their names."""
    pattern = re.compile(re.escape(live.name) + r"\.rebuild-(\d+)-[0-9a-f]+(?:-wal|-shm|-journal)?")
    removed: list[str] = []
    try:
        entries = list(os.scandir(live.parent))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        try:
            written_at = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if _alive(int(match.group(1)), written_at):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
            removed.append(entry.name)
    return removed
