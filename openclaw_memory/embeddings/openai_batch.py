"""Large backfills through the OpenAI Batch API (``embedding.batch``): half the price of
online requests, for a sync that embeds many chunks at once.

One job per call: the texts' request batches become the lines of a JSONL file (uploaded with
``purpose="batch"``), a batch job over ``/v1/embeddings`` is created, polled every
``poll_interval_seconds`` up to ``timeout_minutes``, and its output file read back in order.
The job's ids are written to a small ledger in the state directory, keyed by a digest of the
file, before anything waits: a process killed while a job runs (or a sync that gave up after
``timeout_minutes``) finds the same job again next time instead of paying twice. A job that
failed, expired or was cancelled is forgotten, and the call falls back to online requests
(the sync completes; the log says why). Queries never go through a batch.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_memory.config import BatchSettings
from openclaw_memory.embeddings.base import FloatArray
from openclaw_memory.errors import EmbeddingError

__all__ = ["BatchJobs"]

logger = logging.getLogger(__name__)

_GIVE_UP = frozenset({"failed", "expired", "cancelled", "cancelling"})
_NAME = "openai batch embeddings"


class BatchJobs:
    """Submits, remembers, polls and reads embedding batch jobs for one provider."""

    def __init__(self, client: Any, model: str, settings: BatchSettings, ledger: Path, *,
                 dimensions: int | None = None,
                 parse: Callable[[bytes, int], FloatArray],
                 sleep: Callable[[float], object] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.model = model
        self.settings = settings
        self.ledger = ledger
        self.dimensions = dimensions
        self._parse = parse
        self._sleep = sleep
        self._clock = clock
        self.last_outcome: str | None = None

    def embed(self, texts: Sequence[str], spans: Sequence[tuple[int, int]]) -> FloatArray | None:
        """Vectors of ``texts`` (requests ``spans``) through one batch job; None when the
        job failed, expired or was cancelled (the caller embeds online instead)."""
        body: dict[str, Any] = {"model": self.model, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        lines = [json.dumps({"custom_id": f"r{n}", "method": "POST", "url": "/v1/embeddings",
                             "body": {**body, "input": list(texts[a:b])}})
                 for n, (a, b) in enumerate(spans)]
        payload = ("\n".join(lines) + "\n").encode("utf-8")
        key = hashlib.sha256(payload).hexdigest()
        job = self._job(key, payload)
        done = self._wait(key, job)
        if done is None:
            return None
        return self._read(done, spans)

    # -- the ledger ---------------------------------------------------------------------------
    def _ledger_file(self, key: str) -> Path:
        return self.ledger / f"{key}.json"

    def _job(self, key: str, payload: bytes) -> str:
        known = self._ledger_file(key)
        try:
            batch_id = str(json.loads(known.read_text(encoding="utf-8"))["batch_id"])
            logger.info("resuming embedding batch %s", batch_id)
            self.last_outcome = "resumed"
            return batch_id
        except (OSError, ValueError, KeyError):
            pass
        upload = self._call(lambda: self.client.files.create(
            file=("embeddings.jsonl", payload), purpose="batch"))
        batch = self._call(lambda: self.client.batches.create(
            input_file_id=upload.id, endpoint="/v1/embeddings", completion_window="24h"))
        self.ledger.mkdir(parents=True, exist_ok=True, mode=0o700)
        known.write_text(json.dumps({"batch_id": batch.id, "input_file_id": upload.id,
                                     "submitted_at": time.time()}), encoding="utf-8")
        self.last_outcome = "submitted"
        return str(batch.id)

    def _forget(self, key: str) -> None:
        self._ledger_file(key).unlink(missing_ok=True)

    # -- waiting and reading ------------------------------------------------------------------
    def _wait(self, key: str, batch_id: str) -> Any | None:
        deadline = self._clock() + self.settings.timeout_minutes * 60
        while True:
            batch = self._call(lambda: self.client.batches.retrieve(batch_id))
            status = str(getattr(batch, "status", ""))
            if status == "completed":
                self._forget(key)
                return batch
            if status in _GIVE_UP:
                self._forget(key)
                self.last_outcome = status
                logger.warning("embedding batch %s %s (%s): embedding online instead", batch_id,
                               status, _errors_of(batch))
                return None
            if not self.settings.wait:
                # Kept in the ledger: a later sync asking for the same texts collects it.
                raise _pending(f"job {batch_id} submitted ({status}); its vectors come with "
                               "a later sync")
            if self._clock() >= deadline:
                # Kept in the ledger: the next sync picks the same job up where this one left.
                raise _pending(f"job {batch_id} still {status or 'running'} after "
                               f"{self.settings.timeout_minutes:g} min; the next sync resumes it")
            self._sleep(self.settings.poll_interval_seconds)

    def _read(self, batch: Any, spans: Sequence[tuple[int, int]]) -> FloatArray:
        output = getattr(batch, "output_file_id", None)
        if not output:
            raise EmbeddingError(f"{_NAME}: job {batch.id} completed without an output file")
        raw = self._call(lambda: self.client.files.content(output)).read()
        answers: dict[str, Any] = {}
        for line in raw.decode("utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                answers[str(item.get("custom_id"))] = item
        parts = []
        for n, (a, b) in enumerate(spans):
            item = answers.get(f"r{n}")
            response = (item or {}).get("response") or {}
            if item is None or item.get("error") or response.get("status_code") != 200:
                detail = (item or {}).get("error") or response.get("body") or "missing"
                raise EmbeddingError(f"{_NAME}: request r{n} of job {batch.id} failed: "
                                     f"{str(detail)[:200]}")
            parts.append(self._parse(json.dumps(response.get("body")).encode(), b - a))
        self.last_outcome = "completed"
        return np.concatenate(parts, axis=0)

    def _call(self, fn: Callable[[], Any]) -> Any:
        import openai

        try:
            return fn()
        except openai.APIStatusError as exc:
            status = int(exc.status_code)
            raise EmbeddingError(f"{_NAME}: HTTP {status}: {str(exc.message)[:200]}",
                                 status=status, retryable=status in (408, 429) or status >= 500
                                 ) from None
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"{_NAME}: {type(exc).__name__}: {exc}", retryable=True) from None


def _pending(message: str) -> EmbeddingError:
    """A job still running: not an outage (the provider's breaker stays closed, so the next
    sync asks the batch again instead of going online); HTTP 202's meaning, accepted."""
    return EmbeddingError(f"{_NAME}: {message}", status=202, retryable=False)


def _errors_of(batch: Any) -> str:
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    return "; ".join(str(getattr(e, "message", e)) for e in errors[:3]) or "no detail"
