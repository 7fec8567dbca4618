"""LangChain's standard tool suites (unit + integration) for memory_search, memory_get and
memory_write, on a keyword-only index so they run offline in milliseconds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import MemoryGetTool, MemorySearchTool, MemoryWriteTool


class _OnMemoryIndex:
    """Opens an index on the shared workspace; ``tool_constructor_params`` hands it over."""

    index: MemoryIndex

    @pytest.fixture(autouse=True)
    def _index(self, memory_workspace: Path, tmp_path: Path) -> Iterator[None]:
        with MemoryIndex.open(memory_workspace, index_path=tmp_path / "tools.sqlite",
                              embedding={"provider": "none"}) as index:
            self.index = index
            yield

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"index": self.index}


class _Search(_OnMemoryIndex):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return MemorySearchTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "invoice renderer", "max_results": 3}


class _Get(_OnMemoryIndex):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return MemoryGetTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"path": "memory/2026-01-10.md", "from_line": 3, "lines": 2}


class _Write(_OnMemoryIndex):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return MemoryWriteTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"content": "Invoices are archived after 90 days.", "target": "daily"}


class TestMemorySearchToolUnit(_Search, ToolsUnitTests):
    pass


class TestMemorySearchToolIntegration(_Search, ToolsIntegrationTests):
    pass


class TestMemoryGetToolUnit(_Get, ToolsUnitTests):
    pass


class TestMemoryGetToolIntegration(_Get, ToolsIntegrationTests):
    pass


class TestMemoryWriteToolUnit(_Write, ToolsUnitTests):
    pass


class TestMemoryWriteToolIntegration(_Write, ToolsIntegrationTests):
    pass
