"""How fresh one index is, and every trigger that refreshes it without blocking the caller.

* **Dirty state.** ``mark(reason)`` records why the files may differ from the index. A sync
  clears it only if nothing was marked while it ran (a sequence number, so a change noticed
  mid-sync is never lost).
* **Search while dirty** (``sync.on_search``): the search answers from the current index at once,
  says ``stale`` and starts (or joins) one background sync. An index that has **never been
  built** has nothing to answer from, so the first search builds it in the foreground, as
  OpenClaw does for an empty index; every later search is served immediately.
* **Session start** (``sync.on_session_start``): one background sync per session key.
* **Interval** (``sync.interval_minutes`` > 0): a background sync every N minutes.
* **Watcher**: :meth:`Freshness.start_watch` (``MemoryIndex.watch()``).

All of them go through one :class:`~openclaw_memory.freshness.triggers.BackgroundSync`, so they are safe to
call from any number of threads and at most one sync runs per index at a time.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from openclaw_memory.config import MemorySettings
from openclaw_memory.files.workspace import Workspace
from openclaw_memory.freshness.activity import record_watcher, watcher_status
from openclaw_memory.freshness.triggers import BackgroundSync, IntervalTrigger, SyncOutcome
from openclaw_memory.freshness.watch import MemoryWatcher
from openclaw_memory.indexing.sync import LAST_SYNC_KEY
from openclaw_memory.store import Store
from openclaw_memory.types import SyncReport


class IndexHandle(Protocol):
    """What freshness needs of the index it keeps fresh (``MemoryIndex`` satisfies it).

    A protocol rather than an import, so the facade depends on this module and not the reverse.
    """

    settings: MemorySettings
    workspace: Workspace
    store: Store
    last_sync: SyncReport | None

    def sync(self) -> SyncReport: ...  # called with no arguments: a plain incremental sync

    def _background_sync(self, progress: Callable[[int, int, str], None]) -> SyncReport: ...

__all__ = ["Freshness", "IndexHandle"]

_MAX_REASONS = 20
_PATHS_PER_REASON = 5
_CLOSE_TIMEOUT_S = 60.0


class Freshness:
    """Dirty state and sync triggers of one :class:`~openclaw_memory.index.MemoryIndex`."""

    def __init__(self, index: IndexHandle) -> None:
        self._index = index
        self._lock = threading.Lock()
        self._seq = 0
        self._reasons: dict[str, float] = {}
        self._sessions: set[str] = set()
        # Unknown until this process has synced: the files may have changed since the last run.
        self.dirty = True
        self.background = BackgroundSync(self._run)
        self.watcher: MemoryWatcher | None = None
        self.interval: IntervalTrigger | None = None
        minutes = index.settings.sync.interval_minutes
        if minutes > 0:
            self.interval = IntervalTrigger(minutes * 60, lambda: self.request("interval"))
            self.interval.start()

    # -- dirty state ------------------------------------------------------------------------
    def mark(self, reason: str) -> None:
        with self._lock:
            self.dirty = True
            self._seq += 1
            if reason not in self._reasons and len(self._reasons) < _MAX_REASONS:
                self._reasons[reason] = time.time()

    def begin(self) -> int:
        """Call when a sync starts; pass the result to :meth:`settle` when it succeeded."""
        with self._lock:
            return self._seq

    def settle(self, seq: int) -> None:
        with self._lock:
            if self._seq == seq:
                self.dirty = False
                self._reasons.clear()

    def reasons(self) -> list[dict[str, Any]]:
        with self._lock:
            return [{"reason": r, "since": at} for r, at in self._reasons.items()]

    @property
    def stale(self) -> bool:
        """Results may not reflect the files: changes are known, or a sync is under way."""
        return self.dirty or self.background.running

    def never_built(self) -> bool:
        return self._index.store.meta(LAST_SYNC_KEY) is None

    # -- triggers ---------------------------------------------------------------------------
    def request(self, reason: str) -> bool:
        """Start (or join) the background sync; True if this call started a thread."""
        return self.background.request(reason)

    def for_search(self) -> bool:
        """Run before a search; returns whether its results may be stale."""
        index = self._index
        on_search = index.settings.sync.on_search
        if index.last_sync is None and on_search and self.never_built():
            index.sync()  # nothing to serve yet (see the module docstring)
            return self.stale
        stale = self.stale
        if on_search and (self.dirty or index.last_sync is None):
            self.request("search")
            stale = True
        return stale

    def session_start(self, session_key: str | None = None) -> bool:
        """A session began: sync in the background once per ``session_key``."""
        if not self._index.settings.sync.on_session_start:
            return False
        if session_key is not None:
            with self._lock:
                if session_key in self._sessions:
                    return False
                self._sessions.add(session_key)
        self.request("session-start")
        return True

    def _run(self, checkpoint: Callable[[], None]) -> SyncReport:
        return self._index._background_sync(lambda done, total, path: checkpoint())

    # -- the watcher ------------------------------------------------------------------------
    def start_watch(self, *, on_sync: Callable[[SyncOutcome], None] | None = None,
                    force_polling: bool = False, debounce_ms: int | None = None,
                    ) -> MemoryWatcher:
        with self._lock:
            if self.watcher is not None and self.watcher.running:
                return self.watcher
            if on_sync is not None:
                self.background.add_listener(on_sync)
            settings = self._index.settings.sync
            watcher = MemoryWatcher(
                self._index.workspace, on_change=self._watched_change,
                on_settled=lambda: self._settled(), force_polling=force_polling,
                debounce_ms=settings.watch_debounce_ms if debounce_ms is None else debounce_ms)
            watcher.start()
            self.watcher = watcher
        plan = watcher.plan
        record_watcher(self._index.store, active=True,
                       directories=len(plan.directories) if plan else 0)
        return watcher

    def _watched_change(self, paths: tuple[str, ...]) -> None:
        root = str(self._index.workspace.root) + os.sep
        shown = [p[len(root):] if p.startswith(root) else p for p in paths[:_PATHS_PER_REASON]]
        more = f" (+{len(paths) - len(shown)} more)" if len(paths) > len(shown) else ""
        self.mark("changed on disk: " + ", ".join(shown) + more)

    def _settled(self) -> None:
        self.request("watch")

    def stop_watch(self) -> None:
        with self._lock:
            watcher, self.watcher = self.watcher, None
        if watcher is None:
            return
        watcher.stop()
        mine = watcher_status(self._index.store)
        if mine is not None and mine["pid"] == os.getpid():
            record_watcher(self._index.store, active=False)

    # -- lifecycle and status ---------------------------------------------------------------
    def close(self) -> None:
        """Stop the watcher and timer, cancel a running sync between files and join it."""
        self.stop_watch()
        if self.interval is not None:
            self.interval.stop()
        self.background.close(_CLOSE_TIMEOUT_S)

    def status(self) -> dict[str, Any]:
        settings = self._index.settings.sync
        watcher: dict[str, Any] | None = None
        if self.watcher is not None:
            watcher = {**self.watcher.status(), "pid": os.getpid(), "in_this_process": True}
        elif (other := watcher_status(self._index.store)) is not None:
            watcher = {"running": True, **other, "in_this_process": False}
        return {
            "dirty_reasons": self.reasons(),
            "background_sync": self.background.status(),
            "watcher": watcher,
            "sync_triggers": {
                "on_search": settings.on_search,
                "on_session_start": settings.on_session_start,
                "interval_minutes": settings.interval_minutes,
                "watch_debounce_ms": settings.watch_debounce_ms,
            },
        }
