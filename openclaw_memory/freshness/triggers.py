"""Background syncs: at most one at a time per index, requests coalesced, failures recorded.

Every trigger (search while dirty, session start, the watcher, the interval timer) calls
:meth:`BackgroundSync.request`. If no sync is running, a daemon thread starts one; if one is
running, the request is queued and the same thread runs exactly one more pass when the current
one ends, because the running pass may already have scanned past the change that caused the
request. So any number of threads may request at once and at most one sync runs per index.

A failing sync is logged and kept in :attr:`BackgroundSync.last` (and counted); it never
propagates into the caller that requested it, nor stops later requests.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openclaw_memory.errors import SyncCancelledError
from openclaw_memory.types import SyncReport

__all__ = ["BackgroundSync", "IntervalTrigger", "SyncOutcome"]

logger = logging.getLogger(__name__)

#: The sync to run; it must call ``checkpoint()`` between files (raises when cancelled).
SyncRun = Callable[[Callable[[], None]], SyncReport]


@dataclass(frozen=True, slots=True)
class SyncOutcome:
    """One background pass: why it ran, what it did or why it failed."""

    reasons: tuple[str, ...]
    started_at: float
    finished_at: float
    report: SyncReport | None = None
    error: str | None = None
    cancelled: bool = False

    @property
    def ok(self) -> bool:
        return self.report is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "reasons": list(self.reasons), "started_at": self.started_at,
            "finished_at": self.finished_at, "ok": self.ok, "error": self.error,
            "cancelled": self.cancelled,
            "report": self.report.as_dict() if self.report else None,
        }


class BackgroundSync:
    """Single-flight runner of ``run`` in a daemon thread (see the module docstring)."""

    def __init__(self, run: SyncRun, *, name: str = "openclaw-memory-sync") -> None:
        self._run = run
        self._name = name
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._queued: list[str] = []
        self._current: tuple[str, ...] = ()
        self._cancel = threading.Event()
        self._closed = False
        self._listeners: list[Callable[[SyncOutcome], None]] = []
        self.runs = 0
        self.failures = 0
        self.last: SyncOutcome | None = None
        self.last_error: SyncOutcome | None = None

    # -- requests ---------------------------------------------------------------------------
    def request(self, reason: str) -> bool:
        """Ask for a sync; True if this started a thread, False if it joined a queued pass."""
        with self._cond:
            if self._closed:
                return False
            if reason not in self._queued:
                self._queued.append(reason)
            if self._thread is not None:
                return False
            self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
            self._thread.start()
            return True

    def add_listener(self, listener: Callable[[SyncOutcome], None]) -> None:
        """Call ``listener`` (in the sync thread) after every pass; its errors are logged."""
        with self._cond:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[SyncOutcome], None]) -> None:
        with self._cond:
            if listener in self._listeners:
                self._listeners.remove(listener)

    # -- state ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while a pass runs or is queued."""
        with self._cond:
            return self._thread is not None

    @property
    def current_reasons(self) -> tuple[str, ...]:
        with self._cond:
            return self._current

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no pass is running or queued; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._thread is None, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Refuse new requests, cancel the running pass between files, and join it."""
        with self._cond:
            self._closed = True
            self._queued.clear()
            thread = self._thread
        self._cancel.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def status(self) -> dict[str, Any]:
        with self._cond:
            return {
                "running": self._thread is not None,
                "reasons": list(self._current),
                "queued": list(self._queued),
                "runs": self.runs,
                "failures": self.failures,
                "last": self.last.as_dict() if self.last else None,
                "last_error": self.last_error.error if self.last_error else None,
                "last_error_at": self.last_error.finished_at if self.last_error else None,
            }

    # -- the thread -------------------------------------------------------------------------
    def _checkpoint(self) -> None:
        if self._cancel.is_set():
            raise SyncCancelledError("background sync cancelled: the index is closing")

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._queued or self._cancel.is_set():
                    self._thread, self._current = None, ()
                    self._cond.notify_all()
                    return
                self._current, self._queued = tuple(self._queued), []
            outcome = self._once(self._current)
            with self._cond:
                self.runs += 1
                self.last = outcome
                if outcome.error is not None and not outcome.cancelled:
                    self.failures += 1
                    self.last_error = outcome
                listeners = list(self._listeners)
            for listener in listeners:
                try:
                    listener(outcome)
                except Exception:  # a listener (e.g. a printer) must not stop syncing
                    logger.exception("sync listener failed")

    def _once(self, reasons: tuple[str, ...]) -> SyncOutcome:
        started = time.time()
        try:
            report = self._run(self._checkpoint)
        except SyncCancelledError as exc:
            return SyncOutcome(reasons, started, time.time(), error=str(exc), cancelled=True)
        except Exception as exc:  # recorded and logged; the next request tries again
            logger.warning("background sync (%s) failed: %s", ", ".join(reasons), exc,
                           exc_info=True)
            return SyncOutcome(reasons, started, time.time(),
                               error=f"{type(exc).__name__}: {exc}")
        return SyncOutcome(reasons, started, time.time(), report=report)


class IntervalTrigger:
    """Calls ``fire()`` every ``seconds`` in a daemon thread until :meth:`stop`."""

    def __init__(self, seconds: float, fire: Callable[[], object], *,
                 name: str = "openclaw-memory-interval") -> None:
        if seconds <= 0:
            raise ValueError("the interval must be positive")
        self.seconds = seconds
        self._fire = fire
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self.fired = 0

    def start(self) -> IntervalTrigger:
        self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.wait(self.seconds):
            self.fired += 1
            try:
                self._fire()
            except Exception:  # the timer outlives one failed request
                logger.exception("interval sync request failed")
