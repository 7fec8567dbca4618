"""A run-time outage of the primary embedding provider: searches are answered from the
fallback provider's own index (never mixing two models' vectors) and say so; notes written
meanwhile are found; once the primary answers again, searches go back to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openai_server import FakeOpenAIServer, RecordedRequest, Reply, embeddings, fake_vector, json_reply
from waiting import wait_until

from openclaw_memory import MemoryIndex


def ollama_embed(request: RecordedRequest) -> Reply:
    body = request.json
    return json_reply({"model": body["model"],
                       "embeddings": [fake_vector(t, 16) for t in body["input"]]})


def test_an_outage_switches_searches_to_the_fallbacks_index_and_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-05.md").write_text("- We chose PostgreSQL for billing.\n")
    with FakeOpenAIServer(dims=8) as server:
        server.route("/api/embed", ollama_embed)
        settings: dict[str, Any] = {
            "provider": "openai", "base_url": server.base_url, "model": "scripted-embed",
            "fallback": "ollama", "fallback_model": "nomic-embed-text",
            "fallback_base_url": server.url,
            "probe_interval_seconds": 0.2, "max_retries": 0, "query_max_retries": 0}
        with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding=settings,
                              timezone="UTC") as memory:
            memory.sync()
            healthy = memory.search("billing database")
            assert healthy.fallback is None and healthy.mode == "hybrid"

            server.route("/v1/embeddings", lambda r: json_reply({"error": {"message": "down"}}, 503))
            during = memory.search("billing database")
            assert during.results and during.mode == "hybrid"
            assert during.fallback is not None and during.fallback["from"] == "openai"
            assert any("ollama provider's own index" in n for n in during.notes)
            memory.write("The heron migration finished on Tuesday.")  # written in the outage
            memory.sync()  # a sync in the outage embeds the new note with the fallback
            standby = memory.standby._index
            assert standby is not None and standby.store.missing_vectors() == 0  # type: ignore[attr-defined]
            assert standby.store.counts()["chunks"] == 2  # type: ignore[attr-defined]
            found = memory.search("heron migration")
            assert found.fallback is not None and "heron" in found.results[0].snippet
            status = memory.status()["fallback_index"]
            assert status["active"] and status["searches_answered"] >= 2
            assert Path(status["index_path"]).name == "i.fallback-ollama.sqlite"
            assert Path(status["index_path"]).exists()

            server.route("/v1/embeddings", embeddings(default_dims=8))  # the primary is back
            primary = memory.provider_choice().provider
            assert primary is not None
            wait_until(lambda: not primary.breaker.is_open)
            after = memory.search("heron migration")
            assert after.fallback is None and after.mode == "hybrid" and after.results
            assert not memory.status()["fallback_index"]["active"]
