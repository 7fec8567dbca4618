"""Curating memory: replacing and removing lines of ``MEMORY.md`` and evergreen notes.

The one write path for corrections, used by the tools, the Python API, the CLI and (next)
consolidation alike:

* **Optimistic concurrency.** The caller names the lines (``MEMORY.md#L5-L6``) and the text it
  expects there. If the file changed meanwhile, nothing is written and the answer carries the
  text now at those lines (and where the expected text moved, if it did), so a model can retry.
* **Only curated files.** ``MEMORY.md`` / ``memory.md`` and evergreen files under ``memory/``
  (no date in the name). Daily logs stay append-only: a correction is a new note there.
* **Nothing is silently lost.** Every replaced or removed text goes, with the new text, the
  time and the reason, to a dated history file ``memory-history/YYYY-MM-DD.md`` beside
  ``memory/``: plain Markdown a person reads, that ``get`` reads back, and that is never indexed
  (it is not a memory file), so a retired fact never outranks its correction.
* **Atomic and private.** The file is replaced whole (temp file + rename) under the same lock
  appenders take, keeping its mode (new files are owner-only).
* **Dated.** A replacement line the caller did not date is stamped ``(as of YYYY-MM-DD)``,
  the form the index reads back as the day a fact was learned.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.atomic import swap_in
from openclaw_memory.files.edit_journal import (
    PendingEdit,
    digest,
    drop_swap_leftovers,
    entry_present,
    is_pending,
    locked_append,
    read_pending,
    settle_pending,
)
from openclaw_memory.files.line_bytes import FileLines
from openclaw_memory.files.notes import DATE_STAMP, normalise_note, read_fd, split_citation, today
from openclaw_memory.files.reading import decode_text, io_errors, split_lines
from openclaw_memory.files.workspace import HISTORY_DIR, ResolvedPath, Workspace

__all__ = ["AS_OF", "HISTORY_DIR", "CurationError", "EditResult", "appended_entry",
           "applied_result", "check_edit", "edit_lines", "edit_target", "history_entry",
           "history_path", "new_lines_of", "replace_lines", "settle_interrupted_edits",
           "stamp_date"]

AS_OF = DATE_STAMP  # the stamp a line ends with: when the fact on it was learned
#: The longest edit reason history keeps, in characters (longer ones are cut, marked "…").
MAX_REASON = 1000
_NEW_FILE_MODE = 0o600
_MAX_REOPENS = 8

EditAction = Literal["replaced", "removed", "conflict"]


class CurationError(OpenClawMemoryError):
    """An edit that cannot apply to that file (a daily log, a missing file, a bad range)."""


@dataclass(frozen=True, slots=True)
class EditResult:
    """What an edit did. ``applied`` false is a conflict: ``current`` holds the text now at
    the lines asked for (and ``moved_to`` the lines where the expected text is now, if it is
    still in the file), so the caller can retry with the right lines and text."""

    path: str
    start_line: int
    end_line: int
    action: EditAction
    applied: bool
    current: str | None = None
    moved_to: tuple[int, int] | None = None
    history: str | None = None

    @property
    def citation(self) -> str:
        if self.end_line < self.start_line:
            return f"{self.path}#L{self.start_line}"
        if self.end_line == self.start_line:
            return f"{self.path}#L{self.start_line}"
        return f"{self.path}#L{self.start_line}-L{self.end_line}"


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")


def stamp_date(text: str, day: str) -> str:
    """``text`` dated ``(as of day)``: each list item that carries no date of its own, or,
    in a note without list items, its last line (one fact per item, one per paragraph)."""
    lines = text.split("\n")
    items = [i for i, line in enumerate(lines) if _LIST_ITEM.match(line)]
    if not items:
        items = [i for i, line in enumerate(lines)
                 if line.strip() and not line.lstrip().startswith("#")][-1:]
    for i in items:
        if not AS_OF.search(lines[i]):
            lines[i] = f"{lines[i].rstrip()} (as of {day})"
    return "\n".join(lines)


def history_path(tz: str | None = None, now: datetime | None = None,
                 edited: str | None = None) -> str:
    """Today's history file for an edit of ``edited``: ``memory-history/DAY.md``, or for a
    file in a folder below ``memory/`` (one user's area: ``memory/users/alice/MEMORY.md``)
    ``memory-history/<that folder>/DAY.md``, so that a user's history stays in the user's
    scope."""
    folder = edited.rsplit("/", 1)[0] if edited and "/" in edited else ""
    below = f"{folder}/" if folder not in ("", "memory") else ""
    return f"{HISTORY_DIR}/{below}{today(tz, now).isoformat()}.md"


def edit_lines(ws: Workspace, path: str, start_line: int, end_line: int, *, expected: str,
               replacement: str | None, tz: str | None = None, now: datetime | None = None,
               reason: str | None = None, stamp: bool = True) -> EditResult:
    """Replace lines ``start_line..end_line`` of a curated file by ``replacement`` (None:
    remove them), if they hold ``expected`` (compared line by line, trailing spaces aside).
    The file and its history entry change as one unit (files/edit_journal.py)."""
    resolved = ws.resolve(path, purpose="write")
    check_edit(resolved.kind, resolved.rel_path, start_line, end_line)
    moment = now or datetime.now(UTC)
    new_lines = new_lines_of(replacement, tz, moment, stamp)
    history = ws.resolve(history_path(tz, moment, resolved.rel_path), purpose="write")
    with io_errors("write", resolved.rel_path), _locked_existing(ws, resolved) as (fd, dir_fd):
        current = read_fd(fd)
        history_fd = _history_folder(ws, history, create=False)
        try:
            with io_errors("write", history.rel_path):
                if history_fd is not None:
                    _settle(history_fd, resolved.rel_path, current)
                drop_swap_leftovers(dir_fd, resolved.name)
            outcome = replace_lines(current, resolved.rel_path, start_line, end_line, expected,
                                    new_lines)
            if isinstance(outcome, EditResult):
                return outcome
            payload, have = outcome
            entry = history_entry(resolved.rel_path, start_line, end_line, have, new_lines,
                                  reason, moment)
            if history_fd is None:
                history_fd = _history_folder(ws, history, create=True)
                assert history_fd is not None
            cited = _applied(resolved, fd, dir_fd, history_fd, current, payload, entry,
                             history.rel_path.rsplit("/", 1)[0],
                             history_name(history_fd, today(tz, moment).isoformat()))
        finally:
            if history_fd is not None:
                os.close(history_fd)
    return applied_result(resolved.rel_path, start_line, new_lines, cited)


def settle_interrupted_edits(ws: Workspace) -> int:
    """Settle every edit a killed process left pending (files/edit_journal.py), each under
    its file's lock, as the next edit of that file would: run by every sync, so that no edit
    stays without its history entry until the file is edited again. How many were found."""
    found = 0
    history_root = ws.root / HISTORY_DIR
    if not history_root.is_dir():
        return 0
    for folder, _dirs, names in os.walk(history_root):
        for name in names:
            if not is_pending(name):
                continue
            found += 1
            record = read_pending(Path(folder) / name)
            if record is None:
                with contextlib.suppress(OSError):
                    (Path(folder) / name).unlink()
                continue
            with contextlib.suppress(OpenClawMemoryError, OSError):
                _settle_file(ws, record.path)
    return found


def _settle_file(ws: Workspace, rel_path: str) -> None:
    resolved = ws.resolve(rel_path, purpose="write")
    history = ws.resolve(history_path(None, None, resolved.rel_path), purpose="write")
    with io_errors("write", resolved.rel_path), _locked_existing(ws, resolved) as (fd, dir_fd):
        history_fd = _history_folder(ws, history, create=False)
        if history_fd is None:
            return
        try:
            _settle(history_fd, resolved.rel_path, read_fd(fd))
            drop_swap_leftovers(dir_fd, resolved.name)
        finally:
            os.close(history_fd)


def _settle(history_fd: int, rel_path: str, current: bytes) -> None:
    """Settle what killed edits of ``rel_path`` left (files/edit_journal.py)."""
    settle_pending(history_fd, rel_path, current,
                   lambda name, entry: _append_entry(history_fd, name, entry, once=True))


def _history_folder(ws: Workspace, history: ResolvedPath, *, create: bool) -> int | None:
    """A descriptor of the history folder (created when asked); None when it is missing."""
    with io_errors("write", history.rel_path):
        try:
            return ws.open_parent(history, create=create)
        except FileNotFoundError:
            if create:
                raise
            return None


def _applied(resolved: ResolvedPath, fd: int, dir_fd: int, history_fd: int,
             current: bytes, payload: bytes, entry: list[str], folder: str, name: str) -> str:
    """Record the edit as pending, swap the file in, append the history entry; its citation
    ("" when the entry could not be appended: the next edit of the file appends it)."""
    record = PendingEdit(resolved.rel_path, digest(current), digest(payload), name, tuple(entry))
    with io_errors("write", f"{folder}/{name}"):
        pending = record.write(history_fd)  # a history that cannot be written: nothing changes
    try:
        swap_in(dir_fd, resolved.name, payload, mode=stat.S_IMODE(os.fstat(fd).st_mode))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(pending, dir_fd=history_fd)
        raise
    try:
        first = _append_entry(history_fd, name, entry)
        os.unlink(pending, dir_fd=history_fd)
    except OSError:
        return ""  # the edit stands; its entry waits in the pending record
    return f"{folder}/{name}#L{first}-L{first + len(entry) - 1}"


#: A day's history file past this size continues in ``YYYY-MM-DD-2.md`` (then -3...): each
#: edit appends without reading the file whole, and ``history`` / ``get`` read any one file.
HISTORY_FILE_BYTES = 4 * 1024 * 1024


def history_name(history_fd: int, day: str) -> str:
    """The history file today's next entry goes to (below the history folder)."""
    for number in range(1, 10_000):
        name = f"{day}.md" if number == 1 else f"{day}-{number}.md"
        try:
            if os.stat(name, dir_fd=history_fd, follow_symlinks=False).st_size < HISTORY_FILE_BYTES:
                return name
        except FileNotFoundError:
            return name
    raise CurationError(f"{HISTORY_DIR} holds too many history files for {day}")


def _append_entry(history_fd: int, name: str, entry: list[str], *, once: bool = False) -> int:
    """Append ``entry`` to ``name`` (``once``: unless it is there); the line it starts on."""
    first = 0

    def block_of(fd: int) -> bytes:
        nonlocal first
        if once and entry_present(fd, entry):
            return b""
        count, size, open_end = _line_count(fd)
        first = count + (2 if size else 1)
        block = ("\n" if size else "") + "\n".join(entry) + "\n"
        return (("\n" if open_end else "") + block).encode("utf-8")

    locked_append(history_fd, name, block_of)
    return first


def _line_count(fd: int) -> tuple[int, int, bool]:
    """(lines, bytes, whether the last line is left open) of the file at ``fd``, read in
    pieces: a large history costs time in proportion, never memory."""
    os.lseek(fd, 0, os.SEEK_SET)
    count = size = 0
    last = b""
    while chunk := os.read(fd, 1 << 20):
        count += chunk.count(b"\n")
        size += len(chunk)
        last = chunk[-1:]
    open_end = bool(size) and last != b"\n"
    return count + int(open_end), size, open_end


def replace_lines(data: bytes, rel_path: str, start_line: int, end_line: int, expected: str,
                  new_lines: list[str]) -> tuple[bytes, list[str]] | EditResult:
    """The file's new bytes and the lines replaced, or the conflict when ``start_line..
    end_line`` do not hold ``expected`` (compared line by line, trailing spaces aside). Every
    byte of the lines not replaced stays as it was (files/line_bytes.py)."""
    file = FileLines.parse(data)
    lines = list(file.texts)
    wanted = [line.rstrip() for line in normalise_note(expected).split("\n")]
    have = [line.rstrip() for line in lines[start_line - 1:end_line]]
    if have != wanted:
        return EditResult(rel_path, start_line, end_line, "conflict", False,
                          current="\n".join(lines[start_line - 1:end_line]),
                          moved_to=_find(lines, wanted))
    return file.replaced(start_line, end_line, new_lines), have


def edit_target(citation: str, chat_type: str) -> tuple[str, int, int]:
    """``(path, first line, last line)`` of an edit's citation (``MEMORY.md#L5-L6``), where
    curated memory may be edited: direct chats only."""
    if chat_type != "direct":
        raise CurationError("curated memory is edited in direct chats only")
    path, start, count = split_citation(citation)
    if start is None:
        raise CurationError(f"{citation!r} names no lines: give a citation such as "
                            "MEMORY.md#L5-L6, as memory_search returns it")
    return path, start, start + (count or 1) - 1


def check_edit(kind: str, rel_path: str, start_line: int, end_line: int) -> None:
    """Refuse what curation never edits: daily logs, other kinds, ranges that are none."""
    if kind not in ("memory_md", "memory_other"):
        raise CurationError(f"{rel_path} is not a curated file: daily logs are "
                            "append-only (write a correcting note today instead)")
    if start_line < 1 or end_line < start_line:
        raise CurationError(f"lines {start_line}-{end_line} are not a range of lines")


def applied_result(rel_path: str, start_line: int, new_lines: list[str],
                   history: str) -> EditResult:
    action: EditAction = "replaced" if new_lines else "removed"
    last = start_line + len(new_lines) - 1 if new_lines else start_line - 1
    return EditResult(rel_path, start_line, last, action, True, history=history)


def new_lines_of(replacement: str | None, tz: str | None, moment: datetime,
                 stamp: bool = True) -> list[str]:
    return _new_lines(replacement, today(tz, moment).isoformat() if stamp else None)


def _new_lines(replacement: str | None, day: str | None) -> list[str]:
    if replacement is None:
        return []
    body = normalise_note(replacement)
    return (stamp_date(body, day) if day else body).split("\n")


def _find(lines: list[str], wanted: list[str]) -> tuple[int, int] | None:
    size = len(wanted)
    for index in range(len(lines) - size + 1):
        if [line.rstrip() for line in lines[index:index + size]] == wanted:
            return index + 1, index + size
    return None


class _Locked:
    """The file's descriptor under the appenders' exclusive lock, and its folder's."""

    def __init__(self, ws: Workspace, resolved: ResolvedPath) -> None:
        self.ws, self.resolved = ws, resolved
        self.fd = self.dir_fd = -1

    def __enter__(self) -> tuple[int, int]:
        self.dir_fd = self.ws.open_parent(self.resolved)
        name = self.resolved.name
        for _ in range(_MAX_REOPENS):
            try:
                self.fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                  dir_fd=self.dir_fd)
            except FileNotFoundError:
                os.close(self.dir_fd)
                raise CurationError(f"{self.resolved.rel_path} does not exist: nothing to "
                                    "edit") from None
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            # Another edit may have swapped a new file in while this one waited for the lock
            # of the old: edit the file that is at the path now, or a change would be lost.
            try:
                now = os.stat(name, dir_fd=self.dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            mine = os.fstat(self.fd)
            if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                return self.fd, self.dir_fd
            os.close(self.fd)
        os.close(self.dir_fd)
        raise CurationError(f"{self.resolved.rel_path} kept being replaced while editing it")

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # releases the lock: waiting appenders see the new file
        os.close(self.dir_fd)


def _locked_existing(ws: Workspace, resolved: ResolvedPath) -> _Locked:
    return _Locked(ws, resolved)


def history_entry(rel_path: str, start: int, end: int, old: list[str], new: list[str],
                  reason: str | None, moment: datetime) -> list[str]:
    """The lines of one history entry: when, what, why, the text before and after."""
    stamp = moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    kind = "replaced" if new else "removed"
    lines = f"#L{start}" if end == start else f"#L{start}-L{end}"
    entry = [f"## {stamp}: {kind} {rel_path}{lines}"]
    if reason:
        said = " ".join(reason.split())
        # A reason is a few words; a model's 5 MB one must not make history unreadable.
        entry.append(f"Reason: {said if len(said) <= MAX_REASON else said[:MAX_REASON] + '…'}")
    entry += ["", "Before:", *(f"> {line}" if line else ">" for line in old)]
    if new:
        entry += ["", "After:", *(f"> {line}" if line else ">" for line in new)]
    return entry


def appended_entry(existing: bytes, entry: list[str]) -> tuple[bytes, int]:
    """The bytes that append ``entry`` to a history file holding ``existing``, and the line
    the entry starts on."""
    first = len(split_lines(decode_text(existing))) + (2 if existing else 1)
    block = ("\n" if existing else "") + "\n".join(entry) + "\n"
    if existing and not existing.endswith(b"\n"):
        block = "\n" + block  # end the last line someone left open
    return block.encode("utf-8"), first
