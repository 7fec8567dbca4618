"""Embeddings from an Ollama server through its own API (``/api/embed``), with the official
``ollama`` client (the ``ollama`` extra: ``pip install 'langchain-openclaw-memory[ollama]'``).

The server is ``embedding.base_url``, else ``OLLAMA_HOST``, else ``http://127.0.0.1:11434``;
the model ``embedding.model``, else ``nomic-embed-text``. Batching, retries (connection
failures, timeouts, 429 and 5xx; a missing model or another 4xx is not retried) and answer
checks are the hosted services' (:class:`~openclaw_memory.embeddings.services.
ServiceProvider`); the server truncates an input past the model's context (``truncate``)
instead of failing the batch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from openclaw_memory.embeddings.services import ServiceProvider
from openclaw_memory.errors import EmbeddingError
from openclaw_memory.redact import redact_url

__all__ = ["DEFAULT_HOST", "DEFAULT_MODEL", "MAX_BATCH_INPUTS", "OllamaProvider"]

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_MODEL = "nomic-embed-text"
MAX_BATCH_INPUTS = 64


class OllamaProvider(ServiceProvider):
    """``/api/embed`` of an Ollama server."""

    id = "ollama"
    name = "ollama embeddings"
    default_model = DEFAULT_MODEL
    key_variables = ("OLLAMA_API_KEY",)  # only for a server behind authentication
    extra = "ollama"
    max_batch = MAX_BATCH_INPUTS
    needs_key = False
    costly = False  # a local server: nothing is billed, vectors are stored with their chunks

    def endpoint(self) -> str:
        return self.settings.base_url or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST

    def _make_client(self, key: str) -> Any:
        import ollama

        return ollama.Client(host=self.endpoint(), timeout=self.settings.timeout_seconds,
                             headers=dict(self.settings.headers) or None)

    def _send(self, batch: list[str], query: bool) -> Sequence[Any]:
        options: dict[str, Any] = {}
        if self.settings.dimensions is not None:
            options["dimensions"] = self.settings.dimensions
        answer = self._client.embed(model=self.model, input=batch, truncate=True, **options)
        return list(getattr(answer, "embeddings", None) or [])

    def _error(self, exc: Exception) -> EmbeddingError | None:
        import ollama

        if isinstance(exc, ollama.ResponseError):
            status = int(getattr(exc, "status_code", -1))
            detail = str(getattr(exc, "error", exc))
            if status == 404:
                return EmbeddingError(f"{self.name}: HTTP 404: {detail[:300]} (pull the model "
                                      "first: ollama pull <model>)", status=status)
            return self._status(status, detail)
        if isinstance(exc, ConnectionError):  # the client's own, for a refused connection
            return EmbeddingError(f"{self.name}: cannot reach {redact_url(self.endpoint())}",
                                  retryable=True, unreachable=True)
        return None
