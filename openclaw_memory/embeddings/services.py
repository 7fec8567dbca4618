"""Embeddings from hosted services through their official clients: Mistral, Voyage, Gemini.

Each is an optional extra (``pip install 'langchain-openclaw-memory[mistral]'``, ``[voyage]``,
``[gemini]``). What they share is ours: batches (by count, each service's limit), a bound on
requests in flight, retries (:mod:`.retry`; the clients' own are off) of timeouts, connection
failures, 429 and 5xx, none of other 4xx, and validation of every answer. The key is
``embedding.api_key``, else the service's variable (``MISTRAL_API_KEY``, ``VOYAGE_API_KEY``,
``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``); ``embedding.base_url`` points a client at another
server (a proxy, or the scripted servers of the tests).

Documents and queries are embedded as the service asks where it tells them apart (Voyage's
``input_type``, Gemini's ``task_type``).
"""

from __future__ import annotations

import base64
import os
import threading
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray, provider_key_for
from openclaw_memory.embeddings.batch_jobs import BatchJobs
from openclaw_memory.embeddings.gemini_batch import GeminiBatches
from openclaw_memory.embeddings.retry import never_connected, retry_call
from openclaw_memory.errors import EmbeddingError, ProviderUnavailableError, install_hint
from openclaw_memory.redact import SAFE_HEADERS, redact_text
from openclaw_memory.store.paths import state_dir

__all__ = ["GeminiProvider", "MistralProvider", "ServiceProvider", "VoyageProvider"]


class ServiceProvider(EmbeddingProvider):
    """What the hosted services share; a subclass sends one batch with its client."""

    name: str
    default_model: str
    key_variables: tuple[str, ...]
    extra: str
    max_batch: int

    needs_key: bool = True
    """False for a local server (Ollama): no key, nothing billed."""

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.settings = settings
        self.model = settings.model or self.default_model
        self.max_input_tokens = 8192  # the services truncate longer inputs themselves
        key = (settings.api_key.get_secret_value() if settings.api_key is not None else None) or next(
            (os.environ[v] for v in self.key_variables if os.environ.get(v)), None) or ""
        if not key and self.needs_key:
            raise ProviderUnavailableError(
                f"{self.name}: no API key (set embedding.api_key or "
                f"{' or '.join(self.key_variables)})")
        try:
            self._client = self._make_client(key)
        except ImportError:
            raise ProviderUnavailableError(f"{self.name} need the official client: "
                                           f"{install_hint(self.extra)}") from None
        self._key = key
        super().__init__(dims=settings.dimensions)
        self.provider_key = provider_key_for(self.id, headers=settings.headers, model=self.model,
                                             base_url=self.endpoint(),
                                             dimensions=settings.dimensions)
        self._slots = threading.BoundedSemaphore(settings.concurrency)

    def endpoint(self) -> str | None:
        """The server the vectors come from (part of what identifies them)."""
        return self.settings.base_url

    @abstractmethod
    def _make_client(self, key: str) -> Any: ...

    @abstractmethod
    def _send(self, batch: list[str], query: bool) -> Sequence[Any]:
        """The service's vectors of ``batch`` (lists of numbers, or base64 float32)."""

    @abstractmethod
    def _error(self, exc: Exception) -> EmbeddingError | None:
        """``exc`` as an :class:`EmbeddingError` when it is the client's, else None."""

    def _embed(self, texts: list[str]) -> FloatArray:
        s = self.settings
        query = self.in_query()
        retries = 0 if self.probing() else (
            min(s.max_retries, s.query_max_retries) if query else s.max_retries)
        cap = min(s.retry_max_seconds, 1.0) if query else s.retry_max_seconds
        parts = [retry_call(self._poster(texts[i:i + self.max_batch], query),
                            max_retries=retries, base=s.retry_base_seconds, cap=cap)
                 for i in range(0, len(texts), self.max_batch)]
        widths = sorted({part.shape[1] for part in parts})
        if len(widths) > 1:
            raise self._malformed(f"batches returned differing dimensions {widths}")
        return np.concatenate(parts, axis=0)

    def _poster(self, batch: list[str], query: bool) -> Callable[[], FloatArray]:
        return lambda: self._post(batch, query)

    def _post(self, batch: list[str], query: bool) -> FloatArray:
        import httpx

        try:
            with self._slots:
                vectors = self._send([t or " " for t in batch], query)
        except EmbeddingError:
            raise
        except httpx.TimeoutException:
            raise EmbeddingError(f"{self.name}: request timed out after "
                                 f"{self.settings.timeout_seconds:g} s", retryable=True) from None
        except httpx.TransportError as exc:
            raise EmbeddingError(f"{self.name}: connection failed: {type(exc).__name__}",
                                 retryable=True,
                                 unreachable=never_connected(exc)) from None
        except Exception as exc:  # the client's own errors, translated by the subclass
            translated = self._error(exc)
            if translated is None and isinstance(exc, AttributeError | KeyError | TypeError
                                                 | ValueError | IndexError):
                raise self._malformed(f"the client could not read it ({type(exc).__name__})"
                                      ) from None
            if translated is None:
                raise EmbeddingError(f"{self.name}: {type(exc).__name__}: "
                                     f"{self._redact(str(exc))[:300]}") from None
            raise translated from None
        return self._rows(vectors, len(batch))

    def _redact(self, text: str) -> str:
        """``text`` without the key, credential-bearing headers' values or anything shaped
        like a key (a server may echo what it was sent); cut short only after this."""
        headers = [v for k, v in self.settings.headers.items() if k.lower() not in SAFE_HEADERS]
        return redact_text(text, [self._key, *headers])

    def _status(self, status: int, detail: str) -> EmbeddingError:
        if 200 <= status < 300:  # the client could not read a successful answer
            return self._malformed(self._redact(detail)[:300])
        retryable = status in (408, 409, 429) or status >= 500
        return EmbeddingError(f"{self.name}: HTTP {status}: {self._redact(detail)[:300]}",
                              status=status, retryable=retryable)

    def _rows(self, vectors: Any, count: int) -> FloatArray:
        if not isinstance(vectors, list | tuple) or len(vectors) != count:
            got = len(vectors) if isinstance(vectors, list | tuple) else "no"
            raise self._malformed(f"{got} embeddings for {count} inputs")
        rows = []
        for vector in vectors:
            if isinstance(vector, str):  # base64 little-endian float32
                try:
                    rows.append(np.frombuffer(base64.b64decode(vector, validate=True), dtype="<f4"))
                except ValueError:
                    raise self._malformed("an embedding is not valid base64") from None
                continue
            array = np.asarray(vector) if isinstance(vector, list | tuple) else None
            if array is None or array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iuf":
                raise self._malformed("an embedding is not a list of numbers")
            rows.append(array.astype(np.float32))
        if len({row.shape[0] for row in rows}) != 1:
            raise self._malformed("embeddings of differing dimensions in one answer")
        return np.stack(rows).astype(np.float32)

    def _malformed(self, reason: str) -> EmbeddingError:
        return EmbeddingError(f"{self.name}: malformed response: {reason}")


class MistralProvider(ServiceProvider):
    """Mistral's ``/v1/embeddings`` (``mistral-embed``) through ``mistralai``."""

    id = "mistral"
    name = "mistral embeddings"
    default_model = "mistral-embed"
    key_variables = ("MISTRAL_API_KEY",)
    extra = "mistral"
    max_batch = 128

    def _make_client(self, key: str) -> Any:
        from mistralai.client import Mistral

        return Mistral(api_key=key, server_url=self.settings.base_url,
                       timeout_ms=int(self.settings.timeout_seconds * 1000))

    def _send(self, batch: list[str], query: bool) -> Sequence[Any]:
        options: dict[str, Any] = {}
        if self.settings.dimensions is not None:
            options["output_dimension"] = self.settings.dimensions
        if self.settings.headers:
            options["http_headers"] = dict(self.settings.headers)
        answer = self._client.embeddings.create(model=self.model, inputs=batch, **options)
        data = sorted(getattr(answer, "data", None) or [], key=lambda d: d.index or 0)
        return [d.embedding for d in data]

    def _error(self, exc: Exception) -> EmbeddingError | None:
        status = getattr(exc, "status_code", None)
        if isinstance(status, int):
            return self._status(status, str(getattr(exc, "body", "") or exc))
        return None


class VoyageProvider(ServiceProvider):
    """Voyage AI's ``/v1/embeddings`` (``voyage-4-large``) through ``voyageai``."""

    id = "voyage"
    name = "voyage embeddings"
    default_model = "voyage-4-large"
    key_variables = ("VOYAGE_API_KEY",)
    extra = "voyage"
    max_batch = 128

    def _make_client(self, key: str) -> Any:
        from voyageai.client import Client

        return Client(api_key=key, max_retries=0, timeout=self.settings.timeout_seconds,
                               base_url=self.settings.base_url)

    def _send(self, batch: list[str], query: bool) -> Sequence[Any]:
        answer = self._client.embed(batch, model=self.model,
                                    input_type="query" if query else "document",
                                    truncation=True, output_dimension=self.settings.dimensions)
        return list(getattr(answer, "embeddings", None) or [])

    def _error(self, exc: Exception) -> EmbeddingError | None:
        import voyageai.error as verr

        if isinstance(exc, verr.VoyageError):
            status = getattr(exc, "http_status", None)
            if isinstance(status, int):
                return self._status(status, getattr(exc, "user_message", None) or str(exc))
            retryable = isinstance(exc, verr.APIConnectionError | verr.Timeout
                                   | verr.ServiceUnavailableError | verr.RateLimitError)
            return EmbeddingError(f"{self.name}: {type(exc).__name__}: {exc}"[:300],
                                  retryable=retryable)
        return None


class GeminiProvider(ServiceProvider):
    """Gemini's ``batchEmbedContents`` (``gemini-embedding-001``) through ``google-genai``."""

    id = "gemini"
    name = "gemini embeddings"
    default_model = "gemini-embedding-001"
    key_variables = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    extra = "gemini"
    max_batch = 100

    def __init__(self, settings: EmbeddingSettings) -> None:
        super().__init__(settings)
        self.batches = BatchJobs(
            GeminiBatches(self._client, self.model, dimensions=settings.dimensions,
                          rows=self._rows),
            settings.batch, state_dir() / "gemini-batches")

    def _embed(self, texts: list[str]) -> FloatArray:
        batch = self.settings.batch
        if (batch.enabled and len(texts) >= batch.min_inputs and not self.in_query()
                and not self.probing()):
            spans = [(i, min(i + self.max_batch, len(texts)))
                     for i in range(0, len(texts), self.max_batch)]
            return self.batches.embed(texts, spans, lambda part: super(GeminiProvider, self)
                                      ._embed(part.texts))
        return super()._embed(texts)

    def _make_client(self, key: str) -> Any:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(base_url=self.settings.base_url,
                                    timeout=int(self.settings.timeout_seconds * 1000),
                                    headers=dict(self.settings.headers) or None)
        return genai.Client(api_key=key, http_options=options)

    def _send(self, batch: list[str], query: bool) -> Sequence[Any]:
        from google.genai import types

        config = types.EmbedContentConfig(
            task_type="RETRIEVAL_QUERY" if query else "RETRIEVAL_DOCUMENT",
            output_dimensionality=self.settings.dimensions)
        answer = self._client.models.embed_content(model=self.model, contents=batch,
                                                   config=config)
        return [e.values for e in (getattr(answer, "embeddings", None) or [])]

    def _error(self, exc: Exception) -> EmbeddingError | None:
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            return self._status(int(exc.code), str(exc.message or exc))
        return None
