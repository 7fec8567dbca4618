"""The LangGraph store on each backend, for tests that run on both."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory.langgraph.store import OpenClawMemoryStore

__all__ = ["nested_value", "open_store"]


@contextlib.contextmanager
def open_store(request: pytest.FixtureRequest, tmp_path: Path,
               workspace: str) -> Iterator[OpenClawMemoryStore]:
    """``request.param``'s backend: a workspace folder ("sqlite"), or a PostgreSQL workspace
    named ``workspace`` (documents as rows) on the test's own database."""
    if request.param == "postgres":
        from openclaw_memory.postgres import PostgresMemory

        memory = PostgresMemory.open(request.getfixturevalue("pg_dsn"), workspace=workspace,
                                     embedding={"provider": "none"})
        with OpenClawMemoryStore(memory, owns_index=True) as store:
            yield store
        return
    (tmp_path / "ws").mkdir()
    with OpenClawMemoryStore.open(tmp_path / "ws", index_path=tmp_path / "i.sqlite",
                                  embedding={"provider": "none"}) as store:
        yield store


def nested_value(depth: int) -> dict[str, Any]:
    """``{"a": {"a": ...}}`` ``depth`` levels deep."""
    value: dict[str, Any] = {}
    inner = value
    for _ in range(depth):
        inner["a"] = {}
        inner = inner["a"]
    return value
