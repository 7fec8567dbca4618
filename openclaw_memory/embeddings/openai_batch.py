"""The OpenAI Batch API as a :class:`~openclaw_memory.embeddings.batch_jobs.BatchService`:
a job's request batches become the lines of a JSONL file (uploaded with ``purpose="batch"``),
a batch job over ``/v1/embeddings`` is created, polled, and its output file read back in order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from openclaw_memory.embeddings.base import FloatArray
from openclaw_memory.embeddings.batch_jobs import JobPart, JobState
from openclaw_memory.errors import EmbeddingError

__all__ = ["OpenAIBatches"]

_GIVE_UP = frozenset({"failed", "expired", "cancelled", "cancelling"})


class OpenAIBatches:
    """Jobs of one OpenAI-compatible client and model."""

    name = "openai batch embeddings"
    max_inputs = 50_000  # the Batch API's limit of embedding inputs per job
    max_bytes = 190 * 1024 * 1024  # of the input file (the limit is 200 MB)

    def __init__(self, client: Any, model: str, *, dimensions: int | None,
                 parse: Callable[[bytes, int], FloatArray]) -> None:
        self.client = client
        self.model = model
        self.dimensions = dimensions
        self._parse = parse

    def _payload(self, part: JobPart) -> bytes:
        body: dict[str, Any] = {"model": self.model, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        lines = [json.dumps({"custom_id": f"r{n}", "method": "POST", "url": "/v1/embeddings",
                             "body": {**body, "input": part.texts[a:b]}})
                 for n, (a, b) in enumerate(part.spans)]
        return ("\n".join(lines) + "\n").encode("utf-8")

    def digest(self, part: JobPart) -> str:
        return hashlib.sha256(self._payload(part)).hexdigest()

    def submit(self, part: JobPart) -> dict[str, Any]:
        payload = self._payload(part)
        upload = self._call(lambda: self.client.files.create(
            file=("embeddings.jsonl", payload), purpose="batch"))
        batch = self._call(lambda: self.client.batches.create(
            input_file_id=upload.id, endpoint="/v1/embeddings", completion_window="24h"))
        return {"job": str(batch.id), "input_file_id": str(upload.id)}

    def state(self, job: str) -> JobState:
        batch = self._call(lambda: self.client.batches.retrieve(job))
        status = str(getattr(batch, "status", "") or "running")
        return JobState(status, done=status == "completed", failed=status in _GIVE_UP,
                        detail=_errors_of(batch), handle=batch)

    def read(self, handle: Any, part: JobPart) -> FloatArray:
        output = getattr(handle, "output_file_id", None)
        if not output:
            raise EmbeddingError(f"{self.name}: job {handle.id} completed without an output file")
        raw = self._call(lambda: self.client.files.content(output)).read()
        answers: dict[str, Any] = {}
        for line in raw.decode("utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                answers[str(item.get("custom_id"))] = item
        rows = []
        for n, (a, b) in enumerate(part.spans):
            item = answers.get(f"r{n}")
            response = (item or {}).get("response") or {}
            if item is None or item.get("error") or response.get("status_code") != 200:
                detail = (item or {}).get("error") or response.get("body") or "missing"
                raise EmbeddingError(f"{self.name}: request r{n} of job {handle.id} failed: "
                                     f"{str(detail)[:200]}")
            rows.append(self._parse(json.dumps(response.get("body")).encode(), b - a))
        return np.concatenate(rows, axis=0)

    def _call(self, fn: Callable[[], Any]) -> Any:
        import openai

        try:
            return fn()
        except openai.APIStatusError as exc:
            status = int(exc.status_code)
            raise EmbeddingError(f"{self.name}: HTTP {status}: {str(exc.message)[:200]}",
                                 status=status, retryable=status in (408, 429) or status >= 500
                                 ) from None
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"{self.name}: {type(exc).__name__}: {exc}", retryable=True) from None


def _errors_of(batch: Any) -> str:
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    return "; ".join(str(getattr(e, "message", e)) for e in errors[:3]) or "no detail"
