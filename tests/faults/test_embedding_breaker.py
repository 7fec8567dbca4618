"""An embedding endpoint that is down costs one bounded failure, not a minute per search: the
breaker opens, searches answer keyword-only at once, a background probe closes it when the
endpoint answers again (default retry settings throughout: what users run)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_server import FakeOpenAIServer, embeddings, server_error

from openclaw_memory import MemoryIndex


def _open(workspace: Path, tmp_path: Path, base_url: str, **embedding: object) -> MemoryIndex:
    return MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite",
                            embedding={"provider": "openai", "base_url": base_url,
                                       "api_key": "sk-test", "model": "text-embedding-3-small",
                                       **embedding})


def test_an_endpoint_that_goes_away_costs_one_short_failure_then_none(
        workspace: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(dims=16) as running:
        memory = _open(workspace, tmp_path, running.base_url)
        memory.sync()
    try:  # the server is gone: its port refuses connections
        first = memory.search("billing database")
        assert first.mode == "keyword-only" and first.results
        # One query embedding: one retry at most (search's own budget), not six.
        assert "gave up after 1 retry" in str(first.error), first.error
        later = [memory.search("billing database") for _ in range(5)]
        assert all(r.mode == "keyword-only" and r.results for r in later)
        # The breaker answered each: no connection was tried.
        assert all("unavailable since" in str(r.error) for r in later)
        endpoint = memory.status()["embedding_endpoint"]
        assert endpoint["open"] is True and endpoint["reason"]
    finally:
        memory.close()


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dims=16) as running:
        yield running


def test_a_background_probe_closes_the_breaker_when_the_endpoint_answers_again(
        workspace: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    with _open(workspace, tmp_path, server.base_url, probe_interval_seconds=0.2) as memory:
        memory.sync()
        assert memory.search("billing database").mode == "hybrid"
        server.route("/v1/embeddings", server_error(503))
        assert memory.search("billing database").mode == "keyword-only"
        calls = len(server.requests)
        assert memory.search("billing database").mode == "keyword-only"
        assert len(server.requests) == calls  # refused by the breaker, not by the server
        server.route("/v1/embeddings", embeddings(default_dims=16))  # back
        deadline = time.monotonic() + 10
        while memory.status()["embedding_endpoint"]["open"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert memory.status()["embedding_endpoint"]["open"] is False
        assert memory.search("billing database").mode == "hybrid"
        assert len(server.requests) > calls  # the probe asked, the searches had not


def test_a_bad_key_does_not_open_the_breaker(workspace: Path, tmp_path: Path,
                                             server: FakeOpenAIServer) -> None:
    with _open(workspace, tmp_path, server.base_url) as memory:
        memory.sync()
        server.route("/v1/embeddings", server_error(401))
        memory.search("billing database")
        assert memory.status()["embedding_endpoint"]["open"] is False
