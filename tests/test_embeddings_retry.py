"""retry_call and Retry-After parsing (pure functions, no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.retry import parse_retry_after, retry_call
from openclaw_memory.errors import EmbeddingError


class Flaky:
    """Raises the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: EmbeddingError) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def retryable(retry_after: float | None = None) -> EmbeddingError:
    return EmbeddingError("busy", status=429, retry_after=retry_after, retryable=True)


def run(fn: Flaky, waits: list[float], **kwargs: float) -> str:
    options = {"max_retries": 6, "base": 0.5, "cap": 60.0} | kwargs
    return retry_call(fn, sleep=waits.append, rng=lambda: 0.0, **options)  # type: ignore[arg-type]


def test_default_schedule_outlasts_a_sixty_second_rate_window():
    defaults = EmbeddingSettings()
    waits: list[float] = []
    with pytest.raises(EmbeddingError, match="gave up after 6 retries"):
        run(
            Flaky(*[retryable()] * 7),
            waits,
            max_retries=defaults.max_retries,
            base=defaults.retry_base_seconds,
            cap=defaults.retry_max_seconds,
        )
    assert waits[:5] == [0.5, 1.0, 2.0, 4.0, 8.0]  # doubling
    assert sum(waits) == pytest.approx(60.0)


def test_retry_after_replaces_the_backoff_and_is_capped():
    waits: list[float] = []
    assert run(Flaky(retryable(3.0), retryable(500.0)), waits, cap=30.0) == "ok"
    assert waits == [3.0, 30.0]


def test_jitter_only_lengthens_waits():
    waits: list[float] = []
    retry_call(
        Flaky(retryable(), retryable()),
        max_retries=5,
        base=1.0,
        cap=60.0,
        sleep=waits.append,
        rng=lambda: 0.999,
    )
    assert 1.0 < waits[0] < 1.2 and 2.0 < waits[1] < 2.4


def test_non_retryable_error_is_raised_at_once_unchanged():
    error = EmbeddingError("bad request", status=400)
    fn, waits = Flaky(error), []
    with pytest.raises(EmbeddingError) as caught:
        run(fn, waits)
    assert caught.value is error and fn.calls == 1 and waits == []


def test_zero_retries_means_one_attempt():
    fn, waits = Flaky(retryable()), []
    with pytest.raises(EmbeddingError, match=r"^busy$"):
        run(fn, waits, max_retries=0)
    assert fn.calls == 1


def test_parse_retry_after_forms():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "12"}) == 12.0
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": "Thu, 01 Jan 2026 12:00:30 GMT"}, now=now) == 30.0
    assert parse_retry_after({"Retry-After": "Thu, 01 Jan 2026 11:00:00 GMT"}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({"Retry-After": "-5"}) == 0.0
    assert parse_retry_after({}) is None


def test_an_address_where_nothing_answers_is_retried_twice_briefly():
    refused = EmbeddingError("connection failed", retryable=True, unreachable=True)
    waits: list[float] = []
    with pytest.raises(EmbeddingError, match="gave up after 2 retries") as caught:
        run(Flaky(*[refused] * 7), waits)
    assert waits == [0.5, 1.0] and caught.value.unreachable


def test_only_a_rate_limit_stretches_the_last_wait_to_the_rate_window():
    server_error = EmbeddingError("HTTP 503", status=503, retryable=True)
    waits: list[float] = []
    with pytest.raises(EmbeddingError, match="gave up after 6 retries"):
        run(Flaky(*[server_error] * 7), waits)
    assert waits == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]  # plain doubling, no wait for a window


def test_a_connection_never_made_is_told_from_one_that_dropped_along_the_causes():
    import httpx

    from openclaw_memory.embeddings.retry import never_connected

    refused = httpx.ConnectError("[Errno 111] Connection refused")
    wrapped = RuntimeError("client error")
    wrapped.__cause__ = refused
    assert never_connected(refused) and never_connected(wrapped)
    assert not never_connected(httpx.ReadError("connection reset mid-answer"))
    assert not never_connected(TimeoutError("slow"))
