"""Mistral, Voyage and Gemini embeddings through their official clients, against scripted
servers on 127.0.0.1 speaking each service's wire format: indexing and search, documents and
queries told apart where the service asks, batches, retries of 5xx, no retry of a 4xx, a
missing key, malformed answers."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from openai_server import FakeOpenAIServer, RecordedRequest, Reply, fake_vector, json_reply

from openclaw_memory import MemoryIndex
from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.factory import build_provider
from openclaw_memory.errors import EmbeddingError, ProviderUnavailableError

DIMS = 12
GEMINI_PATH = "/v1/models/gemini-embedding-001:batchEmbedContents"


def mistral(request: RecordedRequest) -> Reply:
    body = request.json
    return json_reply({"id": "e", "object": "list", "model": body["model"],
                       "usage": {"prompt_tokens": 1, "total_tokens": 1},
                       "data": [{"object": "embedding", "index": i,
                                 "embedding": fake_vector(t, DIMS)}
                                for i, t in enumerate(body["input"])]})


def voyage(request: RecordedRequest) -> Reply:
    body = request.json
    packed = body.get("encoding_format") == "base64"

    def vector(text: str) -> Any:
        values = fake_vector(text, DIMS)
        return base64.b64encode(struct.pack(f"<{DIMS}f", *values)).decode() if packed else values

    return json_reply({"object": "list", "model": body["model"],
                       "usage": {"total_tokens": 1},
                       "data": [{"object": "embedding", "index": i, "embedding": vector(t)}
                                for i, t in enumerate(body["input"])]})


def gemini(request: RecordedRequest) -> Reply:
    texts = [r["content"]["parts"][0]["text"] for r in request.json["requests"]]
    return json_reply({"embeddings": [{"values": fake_vector(t, DIMS)} for t in texts]})


SERVICES: dict[str, tuple[str, Any, str]] = {
    "mistral": ("/v1/embeddings", mistral, "MISTRAL_API_KEY"),
    "voyage": ("/v1/embeddings", voyage, "VOYAGE_API_KEY"),
    "gemini": (GEMINI_PATH, gemini, "GEMINI_API_KEY"),
}


def _base(server: FakeOpenAIServer, name: str) -> str:
    return server.base_url if name == "voyage" else server.url


@pytest.fixture(params=sorted(SERVICES))
def service(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    name = request.param
    path, behaviour, variable = SERVICES[name]
    monkeypatch.setenv(variable, "sk-scripted-key")
    with FakeOpenAIServer() as server:
        server.route(path, behaviour)
        yield name, server, path


def _provider(name: str, server: FakeOpenAIServer, **extra: Any) -> Any:
    return build_provider(name, EmbeddingSettings(provider=name, base_url=_base(server, name),  # type: ignore[arg-type]
                                                  retry_base_seconds=0.0, **extra))


def test_indexing_and_search_through_the_official_client(service: Any, tmp_path: Path) -> None:
    name, server, path = service
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-05.md").write_text("- We chose PostgreSQL for billing.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite",
                          embedding={"provider": name, "base_url": _base(server, name)}) as memory:
        memory.sync()
        response = memory.search("billing database")
        assert response.mode == "hybrid" and response.results
        assert memory.status()["provider"] == name
    assert {r.path for r in server.requests} == {path}
    assert all("sk-scripted-key" in " ".join(r.headers.values()) for r in server.requests)


def test_documents_and_queries_are_told_apart_where_the_service_asks(service: Any) -> None:
    name, server, _ = service
    provider = _provider(name, server)
    provider.embed_documents(["a note"])
    provider.embed_query("a question")
    document, query = server.requests[-2].json, server.requests[-1].json
    if name == "voyage":
        assert (document["input_type"], query["input_type"]) == ("document", "query")
    elif name == "gemini":
        assert document["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT"
        assert query["requests"][0]["taskType"] == "RETRIEVAL_QUERY"


def test_long_lists_go_in_batches_in_order(service: Any) -> None:
    name, server, _ = service
    provider = _provider(name, server)
    texts = [f"note {n}" for n in range(provider.max_batch + 3)]
    rows = provider.embed_documents(texts)
    assert rows.shape == (len(texts), DIMS) and len(server.requests) == 2
    assert abs(float(rows[-1] @ provider.embed_documents([texts[-1]])[0]) - 1.0) < 1e-5


def test_a_5xx_is_retried_and_a_4xx_is_not(service: Any) -> None:
    name, server, path = service
    _, behaviour, _ = SERVICES[name]
    calls = {"n": 0}

    def flaky(request: RecordedRequest) -> Reply:
        calls["n"] += 1
        if calls["n"] == 1:
            return json_reply({"error": {"message": "overloaded", "code": 503}}, 503)
        return behaviour(request)

    server.route(path, flaky)
    assert _provider(name, server).embed_documents(["hello"]).shape == (1, DIMS)
    assert calls["n"] == 2
    server.route(path, lambda r: json_reply({"error": {"message": "bad model", "code": 400}}, 400))
    before = len(server.requests)
    with pytest.raises(EmbeddingError, match="400") as caught:
        _provider(name, server).embed_documents(["hello"])
    assert not caught.value.retryable and len(server.requests) == before + 1
    assert "sk-scripted-key" not in str(caught.value)


def test_a_missing_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, (_, _, variable) in SERVICES.items():
        monkeypatch.delenv(variable, raising=False)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        with pytest.raises(ProviderUnavailableError, match=variable):
            build_provider(name, EmbeddingSettings(provider=name))  # type: ignore[arg-type]


def test_malformed_answers_are_clear_errors(service: Any) -> None:
    name, server, path = service
    server.route(path, lambda r: json_reply({"data": [], "embeddings": []}))
    with pytest.raises(EmbeddingError, match="malformed"):
        _provider(name, server, max_retries=0).embed_documents(["a", "b"])


def test_auto_picks_a_service_when_its_model_is_named_and_stays_local_on_a_key_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.embeddings.factory import create_provider

    monkeypatch.setenv("GEMINI_API_KEY", "sk-scripted-key")
    assert create_provider(EmbeddingSettings()).provider.id == "local"  # type: ignore[union-attr]
    chosen = create_provider(EmbeddingSettings(model="gemini-embedding-001"))
    assert chosen.provider is not None and chosen.provider.id == "gemini"
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    fell_back = create_provider(EmbeddingSettings(model="voyage-4-large"))
    assert fell_back.provider is not None and fell_back.fallback is not None
    assert fell_back.fallback["from"] == "voyage" and "VOYAGE_API_KEY" in fell_back.fallback["reason"]


def test_extra_headers_reach_the_services_that_take_them(service: Any) -> None:
    name, server, _ = service
    if name == "voyage":
        pytest.skip("Voyage's client takes no extra headers")
    _provider(name, server, headers={"X-Team": "kestrel"}).embed_documents(["hello"])
    assert server.requests[-1].headers.get("x-team") == "kestrel"


@pytest.mark.parametrize(("name", "module", "extra"), [
    ("mistral", "mistralai.client", "mistral"), ("voyage", "voyageai.client", "voyage"),
    ("gemini", "google.genai", "gemini"), ("ollama", "ollama", "ollama")])
def test_a_missing_client_names_the_extra_to_install(name: str, module: str, extra: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # as if the package were not installed
    for variable in ("MISTRAL_API_KEY", "VOYAGE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(variable, "sk-scripted-key")
    with pytest.raises(ProviderUnavailableError, match=re.escape(f"langchain-openclaw-memory[{extra}]")):
        build_provider(name, EmbeddingSettings(provider=name))  # type: ignore[arg-type]


def test_status_says_why_auto_kept_the_local_model_despite_a_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOYAGE_API_KEY", "sk-scripted-key")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        reason = memory.status()["provider_reason"]
    assert "VOYAGE_API_KEY set" in reason and "embedding.model" in reason


def test_auto_follows_openclaws_order_when_the_local_model_cannot_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.embeddings.factory import auto_reason, create_provider

    for variable in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "VOYAGE_API_KEY",
                     "MISTRAL_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    missing = EmbeddingSettings(local_model_path=tmp_path / "absent.onnx")
    assert create_provider(missing).provider is None  # no key: nothing to fall to
    monkeypatch.setenv("VOYAGE_API_KEY", "sk-scripted-key")
    monkeypatch.setenv("GEMINI_API_KEY", "sk-scripted-key")
    chosen = create_provider(missing)  # gemini comes before voyage in the documents' order
    assert chosen.provider is not None and chosen.provider.id == "gemini"
    assert chosen.fallback is not None and chosen.fallback["from"] == "local"
    reason = auto_reason(missing, "gemini")
    assert reason is not None and "GEMINI_API_KEY" in reason and "could not load" in reason
    assert create_provider(EmbeddingSettings()).provider.id == "local"  # type: ignore[union-attr]
