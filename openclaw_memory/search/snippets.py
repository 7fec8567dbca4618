"""Snippet clamping and ``path#Lx-Ly`` citations."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ELLIPSIS", "citation", "clamp_snippet", "lines_around", "with_source_line",
           "without_source_line"]


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


#: Lines a snippet grows by after its best line for each one before it: on LoCoMo dev the
#: answer follows the line holding the question's words three times as often as it precedes
#: it (a reply, the same speaker's next turn); the six snippets showed an answer line for
#: 63.7 % of the answers growing one after for one before, 66.9 % two for one (the retrieval
#: benchmark's runs), 62.7 % before first (diagnostic). Other sets' snippets were short
#: enough to show every cited line.
_AFTER_PER_BEFORE = 2


def lines_around(lines: Mapping[int, str], start: int, end: int, best: int, limit: int = 700) -> str:
    """The lines ``start``-``end`` that fit ``limit`` characters around ``best`` (the line
    holding most of the question's words): :data:`_AFTER_PER_BEFORE` lines after it for each
    line before, as long as each side has room, with ``…`` where lines were left out at either
    end. A best line longer than ``limit`` alone is cut as :func:`clamp_snippet` cuts."""
    room = limit - 4  # an ellipsis and a space at either end
    if len(lines[best]) > room:
        return clamp_snippet(lines[best], limit)
    low = high = best
    used = len(lines[best])
    grew = True
    while grew:
        grew = False
        for after in [True] * _AFTER_PER_BEFORE + [False]:
            step = high + 1 if after else low - 1
            if start <= step <= end and used + 1 + len(lines[step]) <= room:
                used += 1 + len(lines[step])
                low, high = min(low, step), max(high, step)
                grew = True
    text = "\n".join(lines[n] for n in range(low, high + 1))
    head = f"{ELLIPSIS} " if low > start else ""
    tail = f" {ELLIPSIS}" if high < end else ""
    return head + text + tail


def citation(path: str, start_line: int, end_line: int) -> str:
    """``path#L12-L30``, or ``path#L12`` for a single line."""
    if start_line == end_line:
        return f"{path}#L{start_line}"
    return f"{path}#L{start_line}-L{end_line}"


def with_source_line(snippet: str, cite: str) -> str:
    """The snippet followed by a ``Source:`` line, as the model sees it with citations on."""
    return f"{snippet.strip()}\n\nSource: {cite}"


def without_source_line(snippet: str) -> str:
    """The snippet's text without the ``Source:`` line :func:`with_source_line` adds."""
    return snippet.split("\n\nSource: ", 1)[0]
