"""Secrets never surface: API keys, credential headers and URL credentials are cut out of error
text, tool messages, CLI output, reprs and dumps.

A server that echoes the key it was sent (some do, in 400/401 bodies), a key passed as a
header or inside ``base_url`` (``https://user:key@host`` or ``?api_key=``): each would otherwise
reach a log, a model's context or a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["REDACTED", "SECRET_HEADERS", "redact_headers", "redact_text", "redact_url", "url_secrets"]

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})
# Shapes of credentials whatever their value: OpenAI-style keys and bearer tokens.
_SHAPES = (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), re.compile(r"(?i)\bbearer\s+[^\s\"',;]+"))
_MIN_SECRET = 6  # shorter values would redact ordinary words


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret value, and anything shaped like a key, replaced."""
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(REDACTED, text)
    return text


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: REDACTED if k.lower() in SECRET_HEADERS else v for k, v in headers.items()}


def redact_url(url: str) -> str:
    """The URL without a password in its user part nor values in its query string."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = urlencode([(k, REDACTED) for k, _ in parse_qsl(parts.query, keep_blank_values=True)],
                      safe="[]")
    return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str | None) -> list[str]:
    """The credential values a URL carries (user info, query values), to redact elsewhere."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [v for _, v in parse_qsl(parts.query)]
    if parts.password:
        found.append(parts.password)
    if parts.username and parts.password is None:
        found.append(parts.username)
    return found
