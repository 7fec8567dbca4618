"""Snippet clamping and ``path#Lx-Ly`` citations."""

from __future__ import annotations

__all__ = ["ELLIPSIS", "citation", "clamp_snippet", "with_source_line"]


ELLIPSIS = "…"
# How far back from the limit a cut may move to end on a word: further back would waste the
# snippet's budget, and text without spaces (Chinese, Japanese, a URL) is cut at the limit.
_WORD_SLACK = 0.2


def clamp_snippet(text: str, limit: int = 700) -> str:
    """At most ``limit`` characters (code points, so never half a surrogate pair), ending on
    a whole word with ``…`` when something was cut."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[:limit]
    head = text[:limit - 1]
    if not text[limit - 1].isspace():
        boundary = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        if boundary >= (limit - 1) * (1 - _WORD_SLACK):
            head = head[:boundary]
    return head.rstrip() + ELLIPSIS


def citation(path: str, start_line: int, end_line: int) -> str:
    """``path#L12-L30``, or ``path#L12`` for a single line."""
    if start_line == end_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"


def with_source_line(snippet: str, cite: str) -> str:
    """The snippet followed by a ``Source:`` line, as the model sees it with citations on."""
    return f"{snippet.strip()}\n\nSource: {cite}"
