"""Embeddings from an Ollama server through its own API (``/api/embed``), with the official
``ollama`` client (the ``ollama`` extra: ``pip install 'openclaw-memory[ollama]'``).

The server is ``embedding.base_url``, else ``OLLAMA_HOST``, else ``http://127.0.0.1:11434``;
the model ``embedding.model``, else ``nomic-embed-text``. Texts go in batches of
:data:`MAX_BATCH_INPUTS`, each with our retries (:mod:`.retry`: connection failures, timeouts,
429 and 5xx are retried with backoff; a missing model or another 4xx is not), and the server
truncates an input past the model's context (``truncate``) instead of failing the batch.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray, provider_key_for
from openclaw_memory.embeddings.retry import retry_call
from openclaw_memory.errors import EmbeddingError, ProviderUnavailableError
from openclaw_memory.redact import redact_url

__all__ = ["DEFAULT_HOST", "DEFAULT_MODEL", "MAX_BATCH_INPUTS", "OllamaProvider"]

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_MODEL = "nomic-embed-text"
MAX_BATCH_INPUTS = 64
_NAME = "ollama embeddings"


class OllamaProvider(EmbeddingProvider):
    """``/api/embed`` of an Ollama server."""

    id = "ollama"
    costly = False  # a local server: nothing is billed, vectors are stored with their chunks

    def __init__(self, settings: EmbeddingSettings) -> None:
        try:
            import ollama
        except ImportError:
            raise ProviderUnavailableError(
                f"{_NAME} need the ollama package: pip install 'openclaw-memory[ollama]'") from None
        self.settings = settings
        self.model = settings.model or DEFAULT_MODEL
        self.max_input_tokens = 8192  # the server truncates to the model's own context
        self.host = settings.base_url or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self._client = ollama.Client(host=self.host, timeout=settings.timeout_seconds,
                                     headers=dict(settings.headers) or None)
        super().__init__(dims=settings.dimensions)
        self.provider_key = provider_key_for(self.id, headers=settings.headers, model=self.model,
                                             base_url=self.host, dimensions=settings.dimensions)
        self._slots = threading.BoundedSemaphore(settings.concurrency)

    def _embed(self, texts: list[str]) -> FloatArray:
        s = self.settings
        retries = 0 if self.probing() else (
            min(s.max_retries, s.query_max_retries) if self.in_query() else s.max_retries)
        cap = min(s.retry_max_seconds, 1.0) if self.in_query() else s.retry_max_seconds
        parts = [retry_call(self._poster(texts[i:i + MAX_BATCH_INPUTS]), max_retries=retries,
                            base=s.retry_base_seconds, cap=cap)
                 for i in range(0, len(texts), MAX_BATCH_INPUTS)]
        return np.concatenate(parts, axis=0)

    def _poster(self, batch: list[str]) -> Callable[[], FloatArray]:
        return lambda: self._post(batch)

    def _post(self, batch: list[str]) -> FloatArray:
        import httpx
        import ollama
        from pydantic import ValidationError

        options: dict[str, Any] = {}
        if self.settings.dimensions is not None:
            options["dimensions"] = self.settings.dimensions
        try:
            with self._slots:
                answer = self._client.embed(model=self.model, input=[t or " " for t in batch],
                                            truncate=True, **options)
        except ollama.ResponseError as exc:
            raise _status_error(exc) from None
        except (ConnectionError, httpx.TransportError) as exc:
            raise EmbeddingError(f"{_NAME}: cannot reach {redact_url(self.host)}: "
                                 f"{type(exc).__name__}", retryable=True) from None
        except ValidationError:
            raise EmbeddingError(f"{_NAME}: malformed response (no list of embeddings)") from None
        return _rows(getattr(answer, "embeddings", None), len(batch))


def _status_error(exc: Any) -> EmbeddingError:
    status = int(getattr(exc, "status_code", -1))
    detail = str(getattr(exc, "error", exc))[:300]
    if status == 404:
        return EmbeddingError(f"{_NAME}: HTTP 404: {detail} (pull the model first: ollama pull "
                              "<model>)", status=status)
    retryable = status in (408, 429) or status >= 500
    return EmbeddingError(f"{_NAME}: HTTP {status}: {detail}", status=status, retryable=retryable)


def _rows(embeddings: Any, count: int) -> FloatArray:
    if not isinstance(embeddings, list | tuple) or len(embeddings) != count:
        got = len(embeddings) if isinstance(embeddings, list | tuple) else "no"
        raise EmbeddingError(f"{_NAME}: malformed response: {got} embeddings for {count} inputs")
    try:
        rows = np.asarray(embeddings, dtype=np.float32)
    except (TypeError, ValueError):
        raise EmbeddingError(f"{_NAME}: malformed response: embeddings are not lists of "
                             "numbers of one width") from None
    if rows.ndim != 2 or rows.shape[1] == 0:
        raise EmbeddingError(f"{_NAME}: malformed response: embeddings are not lists of numbers")
    return rows
