"""Large backfills through a service's batch API (``embedding.batch``): half the price of
online requests, for a sync that embeds many chunks at once.

What every batch API shares is here; what differs (how a job is submitted, polled and read)
is a :class:`BatchService`: the OpenAI Batch API (``openai_batch.py``) and Gemini's async
batch embeddings (``gemini_batch.py``). A call's request batches are split into jobs within
the service's limits (OpenAI takes 50 000 inputs per job), at most ``concurrency`` jobs are
in flight at once, each polled every ``poll_interval_seconds`` up to ``timeout_minutes``.

Each job's id is written to a small ledger in the state directory, keyed by a digest of what
it embeds, before anything waits: a process killed while jobs run (or a sync that gave up
after ``timeout_minutes``) finds the same jobs again next time instead of paying twice. A
job that failed, expired or was cancelled is forgotten and its texts are embedded online
(the sync completes; the log says why); the other jobs' vectors are kept. Queries never go
through a batch.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from openclaw_memory.config import BatchSettings
from openclaw_memory.embeddings.base import FloatArray
from openclaw_memory.errors import EmbeddingError

__all__ = ["BatchJobs", "BatchService", "JobPart", "JobState", "Online"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobPart:
    """The texts of one job and its request batches (``spans``, over ``texts``)."""

    texts: list[str]
    spans: list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class JobState:
    """A job as last polled: ``done`` (its results can be read), ``failed`` (the service's
    word for it: failed, expired, cancelled), else still running as ``label``."""

    label: str
    done: bool = False
    failed: bool = False
    detail: str = ""
    handle: Any = None


class BatchService(Protocol):
    """One service's batch API, as :class:`BatchJobs` drives it."""

    name: str
    max_inputs: int
    max_bytes: int

    def digest(self, part: JobPart) -> str:
        """What identifies the job that embeds ``part`` (the ledger's key)."""

    def submit(self, part: JobPart) -> dict[str, Any]:
        """Start a job; what the ledger keeps of it, with its id under ``"job"``."""

    def state(self, job: str) -> JobState: ...

    def read(self, handle: Any, part: JobPart) -> FloatArray:
        """The vectors of a completed job, in the order of ``part.texts``."""


Online = Callable[[JobPart], FloatArray]
"""Embeds a part online (a job of it failed)."""


class BatchJobs:
    """Submits, remembers, polls and reads the jobs of one provider's backfills."""

    def __init__(self, service: BatchService, settings: BatchSettings, ledger: Path, *,
                 sleep: Callable[[float], object] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.service = service
        self.settings = settings
        self.ledger = ledger
        self._sleep = sleep
        self._clock = clock
        self.last_outcome: str | None = None
        self.submitted = 0

    def plan(self, texts: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[JobPart]:
        """The jobs ``spans`` are split into: whole request batches, each job within the
        service's count and size limits."""
        parts: list[JobPart] = []
        current: list[tuple[int, int]] = []
        count = size = 0
        for a, b in spans:
            grow = sum(len(t.encode("utf-8")) + 64 for t in texts[a:b])
            if current and (count + b - a > self.service.max_inputs
                            or size + grow > self.service.max_bytes):
                parts.append(_part(texts, current))
                current, count, size = [], 0, 0
            current.append((a, b))
            count, size = count + b - a, size + grow
        if current:
            parts.append(_part(texts, current))
        return parts

    def embed(self, texts: Sequence[str], spans: Sequence[tuple[int, int]],
              online: Online) -> FloatArray:
        """Vectors of ``texts`` (requests ``spans``) through batch jobs, in order; a part
        whose job failed is embedded by ``online``."""
        parts = self.plan(texts, spans)
        keys = [self.service.digest(p) for p in parts]
        results: list[FloatArray | None] = [None] * len(parts)
        waiting = deque(range(len(parts)))
        running: dict[int, str] = {}
        deadline = self._clock() + self.settings.timeout_minutes * 60
        self.last_outcome = None
        while True:
            while waiting and len(running) < self.settings.concurrency:
                i = waiting.popleft()
                running[i] = self._job(keys[i], parts[i])
            for i, job in list(running.items()):
                state = self.service.state(job)
                if state.done:
                    results[i] = self.service.read(state.handle, parts[i])
                elif state.failed:
                    self.last_outcome = state.label
                    logger.warning("%s: job %s %s (%s): embedding its %d texts online",
                                   self.service.name, job, state.label,
                                   state.detail or "no detail", len(parts[i].texts))
                    results[i] = online(parts[i])
                else:
                    continue
                self._forget(keys[i])
                del running[i]
            if not running and not waiting:
                break
            if waiting and len(running) < self.settings.concurrency:
                continue  # a job ended: its slot goes to the next one before any wait
            self._pause(running, deadline)
        self.last_outcome = self.last_outcome or "completed"
        return np.concatenate([r for r in results if r is not None], axis=0)

    def _pause(self, running: dict[int, str], deadline: float) -> None:
        jobs = ", ".join(running.values())
        if not self.settings.wait:
            # Kept in the ledger: a later sync asking for the same texts collects them.
            raise _pending(self.service.name, f"jobs {jobs} submitted; their vectors come "
                                              "with a later sync")
        if self._clock() >= deadline:
            # Kept in the ledger: the next sync picks the same jobs up where this one left.
            raise _pending(self.service.name, f"jobs {jobs} still running after "
                           f"{self.settings.timeout_minutes:g} min; the next sync resumes them")
        self._sleep(self.settings.poll_interval_seconds)

    # -- the ledger ---------------------------------------------------------------------------
    def _ledger_file(self, key: str) -> Path:
        return self.ledger / f"{key}.json"

    def _job(self, key: str, part: JobPart) -> str:
        known = self._ledger_file(key)
        try:
            job = str(json.loads(known.read_text(encoding="utf-8"))["job"])
            logger.info("%s: resuming job %s", self.service.name, job)
            return job
        except (OSError, ValueError, KeyError):
            pass
        record = self.service.submit(part)
        self.ledger.mkdir(parents=True, exist_ok=True, mode=0o700)
        known.write_text(json.dumps({**record, "submitted_at": time.time()}), encoding="utf-8")
        self.submitted += 1
        return str(record["job"])

    def _forget(self, key: str) -> None:
        self._ledger_file(key).unlink(missing_ok=True)


def _part(texts: Sequence[str], spans: list[tuple[int, int]]) -> JobPart:
    first = spans[0][0]
    return JobPart(list(texts[first:spans[-1][1]]), [(a - first, b - first) for a, b in spans])


def _pending(name: str, message: str) -> EmbeddingError:
    """Jobs still running: not an outage (the provider's breaker stays closed, so the next
    sync asks the batch again instead of going online); HTTP 202's meaning, accepted."""
    return EmbeddingError(f"{name}: {message}", status=202, retryable=False)
