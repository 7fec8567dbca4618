"""Activity kept in the index's ``meta`` table so any process can report it in ``status``.

Pre-compaction memory flushes (when the last one ran, how many ran) and the watcher that keeps
the index fresh (its process id, when it started). Both live in the index file, not in memory,
because the process answering ``openclaw-memory status`` is rarely the one that flushed or
watches.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from openclaw_memory.freshness.processes import pid_alive
from openclaw_memory.store import Store

__all__ = ["FLUSH_AT_KEY", "FLUSH_COUNT_KEY", "WATCHER_KEY", "flush_status", "record_flush",
           "record_flush_failure", "record_watcher", "watcher_status"]

FLUSH_AT_KEY = "last_flush_at"
FLUSH_COUNT_KEY = "flush_count"
FLUSH_APPENDED_KEY = "last_flush_appended"
FLUSH_FAILURES_KEY = "flush_failures"
FLUSH_ERROR_KEY = "last_flush_error"
WATCHER_KEY = "watcher"


def record_flush(store: Store, *, appended: int, at: float | None = None) -> None:
    """Record one completed flush turn; the count is incremented inside SQLite (atomic)."""
    with store.write() as conn:
        conn.execute(
            "insert into meta(key, value) values(?, '1') on conflict(key) "
            "do update set value = cast(value as integer) + 1", (FLUSH_COUNT_KEY,))
        conn.executemany(
            "insert into meta(key, value) values(?, ?) on conflict(key) "
            "do update set value = excluded.value",
            [(FLUSH_AT_KEY, repr(at if at is not None else time.time())),
             (FLUSH_APPENDED_KEY, str(int(appended)))])


def record_flush_failure(store: Store, *, error: str, gave_up: bool,
                         at: float | None = None) -> None:
    """Record one failed flush attempt (counted) and its error, with whether it was the last."""
    detail = json.dumps({"at": at if at is not None else time.time(), "error": error[:500],
                         "gave_up": gave_up})
    with store.write() as conn:
        conn.execute(
            "insert into meta(key, value) values(?, '1') on conflict(key) "
            "do update set value = cast(value as integer) + 1", (FLUSH_FAILURES_KEY,))
        conn.execute(
            "insert into meta(key, value) values(?, ?) on conflict(key) "
            "do update set value = excluded.value", (FLUSH_ERROR_KEY, detail))


def flush_status(store: Store) -> dict[str, Any]:
    """``last_flush_at`` (epoch seconds or None), ``flush_count``, ``last_flush_appended``,
    ``flush_failures`` and ``last_flush_error`` (``{at, error, gave_up}`` or None)."""
    at = store.meta(FLUSH_AT_KEY)
    count = store.meta(FLUSH_COUNT_KEY)
    appended = store.meta(FLUSH_APPENDED_KEY)
    failures = store.meta(FLUSH_FAILURES_KEY)
    try:
        error = json.loads(store.meta(FLUSH_ERROR_KEY) or "null")
    except ValueError:
        error = None
    return {
        "last_flush_at": float(at) if at else None,
        "flush_count": int(count) if count else 0,
        "last_flush_appended": int(appended) if appended else None,
        "flush_failures": int(failures) if failures else 0,
        "last_flush_error": error if isinstance(error, dict) else None,
    }


def record_watcher(store: Store, *, active: bool, directories: int = 0) -> None:
    """Note (or clear) this process as the workspace's watcher."""
    value = json.dumps({"pid": os.getpid(), "started_at": time.time(),
                        "directories": directories}) if active else "{}"
    store.set_meta({WATCHER_KEY: value}, bump=False)  # no reader caches it


def watcher_status(store: Store) -> dict[str, Any] | None:
    """The recorded watcher if its process still runs on this machine, else None."""
    raw = store.meta(WATCHER_KEY)
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return None
    pid = data.get("pid")
    if not isinstance(pid, int) or not pid_alive(pid):
        return None  # never started, stopped cleanly, or crashed
    return {"pid": pid, "started_at": data.get("started_at"),
            "directories": data.get("directories")}
