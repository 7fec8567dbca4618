"""Use any LangChain ``Embeddings`` object (HuggingFace, Ollama, Bedrock, ...) as a provider."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from openclaw_memory.embeddings.base import (
    EmbeddingProvider,
    FloatArray,
    normalize_rows,
    provider_key_for,
)
from openclaw_memory.errors import EmbeddingError

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["LangChainEmbeddingsProvider"]

_MODEL_ATTRIBUTES = ("model", "model_name", "model_id", "deployment")


class LangChainEmbeddingsProvider(EmbeddingProvider):
    """Adapter from ``langchain_core.embeddings.Embeddings``.

    ``dims`` is learnt from the first result (a wrapper cannot know it up front).
    ``model`` defaults to the object's ``model``/``model_name`` attribute, else its class
    name; it should identify the vectors, so pass it when the object does not say.
    Failures of the wrapped object surface as non-retryable :class:`EmbeddingError`
    (LangChain integrations retry on their own).
    """

    id = "langchain"

    def __init__(
        self, embeddings: Embeddings, *, model: str | None = None, max_input_tokens: int = 8191
    ) -> None:
        super().__init__()
        self.embeddings = embeddings
        self.model = model or _model_name(embeddings)
        self.max_input_tokens = max_input_tokens
        self._class = f"{type(embeddings).__module__}.{type(embeddings).__qualname__}"
        self.provider_key = provider_key_for(self.id, model=self.model, cls=self._class)

    def _embed(self, texts: list[str]) -> FloatArray:
        return self._call(self.embeddings.embed_documents, texts)

    def embed_query(self, text: str) -> FloatArray:
        # Not routed through embed_documents: some models embed queries differently
        # (instruction prefixes, separate endpoints).
        rows = normalize_rows(self._call(self.embeddings.embed_query, text))
        self._check_shape(rows, 1)
        row: FloatArray = rows[0]
        return row

    def _call(self, method: Any, argument: object) -> FloatArray:
        try:
            return np.asarray(method(argument), dtype=np.float32)
        except EmbeddingError:
            raise
        except Exception as exc:  # any integration's error; search only handles ours
            raise EmbeddingError(f"langchain embeddings ({self._class}): {exc}") from exc


def _model_name(embeddings: object) -> str:
    for attribute in _MODEL_ATTRIBUTES:
        value = getattr(embeddings, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(embeddings).__name__
