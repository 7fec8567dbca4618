"""The provider interface every embedder implements, and helpers they share.

A provider turns texts into unit-length float32 rows. Subclasses implement only
:meth:`EmbeddingProvider._embed`; the public methods add the guarantees the index relies on
(shape, dtype, finite values, L2 norm) so that no provider can store a vector the numpy and
sqlite-vec paths would rank differently.
"""

from __future__ import annotations

import hashlib
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from openclaw_memory.embeddings.breaker import CircuitBreaker
from openclaw_memory.errors import EmbeddingError
from openclaw_memory.redact import SAFE_HEADERS
from openclaw_memory.redact import SECRET_HEADERS as _SECRET_HEADERS
from openclaw_memory.search.querylimits import encodable

__all__ = [
    "SECRET_HEADERS",
    "EmbeddingProvider",
    "FloatArray",
    "invalid_rows",
    "normalize_rows",
    "provider_key_for",
]

FloatArray = npt.NDArray[np.float32]

# Headers that authenticate rather than change the vectors. They must stay out of
# provider_key: the key is stored in the index next to the vectors, and rotating a key must
# not invalidate the embedding cache.
SECRET_HEADERS = _SECRET_HEADERS

# Below this norm a row is treated as "no signal" and left at zero instead of being blown up
# into noise (OpenClaw uses the same threshold).
_MIN_NORM = 1e-10


def normalize_rows(matrix: npt.ArrayLike) -> FloatArray:
    """float32 copy of a 2-D array with rows L2-normalised; invalid rows become all-NaN.

    A row with a NaN, an infinity, a value past float32's range or (nearly) no length is not
    a direction: renormalising or zeroing it would store noise that search then trusts. Such
    rows come back as NaN, which callers read as "no vector for this text" (see
    :func:`invalid_rows`); the text is still indexed for keywords.
    """
    raw = np.array(matrix, dtype=np.float64, copy=True, ndmin=2)
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        bad = ~np.isfinite(raw).all(axis=1, keepdims=True) | ~np.isfinite(norms) | (
            norms < _MIN_NORM) | (np.abs(raw) > np.finfo(np.float32).max).any(axis=1, keepdims=True)
        rows = np.where(bad, np.nan, raw / np.where(bad, 1.0, norms))
    return rows.astype(np.float32)


def invalid_rows(matrix: FloatArray) -> npt.NDArray[np.bool_]:
    """Which rows of an embedded matrix carry no usable vector (see :func:`normalize_rows`)."""
    if matrix.size == 0:
        return np.zeros(matrix.shape[0], dtype=bool)
    return np.asarray(np.isnan(matrix).any(axis=1), dtype=bool)


def provider_key_for(
    provider: str,
    *,
    headers: Mapping[str, str] | None = None,
    **fields: object,
) -> str:
    """sha256 of the JSON of everything that changes a provider's vectors.

    ``headers`` are lower-cased and stripped of credentials (:data:`SECRET_HEADERS`); all
    other ``fields`` must be JSON-serialisable. Secrets never enter the digest input, so the
    digest cannot be used to confirm a guessed key either.
    """
    # A header outside the safe list may carry a key: only its name enters the digest.
    kept = {name.lower(): value if name.lower() in SAFE_HEADERS else "" for name, value in
            (headers or {}).items() if name.lower() not in SECRET_HEADERS}
    payload = {"provider": provider, "headers": kept, **fields}
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class EmbeddingProvider(ABC):
    """Turns texts into L2-normalised float32 vectors.

    Attributes:
        id: provider family ("local", "openai", "langchain", ...).
        model: model name as stored next to each vector.
        provider_key: sha256 of everything besides ``id``/``model`` that changes vectors.
        max_input_tokens: longest input (in the provider's own tokens) that is embedded in
            full; longer inputs are truncated, never rejected.
        costly: whether a vector costs money or a network round trip (an API). Vectors of
            a costly provider are saved in the index's cache the moment they arrive, so a
            sync killed before its commit never pays for them twice; a local model's are
            only stored with their chunks, at the commit.

    Implementations must be safe to call from several threads at once.
    """

    id: str
    model: str
    provider_key: str
    max_input_tokens: int
    costly: bool = True

    def __init__(self, *, dims: int | None = None) -> None:
        self._dims = dims
        self._dims_lock = threading.Lock()
        self._calls = threading.local()
        self.breaker = CircuitBreaker(f"the {type(self).__name__} embedding endpoint",
                                      lambda: self._embed(["ping"]))

    def probing(self) -> bool:
        """Whether this call is a single try at an endpoint the breaker holds as down (a
        provider then makes no retries)."""
        return bool(getattr(self._calls, "probing", False))

    def in_query(self) -> bool:
        """Whether this thread is embedding a search's query (a provider then bounds its
        retries and wait tighter: an agent is waiting for the answer)."""
        return bool(getattr(self._calls, "query", False))

    @property
    def dims(self) -> int | None:
        """Vector width: from configuration, or learnt from the first response."""
        return self._dims

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """Vectors of ``texts`` as a (len(texts), dims) float32 matrix, rows unit-length."""
        if isinstance(texts, str):
            # A bare string is a Sequence[str] too; embedding it letter by letter is never
            # what the caller meant.
            raise TypeError("embed_documents takes a sequence of texts, not a single str")
        if not texts:
            return np.zeros((0, self._dims or 0), dtype=np.float32)
        probing = self.breaker.is_open
        if probing and self.in_query():
            self.breaker.before_call()  # a search must not wait on an endpoint that is down
        # Indexing still asks (it was told to), but once, without retries: a sync against a
        # dead endpoint costs one failed request, and one that answers closes the breaker.
        self._calls.probing = probing
        try:
            # Lone surrogates reach us from JSON escapes and fuzzers; no tokenizer or HTTP
            # body accepts them, and one must not fail a batch.
            rows = normalize_rows(self._embed([encodable(t) for t in texts]))
        except EmbeddingError as exc:
            self.breaker.record_failure(exc)
            raise
        finally:
            self._calls.probing = False
        self.breaker.record_success()
        self._check_shape(rows, len(texts))
        return rows

    def embed_for_search(self, texts: Sequence[str]) -> FloatArray:
        """:meth:`embed_documents` for texts a search compares (lines of its hits, a note
        checked before it is written): never stored anywhere. A cache in front of the
        provider reads its entries but keeps new vectors in memory (embeddings/cache.py), so
        a search never writes the index."""
        return self.embed_documents(texts)

    def embed_query(self, text: str) -> FloatArray:
        """Vector of one query, shape (dims,); an invalid vector raises EmbeddingError."""
        self._calls.query = True
        try:
            row: FloatArray = self.embed_documents([text])[0]
        finally:
            self._calls.query = False
        if np.isnan(row).any():
            raise EmbeddingError(f"{self.id} embeddings ({self.model}): the provider returned "
                                 "an invalid vector (NaN, infinite or zero) for the query")
        return row

    @abstractmethod
    def _embed(self, texts: list[str]) -> npt.ArrayLike:
        """Raw vectors of a non-empty list of texts, one row per text, in order.

        Failures must be raised as :class:`~openclaw_memory.errors.EmbeddingError`.
        """

    def _check_shape(self, rows: FloatArray, count: int) -> None:
        """Reject a wrong row count or a width that differs from the known one.

        Mixed widths would make the stored matrix unusable, so the first width seen (or the
        configured one) is binding for the life of the provider.
        """
        name = f"{self.id} embeddings ({self.model})"
        if rows.shape[0] != count:
            raise EmbeddingError(f"{name}: got {rows.shape[0]} vectors for {count} texts")
        width = rows.shape[1]
        if width == 0:
            raise EmbeddingError(f"{name}: got empty vectors")
        with self._dims_lock:
            if self._dims is None:
                self._dims = width
            expected = self._dims
        if width != expected:
            raise EmbeddingError(f"{name}: got {width}-dimensional vectors, expected {expected}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, model={self.model!r}, dims={self.dims})"
