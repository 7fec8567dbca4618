"""The progress bar of long syncs: done/total, rate, elapsed and time left, on a terminal only.

Rate and time left come from the last few seconds of progress (not the whole run), so a sync
whose first files were cached and fast does not promise an early finish.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

__all__ = ["ProgressBar", "format_duration"]

_MIN_FILES = 20  # shorter syncs finish before a bar helps
_WIDTH = 24
_REDRAW_S = 0.1
_WINDOW_S = 10.0


def format_duration(seconds: float) -> str:
    """``0:07``, ``12:05``, ``1:02:03``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressBar:
    """Callable as a sync ``progress(done, total, path)``; draws on ``stream`` when it is a tty."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, unit: str = "files") -> None:
        self.unit = unit
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._clock = clock
        self._start: float | None = None
        self._last_draw = float("-inf")
        self._samples: deque[tuple[float, int]] = deque()

    def __call__(self, done: int, total: int, path: str) -> None:
        if not self.enabled or total < _MIN_FILES:
            return
        now = self._clock()
        if self._start is None:
            self._start = now
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[0][0] > _WINDOW_S:
            self._samples.popleft()
        if done < total and now - self._last_draw < _REDRAW_S:
            return
        self._last_draw = now
        self.stream.write("\r" + self.line(done, total, now) + ("\n" if done >= total else ""))
        self.stream.flush()

    def line(self, done: int, total: int, now: float) -> str:
        filled = int(_WIDTH * done / total) if total else _WIDTH
        bar = "#" * filled + "." * (_WIDTH - filled)
        elapsed = now - (self._start if self._start is not None else now)
        rate = self.rate()
        text = f"[{bar}] {done}/{total} {self.unit}  {format_duration(elapsed)} elapsed"
        if rate is None:
            return text + "  (measuring rate)"
        text += f"  {rate:.1f} {self.unit}/s"
        if done < total:
            text += f"  {format_duration((total - done) / rate)} left"
        return text

    def rate(self) -> float | None:
        """Files per second over the recent window; None until there is something to measure."""
        if len(self._samples) < 2:
            return None
        (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
        if t1 <= t0 or d1 <= d0:
            return None
        return (d1 - d0) / (t1 - t0)
