"""Retrying remote embedding calls: exponential backoff, jitter and the server's advice.

Only failures marked ``retryable`` (429 rate limits, 5xx, timeouts, dropped connections) are
retried. The schedule doubles from ``base`` (0.5, 1, 2, 4, 8 s with the defaults), each wait
capped at ``cap``, and a server's ``Retry-After`` replaces the computed wait. Per-minute rate
limits are the common 429 cause, and doubling alone would give up after ~31 s, inside the
same window; so after a 429 the last retry waits until at least ``window`` seconds (60)
have passed since the first failure, and the final attempt lands in a fresh rate window.
An address where nothing answers (connection refused, unknown host) is retried at most
:data:`UNREACHABLE_RETRIES` times: a server that is not there rarely appears within the
minute, and a one-shot command should not wait that minute to answer keyword-only.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TypeVar

from openclaw_memory.errors import EmbeddingError

__all__ = ["RATE_WINDOW_SECONDS", "UNREACHABLE_RETRIES", "backoff_delay", "never_connected",
           "parse_retry_after", "retry_call"]

T = TypeVar("T")

RATE_WINDOW_SECONDS = 60.0
UNREACHABLE_RETRIES = 2  # 0.5 + 1 s with the defaults: a restart in progress, not an outage
# Up to +20 % on computed waits, so clients that failed together do not retry in lockstep.
# Jitter only ever lengthens a wait, which keeps the window guarantee above intact.
_JITTER = 0.2


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait advised by ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date).

    Returns None when there is no usable advice. ``retry-after-ms`` (OpenAI, Azure) wins
    because it is more precise.
    """
    lower = {name.lower(): value for name, value in headers.items()}
    millis = _as_float(lower.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000.0)
    raw = lower.get("retry-after")
    if raw is None:
        return None
    seconds = _as_float(raw)
    if seconds is not None:
        return max(0.0, seconds)
    return _seconds_until(raw, now or datetime.now(UTC))


def _as_float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _seconds_until(http_date: str, now: datetime) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a naive result means the zone was absent
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def backoff_delay(
    attempt: int,
    retry_after: float | None,
    *,
    base: float,
    cap: float,
    rng: Callable[[], float],
) -> float:
    """Wait before retry number ``attempt + 1``: the server's advice, else base * 2**attempt."""
    if retry_after is not None:
        return min(cap, max(0.0, retry_after))
    return min(cap, base * (2.0**attempt) * (1.0 + _JITTER * rng()))


def retry_call(
    fn: Callable[[], T],
    *,
    max_retries: int,
    base: float,
    cap: float,
    sleep: Callable[[float], object] = time.sleep,
    rng: Callable[[], float] = random.random,
    window: float = RATE_WINDOW_SECONDS,
) -> T:
    """Call ``fn`` and retry it on retryable :class:`EmbeddingError` up to ``max_retries`` times.

    The final error says how many retries were made. Non-retryable errors (bad request,
    authentication, exhausted quota, malformed responses) are raised at once.
    """
    waited = 0.0
    attempt = 0
    while True:
        try:
            return fn()
        except EmbeddingError as exc:
            limit = min(max_retries, UNREACHABLE_RETRIES) if exc.unreachable else max_retries
            if not exc.retryable or attempt >= limit:
                if attempt == 0:
                    raise
                raise _gave_up(exc, attempt) from exc
            delay = backoff_delay(attempt, exc.retry_after, base=base, cap=cap, rng=rng)
            if attempt == max_retries - 1 and exc.status == 429:
                delay = max(delay, min(cap, window - waited))
            sleep(delay)
            waited += delay
            attempt += 1


def never_connected(exc: BaseException) -> bool:
    """The connection was never made (refused, unknown host), as opposed to one that dropped.

    Matched by name along the exception's causes: the clients' transports are httpx or, in
    some ``openai`` releases, a renamed copy of it (``httpx2``); all name it ``ConnectError``."""
    cause: BaseException | None = exc
    while cause is not None:
        if any(kind.__name__ == "ConnectError" for kind in type(cause).__mro__):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _gave_up(exc: EmbeddingError, retries: int) -> EmbeddingError:
    return EmbeddingError(
        f"{exc} (gave up after {retries} {'retry' if retries == 1 else 'retries'})",
        status=exc.status,
        retry_after=exc.retry_after,
        retryable=exc.retryable,
        unreachable=exc.unreachable,
    )
