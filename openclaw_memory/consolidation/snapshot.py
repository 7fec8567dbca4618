"""What a consolidation turn reads: the curated file with line numbers and recent daily logs,
within a token budget.

The curated file comes first (up to :data:`CURATED_SHARE` of the budget: lines past it are
not shown, and cannot be edited in that run); the daily logs of the last ``days`` days fill
the rest, newest first, so when the budget runs out the oldest logs are the ones left out.
The snapshot keeps the exact text of every line it shows: that is the text an edit expects
to find when it is applied (the concurrency check of :mod:`openclaw_memory.files.curation`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Literal, Protocol

from openclaw_memory.files.workspace import dated_name
from openclaw_memory.indexing.tokens import count_tokens

if TYPE_CHECKING:
    from openclaw_memory.files.curation import EditResult
    from openclaw_memory.files.notes import NoteText, WriteResult
    from openclaw_memory.memory_base import ChatType, Memory

__all__ = ["CURATED_SHARE", "Curator", "Snapshot", "read_lines", "take_snapshot"]

#: Share of the token budget the curated file may take before its later lines are left out.
CURATED_SHARE = 0.6
_DAILY_NAME = re.compile(r"^(?:(?P<area>.+)/)?\d{4}-\d{2}-\d{2}\.md$")


class Curator(Protocol):
    """One memory as consolidation and capture use it (a
    :class:`~openclaw_memory.langchain.ScopedMemory`: an index and maybe a user's area)."""

    @property
    def index(self) -> Memory: ...

    @property
    def area(self) -> str | None: ...

    def get(self, path: str, from_line: int | None, lines: int | None, *,
            chat_type: ChatType) -> NoteText: ...

    def edit(self, citation: str, expected: str, replacement: str | None, *,
             reason: str | None, chat_type: ChatType) -> EditResult: ...

    def write(self, content: str, *, target: Literal["daily", "memory"]) -> WriteResult: ...


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The text one consolidation turn is shown (and the lines its edits expect)."""

    curated_path: str
    curated_lines: tuple[str, ...]
    """Every line of the curated file, as read (line ``n`` is ``curated_lines[n - 1]``)."""
    shown_lines: int
    """How many of them (from line 1) the model was shown; later ones cannot be edited."""
    notes: tuple[tuple[str, str], ...]
    """``(path, text)`` of the daily logs shown, oldest first."""
    omitted_notes: int
    today: date

    def render(self) -> str:
        total = len(self.curated_lines)
        head = (f"## {self.curated_path} (lines 1-{self.shown_lines} of {total})" if total
                else f"## {self.curated_path} (empty)")
        parts = [f"Today is {self.today.isoformat()}.", "", head]
        parts += [f"L{n}: {line}" for n, line in enumerate(self.curated_lines[:self.shown_lines], 1)]
        if self.shown_lines < total:
            parts.append(f"[lines {self.shown_lines + 1}-{total} not shown: over the budget; "
                         "leave them as they are]")
        parts += ["", "## Recent daily logs, oldest first"]
        if self.omitted_notes:
            parts.append(f"[{self.omitted_notes} older log(s) not shown: over the budget]")
        for path, text in self.notes:
            parts += [f"### {path}", text.rstrip(), ""]
        if not self.notes:
            parts.append("(none)")
        return "\n".join(parts).rstrip() + "\n"


def read_lines(curator: Curator, path: str) -> list[str]:
    """Every line of ``path`` (read on past each answer's output bound); [] when missing."""
    lines: list[str] = []
    start = 1
    while True:
        note = curator.get(path, start, None, chat_type="direct")
        if note.missing or note.end_line < note.start_line:
            return lines
        chunk = note.text.split("\n")[: note.end_line - note.start_line + 1]
        if note.line_cut:
            chunk = chunk[:-1]  # cut short: read whole from next_line
        lines += chunk
        if note.next_line is None or note.next_line <= start:
            return lines
        start = note.next_line


def curated_path(curator: Curator) -> str:
    area = curator.area
    return f"{area}/MEMORY.md" if area else curator.index.curated_name()


def daily_logs(curator: Curator, today: date, days: int) -> list[tuple[date, str]]:
    """``(day, path)`` of the curator's daily logs from the last ``days`` days, oldest first."""
    since = today - timedelta(days=max(1, days) - 1)
    found = []
    for path in curator.index.indexed_paths():
        match = _DAILY_NAME.match(path)
        day = dated_name(path)
        if match is None or day is None or not since <= day <= today:
            continue
        folder = match["area"]
        if folder == (curator.area or "memory"):
            found.append((day, path))
    return sorted(found)


def take_snapshot(curator: Curator, *, today: date, days: int, max_tokens: int) -> Snapshot:
    """The curated file and the last ``days`` days of daily logs, within ``max_tokens``."""
    path = curated_path(curator)
    lines = read_lines(curator, path)
    budget = max(1, max_tokens)
    shown, used = 0, 0
    for line in lines:
        cost = count_tokens(line) + 3  # the "Ln: " prefix and the newline
        if used + cost > budget * CURATED_SHARE:
            break
        shown, used = shown + 1, used + cost
    notes: list[tuple[str, str]] = []
    logs = daily_logs(curator, today, days)
    for _day, log in reversed(logs):  # newest first: the oldest are left out first
        text = "\n".join(read_lines(curator, log))
        cost = count_tokens(text) + 8
        if used + cost > budget:
            break
        notes.append((log, text))
        used += cost
    return Snapshot(path, tuple(lines), shown, tuple(reversed(notes)), len(logs) - len(notes),
                    today)
