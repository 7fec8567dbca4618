"""Whether a process recorded in the index (a watcher, a rebuild) still runs on this machine."""

from __future__ import annotations

import os

__all__ = ["pid_alive", "process_started_at"]


def pid_alive(pid: int) -> bool:
    """True when ``pid`` exists (signal 0 probes without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def process_started_at(pid: int) -> float | None:
    """When ``pid`` started (epoch seconds), on Linux; None where this cannot be told."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(float(line.split()[1]) for line in f if line.startswith("btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError, StopIteration):
        return None
