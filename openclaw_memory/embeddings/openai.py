"""Embeddings from OpenAI or any OpenAI-compatible ``/v1/embeddings`` endpoint.

The official client does the HTTP; everything around it is ours: token-budgeted batches,
a bound on requests in flight, retries (the client's own are off so that waits, the
``Retry-After`` advice and the attempt budget live in one place, :mod:`.retry`), and strict
validation of the response body. Bodies are parsed by us rather than by the client so that a
malformed answer from a home-made server becomes a clear :class:`EmbeddingError` instead of
an ``AttributeError`` deep inside pydantic.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import numpy as np

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.base import (
    SECRET_HEADERS,
    EmbeddingProvider,
    FloatArray,
    provider_key_for,
)
from openclaw_memory.embeddings.batch_jobs import BatchJobs, JobPart
from openclaw_memory.embeddings.openai_batch import OpenAIBatches
from openclaw_memory.embeddings.retry import never_connected, parse_retry_after, retry_call
from openclaw_memory.errors import EmbeddingError, ProviderUnavailableError
from openclaw_memory.redact import SAFE_HEADERS, redact_text, url_secrets
from openclaw_memory.store.paths import state_dir

if TYPE_CHECKING:
    from openai import OpenAI

__all__ = [
    "DEFAULT_MODEL",
    "OpenAIProvider",
    "api_key_for",
    "is_local_url",
    "plan_batches",
]

DEFAULT_MODEL = "text-embedding-3-small"
MAX_INPUT_TOKENS = 8191  # every OpenAI embedding model
MAX_BATCH_INPUTS = 2048  # the API refuses more inputs per request
# The v3 and ada models count with cl100k_base; for other servers it is a close estimate.
COUNT_ENCODING = "cl100k_base"
LOCAL_SERVER_KEY = "not-needed"  # the client insists on a key; local servers ignore it
_KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_NAME = "openai embeddings"

Sleep = Callable[[float], object]


def is_local_url(url: str) -> bool:
    """True for loopback, ``localhost`` and private-network hosts (Ollama, LM Studio, ...)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def api_key_for(settings: EmbeddingSettings) -> str | None:
    """The key to send: configured, else ``OPENAI_API_KEY``, else a dummy for local servers.

    A credential in ``settings.headers`` (e.g. Azure's ``api-key``) also counts, then the
    client gets the dummy key because it refuses to start without one.
    """
    if settings.api_key is not None and settings.api_key.get_secret_value():
        return settings.api_key.get_secret_value()
    if os.environ.get("OPENAI_API_KEY"):
        return os.environ["OPENAI_API_KEY"]
    if any(name.lower() in SECRET_HEADERS for name in settings.headers):
        return LOCAL_SERVER_KEY
    if settings.base_url and is_local_url(settings.base_url):
        return LOCAL_SERVER_KEY
    return None


@dataclass(frozen=True, slots=True)
class _Budget:
    """Retries of one call: how many, the longest single wait, the rate window (None: the
    default, for indexing)."""

    retries: int
    cap: float
    window: float | None


def plan_batches(counts: Sequence[int], budget: int, max_inputs: int) -> list[tuple[int, int]]:
    """Contiguous [start, end) spans whose token counts sum to <= ``budget``.

    A single text over the budget goes alone (it was already cut to the model limit), so
    every text lands in exactly one span and order is kept.
    """
    spans: list[tuple[int, int]] = []
    start, total = 0, 0
    for index, count in enumerate(counts):
        full = index > start and (total + count > budget or index - start >= max_inputs)
        if full:
            spans.append((start, index))
            start, total = index, 0
        total += count
    if start < len(counts):
        spans.append((start, len(counts)))
    return spans


class OpenAIProvider(EmbeddingProvider):
    """``/v1/embeddings`` of OpenAI or a compatible server (``settings.base_url``).

    ``sleep`` and ``rng`` exist for tests: they replace the backoff wait and its jitter.
    """

    id = "openai"

    def __init__(
        self,
        settings: EmbeddingSettings,
        *,
        sleep: Sleep | None = None,
        rng: Callable[[], float] = random.random,
    ) -> None:
        key = api_key_for(settings)
        if key is None:
            raise ProviderUnavailableError(f"{_NAME}: no API key (set embedding.api_key or OPENAI_API_KEY)")
        self.settings = settings
        self.model = settings.model or DEFAULT_MODEL
        self.max_input_tokens = MAX_INPUT_TOKENS
        self._client = _make_client(settings, key)
        self._key = key
        base_url = str(self._client.base_url).rstrip("/")
        known = _KNOWN_DIMS.get(self.model) if settings.base_url is None else None
        super().__init__(dims=settings.dimensions or known)
        self.base_url = base_url
        self.provider_key = provider_key_for(
            self.id,
            headers=settings.headers,
            model=self.model,
            base_url=base_url,
            dimensions=settings.dimensions,
        )
        self._sleep = sleep
        self._rng = rng
        # Bounds requests in flight across all callers, not just within one call.
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        # Vectors are asked for as base64 float32 (as OpenAI's own client does): a quarter
        # of the bytes of decimal floats, and no number parsing. Many compatible servers
        # ignore the field and send floats (parsed as well); one that refuses it is asked in
        # floats from then on (:meth:`_post_once`).
        self._packed = True
        self.batches = BatchJobs(
            OpenAIBatches(self._client, self.model, dimensions=settings.dimensions,
                          parse=lambda body, count: parse_embeddings(body, count, self.dims,
                                                                     settings.dimensions)),
            settings.batch, state_dir() / "openai-batches")

    # -- embedding --------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> FloatArray:
        fitted, counts = _fit_texts(texts)
        spans = plan_batches(counts, self.settings.batch_max_tokens, MAX_BATCH_INPUTS)
        batch = self.settings.batch
        if (batch.enabled and len(texts) >= batch.min_inputs and not self.in_query()
                and not self.probing()):
            return self.batches.embed(fitted, spans, self._online)
        return self._online(JobPart(fitted, spans))

    def _online(self, part: JobPart) -> FloatArray:
        """``part``'s request batches as online requests."""
        rows = self._run_spans([part.texts[start:end] for start, end in part.spans])
        widths = sorted({row.shape[1] for row in rows})
        if len(widths) > 1:  # possible on the first call, before any width is known
            raise _malformed(f"batches of one call returned differing dimensions {widths}")
        return np.concatenate(rows, axis=0)

    def _run_spans(self, batches: list[list[str]]) -> list[FloatArray]:
        cancelled = threading.Event()
        s = self.settings
        # Decided in the caller's thread (the batches run in a pool's): a single try while
        # the breaker holds the endpoint as down, few for a search's query.
        retries = _Budget(0, 0.0, 0.0) if self.probing() else (
            _Budget(min(s.max_retries, s.query_max_retries), min(s.retry_max_seconds, 1.0), 0.0)
            if self.in_query() else _Budget(s.max_retries, s.retry_max_seconds, None))
        if len(batches) == 1:
            return [self._request(batches[0], cancelled, retries)]
        workers = min(self.settings.concurrency, len(batches))
        with ThreadPoolExecutor(workers, thread_name_prefix="openclaw-embed") as pool:
            futures = [pool.submit(self._request, batch, cancelled, retries)
                       for batch in batches]
            wait(futures, return_when=FIRST_EXCEPTION)
            failed = _first_failure(futures)
            if failed is not None:
                # Stop the other batches' retries early: the call fails anyway.
                cancelled.set()
                for future in futures:
                    future.cancel()
                raise failed
        return [future.result() for future in futures]

    def _request(self, batch: list[str], cancelled: threading.Event,
                 budget: _Budget) -> FloatArray:
        s = self.settings
        # A query's retries wait a second at most and never for the rate window: an agent
        # waits on them, and keyword-only search is an answer too.
        window = {} if budget.window is None else {"window": budget.window}
        return retry_call(
            lambda: self._post_once(batch),
            max_retries=budget.retries,
            base=s.retry_base_seconds,
            cap=budget.cap,
            **window,
            sleep=self._make_sleep(cancelled),
            rng=self._rng,
        )

    def _make_sleep(self, cancelled: threading.Event) -> Sleep:
        def sleep(seconds: float) -> None:
            if self._sleep is None:
                cancelled.wait(seconds)
            else:
                self._sleep(seconds)
            if cancelled.is_set():
                raise EmbeddingError(f"{_NAME}: cancelled because another batch failed")

        return sleep

    def _post_once(self, batch: list[str]) -> FloatArray:
        packed = self._packed
        try:
            return self._post_as(batch, packed)
        except EmbeddingError as exc:
            if not packed or exc.status not in _REFUSED_PACKED:
                raise
        # Some servers and gateways answer base64 with HTTP 400 or 422 ("base64 encoding is
        # not currently supported"): asked again in floats; if that works, floats stay for the
        # provider's life (otherwise the floats' failure is the one reported). A 5xx is the
        # server's trouble, retried as it was asked.
        vectors = self._post_as(batch, packed=False)
        self._packed = False
        return vectors

    def _post_as(self, batch: list[str], packed: bool) -> FloatArray:
        import openai

        options: dict[str, Any] = {}
        if self.settings.dimensions is not None:
            options["dimensions"] = self.settings.dimensions
        limit = self.settings.timeout_seconds
        if self.in_query():
            limit = min(limit, self.settings.query_timeout_seconds)
        deadline = time.monotonic() + limit
        try:
            with self._slots, self._client.embeddings.with_streaming_response.create(
                    input=batch, model=self.model, timeout=limit,
                    encoding_format="base64" if packed else "float",
                    **options,
            ) as response:
                # The client's timeout bounds each read, not the whole answer: a server that
                # drips a byte at a time would hold a sync for minutes. The body is read here
                # against one deadline for the whole request.
                pieces: list[bytes] = []
                for piece in response.iter_bytes():
                    pieces.append(piece)
                    if time.monotonic() > deadline:
                        raise EmbeddingError(f"{_NAME}: request took longer than {limit:g} s "
                                             "in all (the server sends too slowly)", retryable=True)
                content = b"".join(pieces)
        except openai.OpenAIError as exc:
            raise self._redacted(translate_error(exc, limit)) from None
        try:
            return parse_embeddings(content, len(batch), self.dims, self.settings.dimensions)
        except EmbeddingError as exc:  # a body that is not embeddings may echo the key
            raise self._redacted(exc) from None

    def _redacted(self, error: EmbeddingError) -> EmbeddingError:
        """The error with the key, secret headers and URL credentials cut out of its text (a
        server may echo them back); the chained exception is dropped for the same reason."""
        s = self.settings
        secrets = [self._key, *url_secrets(s.base_url),
                   *(v for k, v in s.headers.items() if k.lower() not in SAFE_HEADERS)]
        # Cut short only once redacted: a secret the cut split would no longer be found.
        return EmbeddingError(_short(redact_text(str(error), secrets), 400), status=error.status,
                              retry_after=error.retry_after, retryable=error.retryable,
                              unreachable=error.unreachable)


# -- client -------------------------------------------------------------------------------


def _make_client(settings: EmbeddingSettings, key: str) -> OpenAI:
    try:
        from openai import OpenAI
    except ImportError:
        raise ProviderUnavailableError(f"{_NAME} need the openai package: pip install openai") from None
    return OpenAI(
        base_url=settings.base_url,
        api_key=key,
        default_headers=dict(settings.headers) or None,
        timeout=settings.timeout_seconds,
        max_retries=0,  # ours, in retry.py
    )


def _first_failure(futures: list[Future[FloatArray]]) -> BaseException | None:
    for future in futures:
        if future.done() and not future.cancelled() and future.exception() is not None:
            return future.exception()
    return None


# -- input preparation --------------------------------------------------------------------


def _fit_texts(texts: list[str]) -> tuple[list[str], list[int]]:
    """Texts cut to the model's input limit, and their token counts."""
    count = _token_counter()
    fitted: list[str] = []
    counts: list[int] = []
    for text in texts:
        text = text or " "  # the API rejects empty strings
        tokens = count(text)
        if tokens > MAX_INPUT_TOKENS:
            text, tokens = _truncate(text, tokens, count)
        fitted.append(text)
        counts.append(tokens)
    return fitted, counts


def _token_counter() -> Callable[[str], int]:
    try:
        from openclaw_memory.indexing.tokens import count_tokens
    except ImportError:
        return _estimate_tokens
    return lambda text: count_tokens(text, COUNT_ENCODING)


def _estimate_tokens(text: str) -> int:
    # BPE tokens average ~4 bytes of English; 3 keeps the estimate on the safe side.
    return len(text.encode("utf-8")) // 3 + 1


def _truncate(text: str, tokens: int, count: Callable[[str], int]) -> tuple[str, int]:
    """Longest prefix that fits :data:`MAX_INPUT_TOKENS`, found by proportional shrinking.

    One over-long text must not fail the whole sync: its head is still worth embedding.
    """
    while tokens > MAX_INPUT_TOKENS:
        keep = int(len(text) * MAX_INPUT_TOKENS / tokens * 0.98)
        text = text[: max(1, min(keep, len(text) - 1))]
        tokens = count(text)
    return text, tokens


# -- responses ----------------------------------------------------------------------------


#: HTTP statuses with which a server may refuse vectors as base64 (then asked in floats).
_REFUSED_PACKED = frozenset({400, 415, 422, 501})


def translate_error(exc: Exception, timeout: float) -> EmbeddingError:
    """An ``openai`` exception as an :class:`EmbeddingError` that says whether to retry."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return EmbeddingError(f"{_NAME}: request timed out after {timeout:g} s", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return EmbeddingError(f"{_NAME}: connection failed: {exc}", retryable=True,
                              unreachable=never_connected(exc))
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc)
    return EmbeddingError(f"{_NAME}: {type(exc).__name__}: {exc}")


def _status_error(exc: Any) -> EmbeddingError:
    status = int(exc.status_code)
    if exc.code == "insufficient_quota" or getattr(exc, "type", None) == "insufficient_quota":
        return EmbeddingError(
            f"{_NAME}: quota exhausted (HTTP {status} insufficient_quota); add credit or raise "
            "the usage limit - retrying will not help",
            status=status,
        )
    retryable = status in (408, 409, 429) or status >= 500
    detail = _short(getattr(exc, "message", str(exc)), 4000)  # redacted, then cut: _redacted
    return EmbeddingError(
        f"{_NAME}: HTTP {status}: {detail}",
        status=status,
        retry_after=parse_retry_after(exc.response.headers),
        retryable=retryable,
    )


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_embeddings(
    content: bytes, count: int, known_dims: int | None, requested_dims: int | None
) -> FloatArray:
    """The ``data`` of an embeddings response as rows in input order, fully validated."""
    try:
        body = json.loads(content)
    except ValueError:
        raise _malformed(f"response is not JSON: {_short(repr(content[:4000]), 4000)}") from None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise _malformed("response has no 'data' list")
    if len(data) != count:
        raise _malformed(f"response has {len(data)} embeddings for {count} inputs")
    rows: list[FloatArray | None] = [None] * count
    for position, item in enumerate(data):
        index, vector = _parse_item(item, position, count)
        if rows[index] is not None:
            raise _malformed(f"response repeats index {index}")
        rows[index] = vector
    return _stack(rows, known_dims, requested_dims)


def _parse_item(item: object, position: int, count: int) -> tuple[int, FloatArray]:
    if not isinstance(item, dict):
        raise _malformed(f"data[{position}] is not an object")
    index = item.get("index", position)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
        raise _malformed(f"data[{position}] has an invalid index {index!r}")
    return index, _vector(item.get("embedding"), position)


def _vector(value: object, position: int) -> FloatArray:
    if isinstance(value, str):  # base64 little-endian float32, if a server insists
        try:
            raw = base64.b64decode(value, validate=True)
            return np.frombuffer(raw, dtype="<f4").astype(np.float32)
        except ValueError:
            raise _malformed(f"data[{position}].embedding is not valid base64") from None
    array = np.asarray(value) if isinstance(value, list) else None
    # numpy would happily turn "0.5" or True into numbers; only real numbers are accepted.
    if array is None or array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iuf":
        raise _malformed(f"data[{position}].embedding is not a list of numbers")
    with np.errstate(over="ignore"):  # past float32's range becomes inf: rejected per text later
        return array.astype(np.float32)


def _stack(rows: list[FloatArray | None], known_dims: int | None, requested_dims: int | None) -> FloatArray:
    vectors = [row for row in rows if row is not None]
    widths = sorted({row.shape[0] for row in vectors})
    if len(widths) != 1:
        raise _malformed(f"vectors of differing dimensions {widths} in one response")
    if known_dims is not None and widths[0] != known_dims:
        origin = "requested" if requested_dims is not None else "expected"
        raise _malformed(f"got {widths[0]}-dimensional vectors, {origin} {known_dims}")
    return np.stack(vectors)


def _malformed(reason: str) -> EmbeddingError:
    # A broken body will be broken again on retry, so these are final.
    return EmbeddingError(f"{_NAME}: malformed response: {reason}")
