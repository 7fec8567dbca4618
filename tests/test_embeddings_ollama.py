"""The Ollama provider (``embedding.provider = "ollama"``) through the official ``ollama``
client against a scripted server speaking Ollama's own ``/api/embed`` on 127.0.0.1: indexing
and search, batches, retries of 5xx, a missing model's clear error, malformed answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from openai_server import FakeOpenAIServer, RecordedRequest, Reply, fake_vector, json_reply

from openclaw_memory import MemoryIndex
from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.factory import build_provider
from openclaw_memory.embeddings.ollama import MAX_BATCH_INPUTS
from openclaw_memory.errors import EmbeddingError

PATH = "/api/embed"
DIMS = 16


def ollama_embed(request: RecordedRequest) -> Reply:
    body = request.json or {}
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    return json_reply({"model": body["model"], "embeddings": [fake_vector(t, DIMS) for t in texts],
                       "total_duration": 1, "load_duration": 1, "prompt_eval_count": 1})


@pytest.fixture()
def server() -> Any:
    with FakeOpenAIServer() as running:
        running.route(PATH, ollama_embed)
        yield running


def _settings(server: FakeOpenAIServer, **extra: Any) -> EmbeddingSettings:
    return EmbeddingSettings(provider="ollama", base_url=server.url, retry_base_seconds=0.0,
                             **extra)


def test_indexing_and_search_go_through_ollamas_own_api(server: FakeOpenAIServer,
                                                        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-05.md").write_text("- We chose PostgreSQL for billing.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite",
                          embedding={"provider": "ollama", "base_url": server.url,
                                     "model": "nomic-embed-text"}) as memory:
        memory.sync()
        response = memory.search("billing database")
        assert response.mode == "hybrid" and response.results
        assert memory.status()["provider"] == "ollama"
    paths = {r.path for r in server.requests}
    assert paths == {PATH}
    assert all(r.json["model"] == "nomic-embed-text" and r.json["truncate"] is True
               for r in server.requests)


def test_long_lists_go_in_batches_in_order(server: FakeOpenAIServer) -> None:
    provider = build_provider("ollama", _settings(server))
    texts = [f"note {n}" for n in range(MAX_BATCH_INPUTS + 5)]
    rows = provider.embed_documents(texts)
    assert rows.shape == (len(texts), DIMS)
    assert len(server.requests) == 2 and len(server.requests[0].json["input"]) == MAX_BATCH_INPUTS
    expected = provider.embed_documents([texts[-1]])[0]
    assert abs(float(rows[-1] @ expected) - 1.0) < 1e-5


def test_a_server_error_is_retried_and_a_missing_model_is_not(server: FakeOpenAIServer) -> None:
    calls = {"n": 0}

    def flaky(request: RecordedRequest) -> Reply:
        calls["n"] += 1
        return json_reply({"error": "busy"}, 503) if calls["n"] == 1 else ollama_embed(request)

    server.route(PATH, flaky)
    provider = build_provider("ollama", _settings(server))
    assert provider.embed_documents(["hello"]).shape == (1, DIMS) and calls["n"] == 2
    server.route(PATH, lambda r: json_reply({"error": 'model "nope" not found, try pulling it '
                                                      "first"}, 404))
    before = len(server.requests)
    with pytest.raises(EmbeddingError, match="ollama pull"):
        build_provider("ollama", _settings(server, model="nope")).embed_documents(["hello"])
    assert len(server.requests) == before + 1  # not retried


@pytest.mark.parametrize("answer", [{"embeddings": []}, {"embeddings": [["x"]]},
                                    {"embeddings": [[0.1, 0.2], [0.3]]}, {"model": "m"}])
def test_malformed_answers_are_clear_errors(server: FakeOpenAIServer, answer: Any) -> None:
    server.route(PATH, lambda r: json_reply(answer))
    with pytest.raises(EmbeddingError, match="malformed"):
        build_provider("ollama", _settings(server, max_retries=0)).embed_documents(["a", "b"])


def test_an_unreachable_server_is_a_retryable_error_that_searches_survive(tmp_path: Path) -> None:
    provider = build_provider("ollama", EmbeddingSettings(
        provider="ollama", base_url="http://127.0.0.1:9", max_retries=0, timeout_seconds=2))
    with pytest.raises(EmbeddingError, match="cannot reach") as caught:
        provider.embed_documents(["hello"])
    assert caught.value.retryable
