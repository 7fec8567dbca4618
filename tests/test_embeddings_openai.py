"""OpenAIProvider against a real HTTP server on 127.0.0.1 (tests/openai_server.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from openai_server import (
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    embeddings,
    fake_vector,
    insufficient_quota,
    json_reply,
    malformed_json,
    missing_data,
    mixed_dims,
    non_numeric,
    rate_limited,
    refuses_packed,
    server_error,
    slow,
    wrong_count,
    wrong_dims,
)

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.openai import MAX_INPUT_TOKENS, OpenAIProvider, plan_batches
from openclaw_memory.errors import EmbeddingError, ProviderUnavailableError
from openclaw_memory.indexing.tokens import count_tokens

DIMS = 8


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The client would pick these up and talk to a proxy or another endpoint.
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(dims=DIMS) as running:
        yield running


class SleepRecorder:
    """Replaces the backoff sleep: records the waits instead of sleeping them."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make_settings(server: FakeOpenAIServer, **overrides: Any) -> EmbeddingSettings:
    values: dict[str, Any] = {
        "provider": "openai",
        "base_url": server.base_url,
        "api_key": "sk-test-secret",
        "timeout_seconds": 5.0,
        "retry_base_seconds": 0.5,
        "retry_max_seconds": 60.0,
    }
    return EmbeddingSettings(**(values | overrides))


def make_provider(
    server: FakeOpenAIServer, sleep: SleepRecorder | None = None, **overrides: Any
) -> OpenAIProvider:
    return OpenAIProvider(make_settings(server, **overrides), sleep=sleep, rng=lambda: 0.0)


def expected_rows(texts: list[str], dims: int = DIMS) -> np.ndarray:
    return np.array([fake_vector(t, dims) for t in texts], dtype=np.float32)


# -- batching and order ---------------------------------------------------------------------


def test_batches_split_at_token_budget_and_results_follow_input_order(server):
    texts = [f"note {i}: " + "alpha beta gamma " * (3 + i % 5) for i in range(20)]
    server.route("/v1/embeddings", embeddings(shuffle=True))  # items come back reversed
    provider = make_provider(server, batch_max_tokens=60)

    vectors = provider.embed_documents(texts)

    counts = [count_tokens(t, "cl100k_base") for t in texts]
    # Batches run concurrently, so they may arrive in any order; each is a contiguous run.
    sent = sorted((r.json["input"] for r in server.requests), key=lambda b: texts.index(b[0]))
    assert len(sent) == len(plan_batches(counts, 60, 2048)) > 1
    assert [t for batch in sent for t in batch] == texts
    for batch in sent:
        assert sum(count_tokens(t, "cl100k_base") for t in batch) <= 60
    np.testing.assert_allclose(vectors, expected_rows(texts), atol=1e-6)


def test_vectors_are_asked_for_as_base64_and_read_as_floats_would_be(server):
    texts = ["alpha", "beta", "gamma"]
    provider = make_provider(server)

    vectors = provider.embed_documents(texts)

    # (the scripted server answers a base64 request as OpenAI does: packed float32)
    assert server.requests[0].json["encoding_format"] == "base64"
    np.testing.assert_allclose(vectors, expected_rows(texts), atol=1e-6)


def test_a_server_ignoring_base64_is_read_in_floats(server):
    def floats_always(request: RecordedRequest) -> Reply:
        body = {"object": "list", "model": "fake", "usage": {},
                "data": [{"object": "embedding", "index": i, "embedding": fake_vector(t, DIMS)}
                         for i, t in enumerate(request.json["input"])]}
        return json_reply(body)

    server.route("/v1/embeddings", floats_always)
    vectors = make_provider(server).embed_documents(["a", "b"])

    np.testing.assert_allclose(vectors, expected_rows(["a", "b"]), atol=1e-6)


@pytest.mark.parametrize("status", [400, 422])
def test_a_server_refusing_base64_is_asked_in_floats_from_then_on(server, status):
    server.route("/v1/embeddings", refuses_packed(status))
    sleep = SleepRecorder()
    provider = make_provider(server, sleep)

    first = provider.embed_documents(["a"])
    second = provider.embed_documents(["b"])

    formats = [r.json["encoding_format"] for r in server.requests]
    assert formats == ["base64", "float", "float"]  # one refusal, never asked again
    assert sleep.waits == []  # no backoff: the refusal is not the server's trouble
    np.testing.assert_allclose(np.vstack([first, second]), expected_rows(["a", "b"]), atol=1e-6)


def test_a_refusal_of_floats_too_is_the_error_reported(server):
    server.script(server_error(400), server_error(400))

    with pytest.raises(EmbeddingError, match="HTTP 400") as caught:
        make_provider(server, SleepRecorder()).embed_documents(["a"])

    assert caught.value.status == 400 and not caught.value.retryable
    assert [r.json["encoding_format"] for r in server.requests] == ["base64", "float"]


def test_plan_batches_puts_an_over_budget_text_alone_and_keeps_every_text():
    assert plan_batches([10, 200, 10, 10, 10], budget=25, max_inputs=100) == [(0, 1), (1, 2), (2, 4), (4, 5)]
    assert plan_batches([1] * 5, budget=100, max_inputs=2) == [(0, 2), (2, 4), (4, 5)]
    assert plan_batches([], budget=10, max_inputs=10) == []


def test_text_longer_than_model_limit_is_truncated_not_rejected(server):
    long_text = "memory " * (MAX_INPUT_TOKENS + 500)
    provider = make_provider(server)

    vectors = provider.embed_documents([long_text, "short"])

    sent = [text for r in server.requests for text in r.json["input"] if text != "short"]
    assert len(sent) == 1 and count_tokens(sent[0], "cl100k_base") <= MAX_INPUT_TOKENS
    assert long_text.startswith(sent[0]) and len(sent[0]) > len(long_text) * 0.9
    assert vectors.shape == (2, DIMS)


def test_empty_input_makes_no_request(server):
    provider = make_provider(server)
    assert provider.embed_documents([]).shape == (0, 0)
    assert server.requests == []


def test_query_vector_is_unit_length_float32(server):
    vector = make_provider(server).embed_query("where did I park?")
    assert vector.shape == (DIMS,) and vector.dtype == np.float32
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)


# -- concurrency ----------------------------------------------------------------------------


def test_requests_in_flight_never_exceed_concurrency_even_across_callers(server):
    server.route("/v1/embeddings", embeddings(delay=0.15))
    provider = make_provider(server, concurrency=2, batch_max_tokens=5)
    texts = [f"text number {i}" for i in range(6)]  # one request per text at this budget

    workers = [threading.Thread(target=provider.embed_documents, args=(texts,)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert len(server.requests) == 12
    assert server.max_in_flight == 2


# -- retries --------------------------------------------------------------------------------


def test_rate_limit_waits_for_retry_after_then_succeeds(server):
    server.script(rate_limited(retry_after="7"))
    sleep = SleepRecorder()

    vectors = make_provider(server, sleep).embed_documents(["a", "b"])

    assert sleep.waits == [7.0]
    assert len(server.requests) == 2
    np.testing.assert_allclose(vectors, expected_rows(["a", "b"]), atol=1e-6)


def test_retry_after_longer_than_cap_is_capped(server):
    server.script(rate_limited(retry_after="3600"))
    sleep = SleepRecorder()
    make_provider(server, sleep, retry_max_seconds=20).embed_documents(["a"])
    assert sleep.waits == [20.0]


def test_retry_after_ms_is_waited_as_asked(server):
    server.script(rate_limited(retry_after_ms="300"))
    sleep = SleepRecorder()
    make_provider(server, sleep).embed_documents(["a"])
    assert sleep.waits == [0.3]  # the milliseconds header, read as 0.3 s and waited once
    assert len(server.requests) == 2


def test_server_error_is_retried_with_exponential_backoff_then_succeeds(server):
    server.script(server_error(500), server_error(503))
    sleep = SleepRecorder()

    vectors = make_provider(server, sleep).embed_documents(["a"])

    assert sleep.waits == [0.5, 1.0]
    assert vectors.shape == (1, DIMS)


def test_exhausted_retries_raise_embedding_error_with_status(server):
    server.script(*[server_error(502)] * 3)
    sleep = SleepRecorder()

    with pytest.raises(EmbeddingError, match="gave up after 2 retries") as caught:
        make_provider(server, sleep, max_retries=2, retry_max_seconds=1).embed_documents(["a"])

    assert caught.value.status == 502 and caught.value.retryable
    assert len(server.requests) == 3


def test_timeout_is_retried_then_raises(server):
    server.script(slow(1.5), slow(1.5))
    provider = make_provider(server, SleepRecorder(), timeout_seconds=0.3, max_retries=1)

    with pytest.raises(EmbeddingError, match="timed out") as caught:
        provider.embed_documents(["a"])

    assert caught.value.status is None and caught.value.retryable
    assert len(server.requests) == 2


def test_timeout_then_success_returns_vectors(server):
    server.script(slow(1.5))
    provider = make_provider(server, SleepRecorder(), timeout_seconds=0.3)
    assert provider.embed_documents(["a"]).shape == (1, DIMS)


def test_insufficient_quota_is_not_retried_and_says_so(server):
    server.script(insufficient_quota())
    sleep = SleepRecorder()

    with pytest.raises(EmbeddingError, match="quota") as caught:
        make_provider(server, sleep).embed_documents(["a"])

    assert "retrying will not help" in str(caught.value)
    assert caught.value.status == 429 and not caught.value.retryable
    assert sleep.waits == [] and len(server.requests) == 1


def test_failing_batch_fails_the_whole_call(server):
    server.script(insufficient_quota())
    provider = make_provider(server, SleepRecorder(), batch_max_tokens=3, concurrency=2)
    with pytest.raises(EmbeddingError, match="quota"):
        provider.embed_documents([f"text {i}" for i in range(4)])


def test_failure_of_one_batch_cuts_short_the_retry_wait_of_the_others(server):
    # One batch is told to wait an hour; the other fails for good, so the wait is abandoned.
    server.script(rate_limited(retry_after="3600"), insufficient_quota())
    provider = make_provider(server, batch_max_tokens=3, concurrency=2,
                             retry_max_seconds=3600)  # real sleep
    raised: list[BaseException] = []

    def call() -> None:
        try:
            provider.embed_documents(["text one", "text two"])
        except BaseException as exc:  # reported below
            raised.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    # A hang guard, not a speed limit: a wait served in full would hold the call an hour.
    worker.join(timeout=300)
    assert not worker.is_alive(), "the hour-long Retry-After was waited out, not abandoned"
    assert len(raised) == 1 and isinstance(raised[0], EmbeddingError)
    assert "quota" in str(raised[0])
    assert len(server.requests) == 2


# -- malformed answers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (malformed_json(), "not JSON"),
        (missing_data(), "no 'data'"),
        (wrong_count(), "1 embeddings for 2 inputs"),
        (non_numeric(), "not a list of numbers"),
        (mixed_dims(), "differing dimensions"),
    ],
)
def test_malformed_response_raises_clear_error_without_retry(server, behaviour, message):
    server.script(behaviour)
    sleep = SleepRecorder()

    with pytest.raises(EmbeddingError, match=message) as caught:
        make_provider(server, sleep).embed_documents(["a", "b"])

    assert "malformed response" in str(caught.value) and not caught.value.retryable
    assert sleep.waits == []


def test_dimensions_are_sent_only_when_configured_and_enforced(server):
    make_provider(server).embed_documents(["a"])
    assert "dimensions" not in server.requests[-1].json

    server.script(wrong_dims(4))
    provider = make_provider(server, dimensions=16)
    with pytest.raises(EmbeddingError, match="got 4-dimensional vectors, requested 16"):
        provider.embed_documents(["a"])
    assert server.requests[-1].json["dimensions"] == 16
    assert provider.embed_documents(["a"]).shape == (1, 16)


def test_width_change_between_responses_is_rejected(server):
    provider = make_provider(server)
    provider.embed_documents(["a"])
    server.script(wrong_dims(12))
    with pytest.raises(EmbeddingError, match=f"got 12-dimensional vectors, expected {DIMS}"):
        provider.embed_documents(["b"])


# -- configuration --------------------------------------------------------------------------


def test_headers_base_url_and_model_reach_the_server(server):
    provider = make_provider(server, headers={"X-Team": "memory"}, model="my-embedder")
    provider.embed_documents(["a"])

    request = server.requests[0]
    assert request.path == "/v1/embeddings"
    assert request.headers["x-team"] == "memory"
    assert request.headers["authorization"] == "Bearer sk-test-secret"
    assert request.json["model"] == "my-embedder"
    assert request.json["encoding_format"] == "base64"


def test_provider_key_ignores_credentials_but_not_other_headers(server):
    def key(**overrides: Any) -> str:
        return make_provider(server, **overrides).provider_key

    base = key(headers={"Authorization": "Bearer one"}, api_key="sk-one")
    assert base == key(headers={"authorization": "Bearer two", "api-key": "x"}, api_key="sk-two")
    assert base == key()
    assert base != key(headers={"X-Team": "other"})
    assert base != key(dimensions=4)
    assert base != key(model="text-embedding-3-large")


def test_missing_api_key_is_provider_unavailable(server):
    settings = make_settings(server, api_key=None, base_url="https://api.example.com/v1")
    with pytest.raises(ProviderUnavailableError, match="no API key"):
        OpenAIProvider(settings)


def test_local_server_needs_no_api_key(server):
    provider = make_provider(server, api_key=None)
    provider.embed_documents(["a"])
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_api_key_is_read_from_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    make_provider(server, api_key=None).embed_documents(["a"])
    assert server.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_a_slow_drip_server_is_cut_at_the_total_deadline(server):
    from openai_server import drip

    server.route("/v1/embeddings", drip(0.25))
    provider = OpenAIProvider(make_settings(server, timeout_seconds=1, max_retries=0))
    with pytest.raises(EmbeddingError, match="longer than 1 s in all"):
        provider.embed_documents(["a text whose answer drips in"])
    body = server.dripped
    # The client hung up after about 1 s of a body that would take minutes to arrive.
    assert 0 < body < 40


def test_a_server_that_is_not_there_is_given_up_on_after_two_brief_retries() -> None:
    """A refused connection (nothing listens on the port) is not an outage worth a minute."""
    import socket

    with socket.socket() as probe:  # a port nobody listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        waits: list[float] = []
        settings = EmbeddingSettings(provider="openai", base_url=f"http://127.0.0.1:{port}/v1",
                                     api_key="sk-test-secret", retry_base_seconds=0.5)
        provider = OpenAIProvider(settings, sleep=waits.append, rng=lambda: 0.0)
        with pytest.raises(EmbeddingError, match="gave up after 2 retries") as caught:
            provider.embed_documents(["hello"])
    assert caught.value.unreachable and waits == [0.5, 1.0]
