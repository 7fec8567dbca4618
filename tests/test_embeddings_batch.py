"""Large backfills through the OpenAI Batch API, against a scripted Batch API server on
127.0.0.1 (files upload, batch create, poll, output file): vectors in order, a job resumed
after a timeout instead of submitted twice, failed and expired jobs falling back to online
requests, queries and small calls never batched."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai_server import FakeOpenAIServer, RecordedRequest, Reply, fake_vector, json_reply

from openclaw_memory import MemoryIndex
from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.factory import build_provider
from openclaw_memory.errors import EmbeddingError

DIMS = 8


class BatchAPI:
    """The Batch API's endpoints, with jobs that finish after ``polls`` polls as ``outcome``."""

    def __init__(self, server: FakeOpenAIServer, *, outcome: str = "completed",
                 polls: int = 2) -> None:
        self.server, self.outcome, self.polls = server, outcome, polls
        self.uploads: list[list[dict[str, Any]]] = []
        self.created = 0
        server.route("/v1/files", self.upload)
        server.route("/v1/batches", self.create)

    def upload(self, request: RecordedRequest) -> Reply:
        text = request.body.decode("utf-8", "replace")
        lines = [json.loads(m) for m in re.findall(r'^\{"custom_id".*\}$', text, re.MULTILINE)]
        self.uploads.append(lines)
        n = len(self.uploads)
        return json_reply({"id": f"file_in_{n}", "object": "file", "bytes": len(request.body),
                           "created_at": 0, "filename": "embeddings.jsonl", "purpose": "batch",
                           "status": "processed"})

    def create(self, request: RecordedRequest) -> Reply:
        self.created += 1
        batch_id, lines = f"batch_{self.created}", self.uploads[-1]
        seen = {"n": 0}

        def retrieve(_request: RecordedRequest) -> Reply:
            seen["n"] += 1
            status = "in_progress" if seen["n"] < self.polls else self.outcome
            body = _batch(batch_id, status)
            if status == "completed":
                body["output_file_id"] = f"out_{batch_id}"
            if status == "failed":
                body["errors"] = {"object": "list", "data": [{"code": "x", "message": "bad input"}]}
            return json_reply(body)

        def output(_request: RecordedRequest) -> Reply:
            rows = [{"id": f"req_{line['custom_id']}", "custom_id": line["custom_id"], "error": None,
                     "response": {"status_code": 200, "request_id": "r", "body": {
                         "object": "list", "model": line["body"]["model"],
                         "data": [{"object": "embedding", "index": i,
                                   "embedding": fake_vector(t, DIMS)}
                                  for i, t in enumerate(line["body"]["input"])]}}}
                    for line in reversed(lines)]  # out of order, as the service may answer
            return Reply(200, "\n".join(json.dumps(r) for r in rows).encode(),
                         {"Content-Type": "application/octet-stream"})

        self.server.route(f"/v1/batches/{batch_id}", retrieve)
        self.server.route(f"/v1/files/out_{batch_id}/content", output)
        return json_reply(_batch(batch_id, "validating"))


def _batch(batch_id: str, status: str) -> dict[str, Any]:
    return {"id": batch_id, "object": "batch", "endpoint": "/v1/embeddings",
            "input_file_id": "file_in", "completion_window": "24h", "status": status,
            "created_at": 0}


def _provider(server: FakeOpenAIServer, **batch: Any) -> Any:
    settings = EmbeddingSettings(provider="openai", base_url=server.base_url, model="scripted",
                                 batch_max_tokens=50, retry_base_seconds=0.0,
                                 batch={"enabled": True, "min_inputs": 3,
                                        "poll_interval_seconds": 0.01, **batch})
    return build_provider("openai", settings)


def test_a_backfill_goes_through_one_batch_job_and_comes_back_in_order() -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        api = BatchAPI(server)
        provider = _provider(server)
        texts = [f"note number {n} about the heron migration" for n in range(30)]
        rows = provider.embed_documents(texts)
        assert rows.shape == (30, DIMS) and api.created == 1 and len(api.uploads[0]) > 1
        assert server.requests_to("/v1/embeddings") == []  # no online request
        online = build_provider("openai", EmbeddingSettings(provider="openai", model="scripted",
                                                            base_url=server.base_url))
        assert abs(float(rows[17] @ online.embed_documents([texts[17]])[0]) - 1.0) < 1e-5
        provider.embed_query("a question")
        provider.embed_documents(["one", "two"])  # under min_inputs
        assert api.created == 1 and len(server.requests_to("/v1/embeddings")) == 3


def test_a_job_still_running_at_the_timeout_is_resumed_not_submitted_again() -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        api = BatchAPI(server, polls=10**6)
        texts = [f"note {n}" for n in range(5)]
        with pytest.raises(EmbeddingError, match="resumes them") as caught:
            _provider(server, timeout_minutes=0.001).embed_documents(texts)
        assert caught.value.status == 202 and api.created == 1
        api.polls = 0  # it finished meanwhile
        rows = _provider(server).embed_documents(texts)  # a new process: the ledger remains
        assert rows.shape == (5, DIMS) and api.created == 1 and len(api.uploads) == 1


@pytest.mark.parametrize("outcome", ["failed", "expired"])
def test_a_failed_or_expired_job_falls_back_to_online_requests(outcome: str,
                                                               tmp_path: Path) -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        BatchAPI(server, outcome=outcome)
        ws = tmp_path / "ws"
        (ws / "memory").mkdir(parents=True)
        for n in range(6):
            (ws / "memory" / f"2026-01-0{n + 1}.md").write_text(f"- Heron note {n}.\n")
        with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={
                "provider": "openai", "base_url": server.base_url, "model": "scripted",
                "retry_base_seconds": 0.0, "batch": {"enabled": True, "min_inputs": 3,
                                                     "poll_interval_seconds": 0.01}}) as memory:
            report = memory.sync()
            assert report.vectors_pending == 0
            assert memory.search("heron note").mode == "hybrid"
            assert memory.provider_choice().provider.batches.last_outcome == outcome  # type: ignore[union-attr]
        assert server.requests_to("/v1/embeddings")  # the vectors came online


def test_a_first_sync_indexes_text_then_embeds_every_file_in_one_job(tmp_path: Path) -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        api = BatchAPI(server)
        ws = tmp_path / "ws"
        (ws / "memory").mkdir(parents=True)
        for n in range(12):
            (ws / "memory" / f"2026-02-{n + 1:02d}.md").write_text(f"- Osprey note {n}.\n")
        with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={
                "provider": "openai", "base_url": server.base_url, "model": "scripted",
                "batch": {"enabled": True, "min_inputs": 3,
                          "poll_interval_seconds": 0.01}}) as memory:
            report = memory.sync()
            assert report.vectors_pending == 0 and api.created == 1
            assert sum(len(line["body"]["input"]) for line in api.uploads[0]) == 12
            assert server.requests_to("/v1/embeddings") == []
            response = memory.search("osprey note")
            assert response.mode == "hybrid" and response.results


def test_without_waiting_a_sync_goes_on_keyword_only_and_a_later_one_collects_the_job(
        tmp_path: Path) -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        api = BatchAPI(server, polls=10**6)
        ws = tmp_path / "ws"
        (ws / "memory").mkdir(parents=True)
        for n in range(5):
            (ws / "memory" / f"2026-03-0{n + 1}.md").write_text(f"- Plover note {n}.\n")
        options: dict[str, Any] = {
            "provider": "openai", "base_url": server.base_url, "model": "scripted",
            "batch": {"enabled": True, "min_inputs": 3, "wait": False,
                      "poll_interval_seconds": 0.01}}
        with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding=options) as memory:
            first = memory.sync()
            assert first.vectors_pending == 5 and api.created == 1
            assert memory.search("plover note").results  # by keyword meanwhile
            api.polls = 0  # the job finished
            second = memory.sync()
            assert second.vectors_pending == 0 and api.created == 1 and len(api.uploads) == 1
        # Online: the query alone; the notes' vectors came from the job.
        assert [r.json["input"] for r in server.requests_to("/v1/embeddings")] == [
            ["plover note"]]


class FlightLog:
    """The most of the Batch API's jobs in flight at once (created, output not yet read)."""

    def __init__(self, api: BatchAPI) -> None:
        self.most = 0
        server, original = api.server, api.create

        def create(request: RecordedRequest) -> Reply:
            reply = original(request)
            read = len([r for r in server.requests if r.path.endswith("/content")])
            self.most = max(self.most, api.created - read)
            return reply

        server.route("/v1/batches", create)


def test_a_backfill_past_one_jobs_limit_runs_as_several_jobs_two_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.embeddings.openai_batch import OpenAIBatches

    monkeypatch.setattr(OpenAIBatches, "max_inputs", 7)
    with FakeOpenAIServer(dims=DIMS) as server:
        api = BatchAPI(server)
        flights = FlightLog(api)
        texts = [f"note {n} on the avocet colony" for n in range(30)]
        rows = _provider(server).embed_documents(texts)
        assert api.created >= 5 and flights.most == 2  # the default concurrency
        assert all(sum(len(line["body"]["input"]) for line in job) <= 7 for job in api.uploads)
        assert server.requests_to("/v1/embeddings") == []
        online = build_provider("openai", EmbeddingSettings(provider="openai", model="scripted",
                                                            base_url=server.base_url))
        assert abs(float(rows[29] @ online.embed_documents([texts[29]])[0]) - 1.0) < 1e-5


def test_one_failed_job_among_several_embeds_only_its_texts_online(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.embeddings.openai_batch import OpenAIBatches

    monkeypatch.setattr(OpenAIBatches, "max_inputs", 10)
    with FakeOpenAIServer(dims=DIMS) as server:
        api = BatchAPI(server)
        failing = {"n": 0}
        create = api.create

        def second_fails(request: RecordedRequest) -> Reply:
            reply = create(request)
            failing["n"] += 1
            if failing["n"] == 2:
                server.route(f"/v1/batches/batch_{api.created}",
                             lambda _r: json_reply({**_batch(f"batch_{api.created}", "failed"),
                                                    "errors": {"object": "list", "data": []}}))
            return reply

        server.route("/v1/batches", second_fails)
        provider = _provider(server, concurrency=3)
        texts = [f"note {n} on the stilt colony" for n in range(30)]
        rows = provider.embed_documents(texts)
        assert rows.shape == (30, DIMS) and api.created >= 3
        failed = [t for line in api.uploads[1] for t in line["body"]["input"]]
        online = [t for r in server.requests_to("/v1/embeddings") for t in r.json["input"]]
        assert online == failed and failed  # the failed job's texts, and no other
        assert provider.batches.last_outcome == "failed"


def test_without_waiting_jobs_past_the_concurrency_are_submitted_by_later_syncs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.embeddings.openai_batch import OpenAIBatches

    monkeypatch.setattr(OpenAIBatches, "max_inputs", 5)
    with FakeOpenAIServer(dims=DIMS) as server:
        api = BatchAPI(server, polls=10**6)
        texts = [f"note {n} on the godwit flock" for n in range(15)]
        with pytest.raises(EmbeddingError, match="later sync") as caught:
            _provider(server, wait=False).embed_documents(texts)
        assert caught.value.status == 202 and api.created == 2  # two in flight, one waiting
        api.polls = 0
        rows = _provider(server, wait=False).embed_documents(texts)
        assert rows.shape == (15, DIMS) and api.created == 3


# -- Gemini's async batch embeddings -----------------------------------------------------------

class GeminiBatchAPI:
    """``asyncBatchEmbedContent`` and ``batches/{id}``, with jobs that end after ``polls``
    polls in ``state`` (Gemini's BATCH_STATE_ names)."""

    def __init__(self, server: FakeOpenAIServer, *, state: str = "BATCH_STATE_SUCCEEDED",
                 polls: int = 2) -> None:
        self.server, self.state, self.polls = server, state, polls
        self.jobs: list[list[str]] = []
        for version in ("v1", "v1beta"):
            server.route(f"/{version}/models/gemini-embedding-001:asyncBatchEmbedContent",
                         self.create)
            server.route(f"/{version}/models/gemini-embedding-001:batchEmbedContents",
                         self.online)

    @staticmethod
    def online(request: RecordedRequest) -> Reply:
        texts = [r["content"]["parts"][0]["text"] for r in request.json["requests"]]
        return json_reply({"embeddings": [{"values": fake_vector(t, DIMS)} for t in texts]})

    def create(self, request: RecordedRequest) -> Reply:
        asked = request.json["batch"]["inputConfig"]["requests"]["requests"]
        texts = [r["request"]["content"]["parts"][0]["text"] for r in asked]
        assert all(r["request"].get("taskType") == "RETRIEVAL_DOCUMENT" for r in asked)
        self.jobs.append(texts)
        name = f"batches/job{len(self.jobs)}"
        seen = {"n": 0}

        def get(_request: RecordedRequest) -> Reply:
            seen["n"] += 1
            state = "BATCH_STATE_RUNNING" if seen["n"] < self.polls else self.state
            body: dict[str, Any] = {"name": name, "metadata": {"state": state}}
            if state == "BATCH_STATE_SUCCEEDED":
                body["metadata"]["output"] = {"inlinedResponses": {"inlinedResponses": [
                    {"response": {"embedding": {"values": fake_vector(t, DIMS)}}}
                    for t in texts]}}
            return json_reply(body)

        for version in ("v1", "v1beta"):
            self.server.route(f"/{version}/{name}", get)
        return json_reply({"name": name, "metadata": {"state": "BATCH_STATE_PENDING"}})


def _gemini(server: FakeOpenAIServer, **batch: Any) -> Any:
    settings = EmbeddingSettings(provider="gemini", base_url=server.url, api_key="sk-scripted",
                                 retry_base_seconds=0.0,
                                 batch={"enabled": True, "min_inputs": 3,
                                        "poll_interval_seconds": 0.01, **batch})
    return build_provider("gemini", settings)


def test_gemini_backfills_go_through_its_async_batch_and_come_back_in_order() -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        api = GeminiBatchAPI(server)
        provider = _gemini(server)
        texts = [f"note number {n} about the dunlin roost" for n in range(30)]
        rows = provider.embed_documents(texts)
        assert rows.shape == (30, DIMS) and api.jobs == [texts]
        assert not [r for r in server.requests if r.path.endswith(":batchEmbedContents")]
        expected = np.asarray(fake_vector(texts[17], DIMS), np.float32)
        assert np.allclose(rows[17], expected / np.linalg.norm(expected), atol=1e-5)
        provider.embed_query("a question")  # queries are never batched
        assert len([r for r in server.requests if r.path.endswith(":batchEmbedContents")]) == 1


@pytest.mark.parametrize("state", ["BATCH_STATE_FAILED", "BATCH_STATE_EXPIRED"])
def test_a_failed_or_expired_gemini_job_falls_back_to_online_requests(state: str) -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        GeminiBatchAPI(server, state=state)
        provider = _gemini(server)
        texts = [f"note {n} about the knot flock" for n in range(5)]
        assert provider.embed_documents(texts).shape == (5, DIMS)
        assert provider.batches.last_outcome == state.removeprefix("BATCH_STATE_").lower()
        online = [r for r in server.requests if r.path.endswith(":batchEmbedContents")]
        assert [p["content"]["parts"][0]["text"] for r in online for p in r.json["requests"]
                ] == texts


def test_a_gemini_job_still_running_is_resumed_by_the_next_process() -> None:
    with FakeOpenAIServer(dims=DIMS) as server:
        api = GeminiBatchAPI(server, polls=10**6)
        texts = [f"note {n} about the sanderling" for n in range(4)]
        with pytest.raises(EmbeddingError, match="resumes them"):
            _gemini(server, timeout_minutes=0.001).embed_documents(texts)
        api.polls = 0
        assert _gemini(server).embed_documents(texts).shape == (4, DIMS)
        assert len(api.jobs) == 1
