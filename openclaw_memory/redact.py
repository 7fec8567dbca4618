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

__all__ = ["REDACTED", "SAFE_HEADERS", "SECRET_HEADERS", "dsn_secrets", "redact_dsn", "redact_headers",
           "redact_text", "redact_url", "remember_secrets", "url_secrets"]

REDACTED = "[redacted]"
#: Headers known to carry a credential (a client may then start without an API key).
SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})
#: Headers whose values are shown: every other header may carry a credential (X-Goog-Api-Key,
#: Ocp-Apim-Subscription-Key, X-Auth-Token, any custom one) and is redacted.
SAFE_HEADERS = frozenset({
    "accept", "accept-encoding", "accept-language", "content-type", "user-agent",
    "openai-beta", "anthropic-version", "x-request-id", "cache-control"})
# Shapes of credentials whatever their value: OpenAI-style keys, bearer tokens, the password
# of a connection URL (scheme://user:password@) and of a libpq keyword string (password=...).
_SHAPES = (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), re.compile(r"(?i)\bbearer\s+[^\s\"',;]+"),
           re.compile(r"(?i)(?<=[a-z0-9+.\-]://)[^\s/@\"']*:[^\s@\"']*(?=@)"),
           re.compile(r"(?i)(?<=\bpassword=)('(?:[^'\\]|\\.)*'|[^\s\"']+)"))
# libpq's keyword form: key=value or key='quoted value'.
_KEYWORD = re.compile(r"(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']+)")
#: Secret values seen by this process (a DSN's password): cut out of every redacted text.
_REMEMBERED: set[str] = set()
_MIN_SECRET = 6  # shorter values would redact ordinary words


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret value, and anything shaped like a key, replaced."""
    wanted = {*secrets, *_REMEMBERED}
    for secret in sorted({s for s in wanted if s and len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(REDACTED, text)
    return text


def remember_secrets(values: Iterable[str]) -> None:
    """Values :func:`redact_text` cuts from every text from now on (a DSN's password)."""
    _REMEMBERED.update(v for v in values if v and len(v) >= _MIN_SECRET)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Header values shown only for :data:`SAFE_HEADERS`; every other one may be a key."""
    return {k: v if k.lower() in SAFE_HEADERS else REDACTED for k, v in headers.items()}


def dsn_secrets(dsn: str | None) -> list[str]:
    """Credentials a PostgreSQL connection string may carry, in any of its forms: a URL's
    user info (also when malformed, as libpq quotes it back), ``password=`` keywords."""
    if not dsn:
        return []
    found = url_secrets(dsn)
    for token in dsn.split():
        if "@" in token:  # user:password@host, whatever the rest looks like
            userinfo = token.rsplit("@", 1)[0].split("://", 1)[-1]
            if ":" in userinfo:
                found.append(userinfo.split(":", 1)[1])
    for key, value in _KEYWORD.findall(dsn):
        if key.lower() in ("password", "sslpassword"):
            found.append(value[1:-1].replace("\\'", "'") if value.startswith("'") else value)
    return found


def redact_dsn(dsn: str) -> str:
    """A connection string as it may be shown: its credentials cut, its form kept."""
    return redact_text(dsn, dsn_secrets(dsn))


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
