"""LangChain's standard retriever suite against a keyword-only index (fast, offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from openclaw_memory.langchain import OpenClawMemoryRetriever


class TestRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _paths(self, memory_workspace: Path, tmp_path: Path) -> None:
        # The suite builds retrievers from a property, not a fixture: keep the paths on self.
        self.workspace = memory_workspace
        self.index_path = tmp_path / "retriever.sqlite"

    @property
    def retriever_constructor(self) -> type[OpenClawMemoryRetriever]:
        return OpenClawMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "index_path": self.index_path,
                "embedding": {"provider": "none"}}

    @property
    def retriever_query_example(self) -> str:
        return "invoice"
