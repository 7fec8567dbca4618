"""Whether memory is available in a chat at all: OpenClaw's scope rules.

The first rule whose ``match`` fits the chat decides (``allow`` or ``deny``); no rule: the
``default``. A match names a chat type, a channel, a prefix of the normalised session key
(lower-cased, a leading ``agent:<id>:`` stripped) or of the raw one; a ``key_prefix`` that
starts with ``agent:`` is read as a raw prefix (the documents' legacy form). A denied call is
logged with the channel and chat type, so an empty answer is easy to trace.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from openclaw_memory.config import ScopeMatch, ScopeSettings

__all__ = ["ScopeDecision", "decide", "normalised_key"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ScopeDecision:
    allowed: bool
    reason: str
    channel: str | None


def normalised_key(session_key: str | None) -> str:
    """The session key lower-cased, without a leading ``agent:<id>:``."""
    key = (session_key or "").strip().lower()
    parts = key.split(":")
    return ":".join(parts[2:]) if len(parts) > 2 and parts[0] == "agent" else key


def _channel(session_key: str | None) -> str | None:
    first = normalised_key(session_key).split(":", 1)[0]
    return first or None


def _matches(match: ScopeMatch, chat_type: str, session_key: str | None) -> bool:
    raw = (session_key or "").strip().lower()
    key = normalised_key(session_key)
    checks = []
    if match.chat_type is not None:
        checks.append(match.chat_type == chat_type)
    if match.channel is not None:
        checks.append(_channel(session_key) == match.channel.lower())
    if match.key_prefix is not None:
        prefix = match.key_prefix.lower()
        checks.append(raw.startswith(prefix) if prefix.startswith("agent:") else
                      key.startswith(prefix))
    if match.raw_key_prefix is not None:
        checks.append(raw.startswith(match.raw_key_prefix.lower()))
    return bool(checks) and all(checks)


def decide(scope: ScopeSettings, chat_type: str, session_key: str | None) -> ScopeDecision:
    """Whether memory may be searched or read in this chat, and why."""
    channel = _channel(session_key)
    for number, rule in enumerate(scope.rules, 1):
        if _matches(rule.match, chat_type, session_key):
            decision = ScopeDecision(rule.action == "allow", f"scope rule {number} "
                                     f"({rule.action})", channel)
            break
    else:
        decision = ScopeDecision(scope.default == "allow", f"scope default ({scope.default})",
                                 channel)
    if not decision.allowed:
        logger.warning("memory denied by %s: channel %s, chat type %s", decision.reason,
                       channel or "unknown", chat_type)
    return decision
