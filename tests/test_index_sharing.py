"""Two embeddings on one workspace: never one index file rebuilt under the other, no SQLite
error at a user, and ``status`` saying what searches really get."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from faults.embedders import HashingEmbedder
from langchain_core.embeddings import DeterministicFakeEmbedding

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ConfigError
from openclaw_memory.langchain import OpenClawMemoryVectorStore

TESTS = Path(__file__).resolve().parent


def test_readme_order_index_then_vectorstore_with_another_embedder_both_keep_working(
        workspace: Path) -> None:
    with MemoryIndex.open(workspace) as memory:  # the default local model
        assert memory.search("billing database").results
        store = OpenClawMemoryVectorStore(embedding=DeterministicFakeEmbedding(size=8),
                                          workspace=workspace)
        store.add_texts(["Lisbon flight on Dec 3"], metadatas=[{"kind": "travel"}], ids=["trip-1"])
        assert store.index.index_path != memory.index_path
        response = memory.search("billing database")
        assert response.mode == "hybrid" and response.results
        assert not [n for n in response.notes if "failed" in n]
        assert memory.status()["mode"] == "hybrid" and memory.status()["vectors"] > 0
        assert store.similarity_search("Lisbon flight", k=1)[0].page_content.startswith("Lisbon")
        store.index.close()


def test_one_explicit_index_file_cannot_be_shared_by_two_embeddings_in_one_process(
        workspace: Path, tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    with MemoryIndex.open(workspace, index_path=path, embedder=HashingEmbedder(16)):
        with pytest.raises(ConfigError, match="another embedding"):
            MemoryIndex.open(workspace, index_path=path, embedder=HashingEmbedder(24))
        # The same embedding may open it twice (e.g. a retriever and the tools).
        MemoryIndex.open(workspace, index_path=path, embedder=HashingEmbedder(16)).close()
    MemoryIndex.open(workspace, index_path=path, embedder=HashingEmbedder(24)).close()  # once closed


def test_an_index_rebuilt_by_another_process_with_other_vectors_answers_keyword_only(
        workspace: Path, tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    with MemoryIndex.open(workspace, index_path=path, embedder=HashingEmbedder(16),
                          sync={"on_search": False}) as memory:
        memory.sync()
        assert memory.status()["mode"] == "hybrid"
        other = textwrap.dedent(f"""
            from faults.embedders import HashingEmbedder
            from openclaw_memory import MemoryIndex
            with MemoryIndex.open({str(workspace)!r}, index_path={str(path)!r},
                                  embedder=HashingEmbedder(24)) as other:
                other.sync()
        """)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
        subprocess.run([sys.executable, "-c", other], check=True, env=env, timeout=120)
        response = memory.search("PostgreSQL billing")
        assert response.results and response.results[0].path == "MEMORY.md"
        assert any("answering keyword-only" in n for n in response.notes)
        status = memory.status()
        assert status["mode"] == "keyword-only" and "other settings" in status["mode_reason"]
