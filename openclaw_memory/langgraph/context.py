"""What the model sees of memory at session start, before it calls any tool.

``MEMORY.md`` (direct chats only: it is private) plus yesterday's and today's daily logs (dates
in the index's configured time zone), fitted into a character budget. When the files do not
fit, every file gets a fair share (short files keep all their text and leave the rest to the
others) and each cut says how much was left out and how to read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from langchain_core.messages import BaseMessage, SystemMessage

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.notes import today
from openclaw_memory.memory_base import ChatType, Memory

__all__ = ["LoadedFile", "SessionContext", "session_start_context"]

DEFAULT_MAX_CHARS = 12_000
_HEAD_SHARE = 0.7  # the start of a file (headings, context) matters more than its middle
_TITLE = "# Memory loaded at session start"


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """One file in the context: its size, and how much of it was kept."""

    path: str
    label: str
    chars: int
    kept_chars: int

    @property
    def truncated(self) -> bool:
        return self.kept_chars < self.chars


@dataclass(frozen=True, slots=True)
class SessionContext:
    """The text to prepend, and what went into it."""

    text: str
    files: tuple[LoadedFile, ...]
    skipped: tuple[str, ...] = ()
    """Files left out, with the reason (e.g. ``MEMORY.md (private: group chat)``)."""

    @property
    def truncated(self) -> bool:
        return any(f.truncated for f in self.files)

    def as_system_message(self) -> SystemMessage | None:
        return SystemMessage(content=self.text) if self.text else None

    def as_messages(self) -> list[BaseMessage]:
        message = self.as_system_message()
        return [message] if message is not None else []


def session_start_context(index: Memory, *, chat_type: ChatType = "direct",
                          now: datetime | None = None, max_chars: int = DEFAULT_MAX_CHARS,
                          include_daily: bool = True,
                          session_key: str | None = None) -> SessionContext:
    """Load the session-start memory files of ``index``'s workspace within ``max_chars``.

    ``include_daily=False`` leaves the daily logs out (e.g. for group chats, if your
    deployment keeps them private too). The result's ``text`` is empty when nothing exists.

    A session start is also the moment to freshen the index: this fires the index's
    session-start trigger (a background sync, once per ``session_key``; every call when it is
    None; never when ``sync.on_session_start`` is off), so notes edited between sessions are
    searchable by the time the model calls ``memory_search``. It never waits for that sync:
    the context itself is read from the files.
    """
    index.on_session_start(session_key)
    wanted, skipped = _wanted_files(index, chat_type, now, include_daily)
    found: list[tuple[str, str, str]] = []
    for path, label in wanted:
        text, problem = _read(index, path, chat_type)
        if problem:
            skipped.append(f"{path} ({problem})")
        elif text.strip():
            found.append((path, label, text.strip("\n")))
    if not found:
        return SessionContext("", (), tuple(skipped))
    return _render(found, max_chars, tuple(skipped))


def _wanted_files(index: Memory, chat_type: ChatType, now: datetime | None,
                  include_daily: bool) -> tuple[list[tuple[str, str]], list[str]]:
    wanted: list[tuple[str, str]] = []
    skipped: list[str] = []
    if chat_type == "direct":
        wanted.append((index.curated_name(), "curated long-term memory"))
    else:
        skipped.append(f"MEMORY.md (private: {chat_type} chat)")
    if include_daily:
        day = today(index.settings.timezone, now or datetime.now(UTC))
        wanted.append((f"memory/{(day - timedelta(days=1)).isoformat()}.md", "yesterday's log"))
        wanted.append((f"memory/{day.isoformat()}.md", "today's log"))
    return wanted, skipped


def _read(index: Memory, path: str, chat_type: ChatType) -> tuple[str, str | None]:
    try:
        note = index.get(path, chat_type=chat_type)
    except OpenClawMemoryError as exc:
        return "", str(exc)
    return ("", None) if note.missing else (note.text, None)


def _render(found: list[tuple[str, str, str]], max_chars: int,
            skipped: tuple[str, ...]) -> SessionContext:
    headers = [f"## {path} ({label})" for path, label, _ in found]
    # Title, headers and the blank lines between blocks are fixed costs of the budget.
    overhead = len(_TITLE) + sum(len(h) + 3 for h in headers) + 1
    shares = fair_shares([len(text) for _, _, text in found], max(0, max_chars - overhead))
    blocks = [_TITLE]
    files: list[LoadedFile] = []
    for (path, label, text), header, share in zip(found, headers, shares, strict=True):
        body, kept = fit(text, share, path)
        blocks.append(f"{header}\n{body}" if body else header)
        files.append(LoadedFile(path, label, len(text), kept))
    return SessionContext("\n\n".join(blocks) + "\n", tuple(files), skipped)


def fair_shares(sizes: list[int], budget: int) -> list[int]:
    """Split ``budget`` so small items get all they need and large ones share the rest equally."""
    shares = [0] * len(sizes)
    pending = sorted(range(len(sizes)), key=lambda i: sizes[i])
    left = budget
    while pending:
        each = left // len(pending)
        index = pending.pop(0)
        shares[index] = min(sizes[index], each)
        left -= shares[index]
    return shares


def fit(text: str, limit: int, path: str) -> tuple[str, int]:
    """``text`` within ``limit`` characters, and how many of its characters were kept.

    The head and the tail are kept (on line boundaries where possible) and a marker in
    between says how much was left out and how to read it.
    """
    if len(text) <= limit:
        return text, len(text)
    room = limit - len(_marker(path, len(text))) - 2
    if room <= 0:
        marker = _marker(path, len(text))
        return (marker, 0) if len(marker) <= limit else ("", 0)
    head = _cut_at_line(text[: int(room * _HEAD_SHARE)], from_end=False)
    tail_room = room - len(head)
    tail = _cut_at_line(text[len(text) - tail_room:], from_end=True) if tail_room > 0 else ""
    kept = len(head) + len(tail)
    # The real count is never wider than the total used to reserve room above.
    return f"{head}\n{_marker(path, len(text) - kept)}\n{tail}".strip("\n"), kept


def _marker(path: str, cut: int) -> str:
    return f"[... {cut:,} characters of {path} left out here; read them with memory_get ...]"


def _cut_at_line(piece: str, *, from_end: bool) -> str:
    """Prefer whole lines; keep a partial line only when the piece has no line break."""
    if from_end:
        newline = piece.find("\n")
        return piece[newline + 1:] if newline != -1 else piece
    newline = piece.rfind("\n")
    return piece[:newline] if newline != -1 else piece
