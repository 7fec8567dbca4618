"""An embedding outage (the OpenAI-compatible server answers 500) blocks neither writing nor
keyword search: text and keywords are indexed anyway, the missing vectors are counted in
``status`` and backfilled when the provider is back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_server import FakeOpenAIServer, embeddings, server_error

from openclaw_memory import MemoryIndex


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dims=16) as running:
        yield running


def _open(workspace: Path, tmp_path: Path, server: FakeOpenAIServer) -> MemoryIndex:
    return MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", timezone="UTC",
                            embedding={"provider": "openai", "base_url": server.base_url,
                                       "api_key": "sk-test", "max_retries": 0,
                                       "model": "text-embedding-3-small"})


def test_notes_are_saved_and_findable_during_an_outage_and_backfilled_after(
        workspace: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    with _open(workspace, tmp_path, server) as memory:
        memory.sync()
        server.route("/v1/embeddings", server_error(500))
        result = memory.write("The narwhal budget was approved on Friday.")  # must not raise
        assert result.written and result.reason == "appended"
        response = memory.search("narwhal budget")
        assert response.results and "narwhal" in response.results[0].snippet
        status = memory.status()
        assert status["vectors_missing"] >= 1
        report = memory.sync()
        assert report.vectors_backfilled == 0 and any("unavailable" in w for w in report.warnings)

        server.route("/v1/embeddings", embeddings(default_dims=16))  # the provider is back
        report = memory.sync()
        assert report.vectors_backfilled >= 1
        assert memory.status()["vectors_missing"] == 0
        response = memory.search("narwhal budget")
        assert response.mode == "hybrid" and response.results[0].explanation.vector_score is not None


def test_a_first_sync_during_an_outage_still_indexes_every_file(
        workspace: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    server.route("/v1/embeddings", server_error(500))
    with _open(workspace, tmp_path, server) as memory:
        report = memory.sync()
        assert report.indexed == 4 and report.vectors_missing > 0
        assert memory.search("BILL-482").results  # keyword search works on a never-embedded index


def test_cli_search_on_a_never_completed_index_answers_keyword_only_during_an_outage(
        workspace: Path, tmp_path: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from openclaw_memory.cli.app import main

    # A failure the client does not retry (the CLI takes the default six retries with backoff).
    server.route("/v1/embeddings", server_error(400))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    code = main(["--workspace", str(workspace), "--index", str(tmp_path / "c.sqlite"),
                 "--provider", "openai", "search", "BILL-482", "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert data["results"] and data["results"][0]["path"] == "memory/2026-01-10.md"
