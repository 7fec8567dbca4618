"""Snippet clamping and ``path#Lx-Ly`` citations."""

from __future__ import annotations

__all__ = ["citation", "clamp_snippet", "with_source_line"]


def clamp_snippet(text: str, limit: int = 700) -> str:
    """At most ``limit`` characters (code points, so never half a surrogate pair)."""
    return text if len(text) <= limit else text[:limit]


def citation(path: str, start_line: int, end_line: int) -> str:
    """``path#L12-L30``, or ``path#L12`` for a single line."""
    if start_line == end_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"


def with_source_line(snippet: str, cite: str) -> str:
    """The snippet followed by a ``Source:`` line, as the model sees it with citations on."""
    return f"{snippet.strip()}\n\nSource: {cite}"
