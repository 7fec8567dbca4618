"""LangChainEmbeddingsProvider over langchain_core's deterministic fake embeddings."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from openclaw_memory.embeddings.langchain import LangChainEmbeddingsProvider
from openclaw_memory.errors import EmbeddingError


class Broken(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("backend down")

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("backend down")


def test_dims_are_discovered_from_the_first_result():
    provider = LangChainEmbeddingsProvider(DeterministicFakeEmbedding(size=12), model="fake-12")
    assert provider.dims is None
    vectors = provider.embed_documents(["a", "b"])
    assert vectors.shape == (2, 12) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert provider.dims == 12 and provider.model == "fake-12" and provider.id == "langchain"


def test_query_uses_the_wrapped_embed_query():
    fake = DeterministicFakeEmbedding(size=6)
    provider = LangChainEmbeddingsProvider(fake)
    expected = np.array(fake.embed_query("q"), dtype=np.float32)
    np.testing.assert_allclose(provider.embed_query("q"), expected / np.linalg.norm(expected), atol=1e-6)


def test_model_name_changes_the_provider_key():
    fake = DeterministicFakeEmbedding(size=6)
    assert (
        LangChainEmbeddingsProvider(fake, model="a").provider_key
        != LangChainEmbeddingsProvider(fake, model="b").provider_key
    )


def test_wrapped_failures_become_embedding_errors():
    provider = LangChainEmbeddingsProvider(Broken())
    with pytest.raises(EmbeddingError, match="backend down"):
        provider.embed_documents(["a"])
    with pytest.raises(EmbeddingError, match="backend down"):
        provider.embed_query("a")
