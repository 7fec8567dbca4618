"""Gemini's async batch embeddings as a :class:`~openclaw_memory.embeddings.batch_jobs.BatchService`:
a job is created by ``asyncBatchEmbedContent`` with its texts inlined (``google-genai``'s
``batches.create_embeddings``), polled with ``batches.get``, and its inlined responses read
back in request order. Inlined requests are limited to 20 MB per job, so a job carries at
most 16 MB of text.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from openclaw_memory.embeddings.base import FloatArray
from openclaw_memory.embeddings.batch_jobs import JobPart, JobState
from openclaw_memory.errors import EmbeddingError

__all__ = ["GeminiBatches"]

_DONE = "JOB_STATE_SUCCEEDED"
_GIVE_UP = frozenset({"JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED",
                      "JOB_STATE_PARTIALLY_SUCCEEDED"})


class GeminiBatches:
    """Jobs of one ``google-genai`` client and model."""

    name = "gemini batch embeddings"
    max_inputs = 10_000
    max_bytes = 16 * 1024 * 1024

    def __init__(self, client: Any, model: str, *, dimensions: int | None,
                 rows: Callable[[Any, int], FloatArray]) -> None:
        self.client = client
        self.model = model
        self.dimensions = dimensions
        self._rows = rows

    def digest(self, part: JobPart) -> str:
        what = {"model": self.model, "dimensions": self.dimensions, "texts": part.texts}
        return hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()

    def submit(self, part: JobPart) -> dict[str, Any]:
        source = {"inlined_requests": {
            "contents": [t or " " for t in part.texts],
            "config": {"task_type": "RETRIEVAL_DOCUMENT",
                       "output_dimensionality": self.dimensions}}}
        with warnings.catch_warnings():  # the client marks the method experimental
            warnings.simplefilter("ignore")
            job = self._call(lambda: self.client.batches.create_embeddings(
                model=self.model, src=source))
        return {"job": str(job.name)}

    def state(self, job: str) -> JobState:
        found = self._call(lambda: self.client.batches.get(name=job))
        state = getattr(found, "state", None)
        label = str(getattr(state, "value", state) or "JOB_STATE_PENDING")
        error = getattr(found, "error", None)
        return JobState(label.removeprefix("JOB_STATE_").lower(), done=label == _DONE,
                        failed=label in _GIVE_UP, detail=str(error or ""), handle=found)

    def read(self, handle: Any, part: JobPart) -> FloatArray:
        answers = getattr(getattr(handle, "dest", None), "inlined_embed_content_responses",
                          None) or []
        if len(answers) != len(part.texts):
            raise EmbeddingError(f"{self.name}: job {handle.name} answered {len(answers)} of "
                                 f"{len(part.texts)} texts")
        vectors = []
        for n, answer in enumerate(answers):
            error = _field(answer, "error")
            embedding = _field(_field(answer, "response"), "embedding")
            values = _field(embedding, "values")
            if error or values is None:
                raise EmbeddingError(f"{self.name}: text {n} of job {handle.name} failed: "
                                     f"{str(error or 'no embedding')[:200]}")
            vectors.append(values)
        return np.asarray(self._rows(vectors, len(part.texts)), np.float32)

    def _call(self, fn: Callable[[], Any]) -> Any:
        import httpx
        from google.genai import errors

        try:
            return fn()
        except httpx.TransportError as exc:
            raise EmbeddingError(f"{self.name}: connection failed: {type(exc).__name__}",
                                 retryable=True) from None
        except errors.APIError as exc:
            status = int(exc.code)
            raise EmbeddingError(f"{self.name}: HTTP {status}: {str(exc.message or exc)[:200]}",
                                 status=status, retryable=status in (408, 429) or status >= 500
                                 ) from None


def _field(value: Any, name: str) -> Any:
    """A field of a client model or of a plain dict (the client keeps some answers raw)."""
    if value is None:
        return None
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)
