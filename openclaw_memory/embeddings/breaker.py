"""A circuit breaker for embedding providers: an endpoint that is down costs one failure, not
one failure per search.

Without it, every search against an endpoint that refuses connections paid the whole retry
budget (about a minute with the default retries) before answering keyword-only, and every
agent tool call waited that long. After an outage-like failure (connection refused, timeout,
5xx, 429: what retries are for) the breaker opens: calls fail at once with an
:class:`EmbeddingError` that says since when and why (search answers keyword-only and says
so), and a background thread re-probes the endpoint with a one-word request every
``probe_interval_s`` until it answers, then closes the breaker. Failures no retry can mend
(a bad key, a bad request) do not open it: they are fast already, and their message matters.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from openclaw_memory.errors import EmbeddingError

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    def __init__(self, name: str, probe: Callable[[], object], *,
                 probe_interval_s: float = 30.0) -> None:
        self.name = name
        self._probe = probe
        self.probe_interval_s = probe_interval_s
        self._lock = threading.Lock()
        self._opened_at: float | None = None
        self._reason = ""
        self._prober: threading.Thread | None = None
        self._wake = threading.Event()
        self.probes = 0

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None

    def before_call(self) -> None:
        """Raise at once while open."""
        with self._lock:
            opened, reason = self._opened_at, self._reason
        if opened is not None:
            since = time.strftime("%H:%M:%S", time.localtime(opened))
            raise EmbeddingError(
                f"{self.name} is unavailable since {since} ({reason}); not called again until "
                f"a background probe (every {self.probe_interval_s:g} s) finds it answering",
                retryable=False)

    def record_failure(self, error: EmbeddingError) -> None:
        if not error.retryable and error.status is not None:
            return  # a bad key or request: fast, and not an outage
        with self._lock:
            if self._opened_at is None:
                self._opened_at = time.time()
            self._reason = str(error)[:300]
            if self._prober is None or not self._prober.is_alive():
                self._wake.clear()
                self._prober = threading.Thread(target=self._probe_until_answered,
                                                name="ocm-embed-probe", daemon=True)
                self._prober.start()

    def record_success(self) -> None:
        with self._lock:
            self._opened_at, self._reason = None, ""
        self._wake.set()

    def _probe_until_answered(self) -> None:
        while not self._wake.wait(self.probe_interval_s):
            self.probes += 1
            try:
                self._probe()
            except Exception:  # still down (any failure): probe again later
                continue
            self.record_success()
            return

    def state(self) -> dict[str, Any]:
        """For ``status``: whether calls are refused now, since when and why."""
        with self._lock:
            return {"open": self._opened_at is not None, "since": self._opened_at,
                    "reason": self._reason or None, "probe_interval_s": self.probe_interval_s}
