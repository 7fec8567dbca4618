"""Invalid vectors from a server (NaN, infinite, overflowing, all-zero) are rejected per text
with a warning: the text stays findable by keyword, no vector is stored for it, the count shows
in status, and the vectors are asked for again later."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai_server import FakeOpenAIServer, RecordedRequest, Reply, fake_vector

from openclaw_memory import MemoryIndex

BAD = {"nan-note": float("nan"), "inf-note": float("inf"), "huge-note": 1e39, "zero-note": 0.0}


def _payload(request: RecordedRequest) -> Reply:
    import json

    inputs = request.json["input"]
    data = []
    for i, text in enumerate(inputs if isinstance(inputs, list) else [inputs]):
        marker = next((m for m in BAD if m in text), None)
        vector: list[Any] = fake_vector(text, 16)
        if marker is not None:
            vector = [BAD[marker]] * 16
        data.append({"object": "embedding", "index": i, "embedding": vector})
    body = json.dumps({"object": "list", "model": "m", "data": data,
                       "usage": {"prompt_tokens": 0, "total_tokens": 0}})  # NaN/Infinity as JS does
    return Reply(200, body.encode(), {"Content-Type": "application/json"})


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dims=16) as running:
        running.route("/v1/embeddings", _payload)
        yield running


def test_invalid_vectors_are_rejected_per_text_and_counted(tmp_path: Path,
                                                            server: FakeOpenAIServer) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for name in BAD:
        (ws / "memory" / f"{name}.md").write_text(f"- The {name} mentions the walrus budget.\n")
    (ws / "memory" / "good.md").write_text("- A good note about the narwhal budget.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite",
                          embedding={"provider": "openai", "base_url": server.base_url,
                                     "api_key": "sk-test", "max_retries": 0,
                                     "model": "text-embedding-3-small"}) as memory:
        report = memory.sync()
        assert report.vectors_rejected == len(BAD) and report.indexed == len(BAD) + 1
        assert any("invalid" in w for w in report.warnings)
        assert memory.status()["vectors_missing"] == len(BAD)
        # The good vector is stored once, with its chunk; the invalid ones nowhere.
        assert memory.store.query("select count(*) from embedding_cache")[0][0] == 0
        assert memory.store.counts()["vectors"] == 1
        hits = memory.search("walrus budget", min_score=0.0).results
        assert {h.path for h in hits} >= {f"memory/{n}.md" for n in BAD}  # keyword side
        for hit in hits:
            if hit.path != "memory/good.md":
                assert hit.explanation.vector_score is None or hit.explanation.vector_score == 0.0
        again = memory.sync()  # asked for again, still invalid, still not stored
        assert again.vectors_backfilled == 0 and memory.status()["vectors_missing"] == len(BAD)
