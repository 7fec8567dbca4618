"""LangChain's standard VectorStore suite, on both vector paths (sqlite-vec vec0 and numpy) and
on the PostgreSQL backend (pgvector, documents as rows).

Nothing is skipped or overridden: the suite runs sync and async, with ``get_by_ids``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from openclaw_memory.langchain import OpenClawMemoryVectorStore


class _MarkdownVectorStoreSuite(VectorStoreIntegrationTests):
    backend = "auto"

    @pytest.fixture()
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:  # type: ignore[override]
        workspace = tmp_path / "ws"
        workspace.mkdir()
        store = OpenClawMemoryVectorStore(
            workspace=workspace, index_path=tmp_path / "index.sqlite",
            embedding=self.get_embeddings(), store={"vector_backend": self.backend})
        # The backend must really be the one asked for: no silent fallback to numpy.
        assert store.index.store.vector_path == self.backend, store.index.store.vector_reason
        yield store
        store.close()


class TestVectorStoreVec0(_MarkdownVectorStoreSuite):
    backend = "vec0"


class TestVectorStoreNumpy(_MarkdownVectorStoreSuite):
    backend = "numpy"


class TestVectorStorePostgres(VectorStoreIntegrationTests):
    @pytest.fixture()
    def vectorstore(self, pg_dsn: str) -> Iterator[VectorStore]:  # type: ignore[override]
        from openclaw_memory.embeddings.langchain import LangChainEmbeddingsProvider
        from openclaw_memory.postgres import PostgresMemory

        memory = PostgresMemory.open(
            pg_dsn, workspace="vs", embedder=LangChainEmbeddingsProvider(self.get_embeddings()))
        store = OpenClawMemoryVectorStore(memory)
        yield store
        memory.close()
