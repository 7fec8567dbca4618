"""What kind of failure a model call raised: worth retrying later, too long, or final.

The flush turn must never retry forever (a 500 on every model step, a context-length 400
that will fail identically) nor give up on a passing outage at once.
"""

from __future__ import annotations

import re
from typing import Literal

from langchain_core.exceptions import ContextOverflowError

__all__ = ["FailureKind", "classify_failure"]

FailureKind = Literal["retryable", "context_overflow", "final"]
_OVERFLOW = re.compile(r"context[_ ]length|maximum context|context window|too many tokens|"
                       r"prompt is too long|input is too long", re.IGNORECASE)


def classify_failure(error: BaseException) -> FailureKind:
    """``retryable`` for 429, 5xx, 408/409, timeouts and connection errors (and unknown
    errors, retried a bounded number of times); ``context_overflow`` when the request was
    too long; ``final`` for any other client error (bad request, auth, not found)."""
    if isinstance(error, ContextOverflowError) or _OVERFLOW.search(str(error)):
        return "context_overflow"
    status = _status_of(error)
    if status is None or status in (408, 409, 429) or status >= 500:
        return "retryable"
    return "final" if 400 <= status < 500 else "retryable"


def _status_of(error: BaseException) -> int | None:
    for name in ("status_code", "status", "http_status"):
        value = getattr(error, name, None)
        if isinstance(value, int):
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None
