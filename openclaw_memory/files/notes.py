"""Reading and writing memory files directly (``memory_get`` / ``memory_write``), no index.

Line numbers are 1-based and count ``\\n``-terminated lines, the same way the chunker does, so
a citation ``path#L3-L5`` read back through :func:`read_note` gives exactly the cited lines.
Writers take an advisory ``flock`` on the file, so two processes appending at once never
interleave or lose a note; the daily log is only ever appended to.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from openclaw_memory.errors import (
    ConfigError,
    ContentError,
    OpenClawMemoryError,
    PathRefusedError,
    WorkspaceError,
)
from openclaw_memory.files.atomic import swap_in, write_all
from openclaw_memory.files.reading import NoteText, cap_note, note_text, read_note
from openclaw_memory.files.reading import io_errors as _io_errors
from openclaw_memory.files.reading import split_lines as _split_lines
from openclaw_memory.files.workspace import ResolvedPath, Workspace
from openclaw_memory.indexing.chunking import editor_lines_text
from openclaw_memory.sessions.transcripts import flatten_transcript

__all__ = [
    "DATE_STAMP",
    "MAX_NOTE_BYTES",
    "NoteText",
    "RelatedLine",
    "WriteReason",
    "WriteResult",
    "append_daily",
    "append_note",
    "append_to",
    "daily_note_path",
    "normalise_note",
    "note_text",
    "plan_append",
    "read_cited",
    "read_fd",
    "read_note",
    "read_transcript_lines",
    "split_citation",
    "today",
    "write_memory_md",
]

WriteReason = Literal["appended", "replaced", "duplicate"]

_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
MAX_NOTE_BYTES = 64 * 1024
"""A note is a fact, a decision or a todo, not a document: larger ones are refused."""
# Memory is private: a file the library creates is readable by its owner only.
_NEW_FILE_MODE = 0o600
# A replace of MEMORY.md swaps the inode under an appender that opened the old one; the
# appender notices after taking the lock and reopens. More than a few swaps in a row means
# something else is rewriting the file continuously.
_MAX_REOPENS = 8


@dataclass(frozen=True, slots=True)
class RelatedLine:
    """A line of memory a new note is alike to: where it is, what it says, when it was
    learned (a daily log's date or the line's ``(as of ...)`` stamp; None when undated)."""

    path: str
    line: int
    text: str
    learned: str | None
    similarity: float

    @property
    def citation(self) -> str:
        return f"{self.path}#L{self.line}"

    def as_dict(self) -> dict[str, object]:
        return {"citation": self.citation, "text": self.text, "learned": self.learned,
                "similarity": round(self.similarity, 3)}


@dataclass(frozen=True, slots=True)
class WriteResult:
    """Where a note is in the file after the write: 1-based inclusive line range.

    ``appended`` is true only when a note was added to the end; a duplicate reports the line
    range of the copy already there; ``reason`` is ``replaced`` for a whole-file replace.
    ``warning``: the note is saved but something after it failed (the index could not be
    updated: the next sync that can write it indexes the note). ``existing``: for a
    duplicate, the text memory already holds there (the same statement). ``related``: for a
    written note, the lines of memory alike in meaning (search/restatements.py), so that a
    caller whose note changes a fact can correct the stale line with ``memory_edit``.
    """

    path: str
    start_line: int
    end_line: int
    appended: bool
    reason: WriteReason
    warning: str | None = None
    existing: str | None = None
    related: tuple[RelatedLine, ...] = ()

    @property
    def written(self) -> bool:
        return self.reason != "duplicate"


_CITATION = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


def split_citation(path: str, from_line: int | None = None,
                   lines: int | None = None) -> tuple[str, int | None, int | None]:
    """``("memory/x.md#L3-L5")`` -> ``("memory/x.md", 3, 3)``: citations as search returns
    them (``path#L3``, ``path#L3-L5``) read those lines. Explicit ``from_line``/``lines`` win."""
    match = _CITATION.match(path.strip()) if isinstance(path, str) else None
    if match is None:
        if isinstance(path, str) and "#" in path and not path.strip().endswith((".md", ".jsonl")):
            raise OpenClawMemoryError(f"{path.strip()!r} is not a citation: write PATH#L<line> "
                                      "or PATH#L<first>-L<last>, as search prints them "
                                      "(MEMORY.md#L3-L5)")
        return path, from_line, lines
    start = int(match.group("start"))
    end = int(match.group("end") or start)
    if end < start:
        raise OpenClawMemoryError(f"{path.strip()!r} is not a range of lines: its last line "
                                  f"comes before its first (write #L{end}-L{start})")
    return match.group("path"), from_line or start, lines or end - start + 1


def read_transcript_lines(sessions_dir: Path | None, path: str, from_line: int | None = None,
                          lines: int | None = None) -> NoteText:
    """Lines of a session transcript as search cites them (``sessions/<name>.jsonl``).

    Line ``n`` of the answer is JSONL line ``n`` rendered as its message (``User: ...``);
    lines that hold no message (tool records, damage) read as empty, so numbers stay exact.
    Only a plain file directly in the configured transcripts folder is read.
    """
    name = path.strip().removeprefix("./").removeprefix("sessions/")
    if (sessions_dir is None or not name.endswith(".jsonl") or "/" in name or "\\" in name
            or name.startswith(".")):
        raise PathRefusedError("path refused")
    full = sessions_dir / name
    try:
        info = full.lstat()
    except FileNotFoundError:
        start = max(1, from_line or 1)
        return NoteText(f"sessions/{name}", "", start, start - 1, 0, missing=True)
    except OSError as exc:
        raise WorkspaceError(f"cannot read sessions/{name}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        raise PathRefusedError("path refused")
    with _io_errors("read", f"sessions/{name}"):
        raw = full.read_bytes().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    rendered = [flatten_transcript(line).text for line in raw]
    start = max(1, from_line or 1)
    count = max(1, lines) if lines else len(rendered)
    selected = rendered[start - 1 : start - 1 + count]
    return NoteText(f"sessions/{name}", "\n".join(selected), start, start + len(selected) - 1,
                    len(rendered))


# ---------------------------------------------------------------------- dates


def today(tz: str | None = None, now: datetime | None = None) -> date:
    """Today's date in ``tz`` (an IANA name), else the local zone, else UTC.

    A naive ``now`` is taken as local time, as :meth:`datetime.astimezone` does.
    """
    zone = _zone(tz)
    moment = now if now is not None else datetime.now(UTC)
    try:
        return moment.astimezone(zone).date()
    except (OverflowError, OSError):
        # The host's local zone could not be determined for this instant.
        return moment.astimezone(UTC).date()


def daily_note_path(tz: str | None = None, now: datetime | None = None,
                    folder: str = "memory") -> str:
    """Workspace-relative path of today's daily log, e.g. ``memory/2026-01-05.md`` (or in a
    scope's own ``folder`` below ``memory/``)."""
    return f"{folder}/{today(tz, now).isoformat()}.md"


def _zone(tz: str | None) -> tzinfo | None:
    if tz is None or not tz.strip():
        return None  # astimezone(None) means the host's local zone
    try:
        return ZoneInfo(tz.strip())
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ConfigError(
            f"unknown time zone {tz!r}: use an IANA name such as 'Europe/Paris' or 'UTC'"
        ) from None


# ---------------------------------------------------------------------- writing


def append_daily(
    ws: Workspace, content: str, *, tz: str | None = None, now: datetime | None = None,
    max_file_bytes: int | None = None, folder: str = "memory",
) -> WriteResult:
    """Append a note to today's ``memory/YYYY-MM-DD.md``, creating it (and ``memory/``).

    The note becomes its own block (a blank line before it). A note already present as a
    block is not written again: the result says ``duplicate`` and points at the existing copy.
    """
    body = normalise_note(content)
    resolved = ws.resolve(daily_note_path(tz, now, folder), purpose="write")
    return _append_block(ws, resolved, body, max_file_bytes)


def append_note(ws: Workspace, rel_path: str, content: str, *,
                max_file_bytes: int | None = None) -> WriteResult:
    """Append a note as its own block to any memory file (e.g. a scope's own ``MEMORY.md``),
    duplicates skipped as in :func:`append_daily`."""
    resolved = ws.resolve(rel_path, purpose="write")
    return _append_block(ws, resolved, normalise_note(content), max_file_bytes)


def append_to(ws: Workspace, content: str, target: Literal["daily", "memory"], *,
              area: str | None = None, tz: str | None = None, now: datetime | None = None,
              max_file_bytes: int | None = None) -> WriteResult:
    """Append a note where ``MemoryIndex.write`` puts it: today's daily file, or the curated
    file (of ``area``, a folder below ``memory/`` that is one user's or agent's own)."""
    if target == "memory" and area is not None:
        return append_note(ws, f"{area}/MEMORY.md", content, max_file_bytes=max_file_bytes)
    if target == "memory":
        return write_memory_md(ws, content, max_file_bytes=max_file_bytes)
    return append_daily(ws, content, tz=tz, now=now, max_file_bytes=max_file_bytes,
                        folder=area or "memory")


def read_cited(ws: Workspace, path: str, from_line: int | None = None,
               lines: int | None = None, *, private: bool, max_bytes: int | None,
               max_chars: int | None) -> NoteText:
    """``MemoryIndex.get``'s read: a path or a citation (``memory/x.md#L3-L5``, a transcript's
    ``sessions/<name>.jsonl#L7``), through the path gate; ``private``: whether ``MEMORY.md``
    and its history may be read (never in group or channel chats)."""
    path, from_line, lines = split_citation(path, from_line, lines)
    if path.strip().removeprefix("./").startswith("sessions/") and path.strip().endswith(".jsonl"):
        return cap_note(read_transcript_lines(ws.sessions_dir, path, from_line, lines), max_chars)
    if not private and ws.resolve(path).kind in ("memory_md", "history"):
        raise OpenClawMemoryError("MEMORY.md and its history are private and not available in "
                                  "group chats")
    return read_note(ws, path, from_line, lines, max_bytes=max_bytes, max_chars=max_chars)


def write_memory_md(
    ws: Workspace, content: str, *, mode: Literal["append", "replace"] = "append",
    max_file_bytes: int | None = None,
) -> WriteResult:
    """Edit the curated ``MEMORY.md`` (or an existing lowercase ``memory.md``).

    ``append`` adds a block like :func:`append_daily` (duplicates skipped); ``replace`` swaps
    in the new content atomically (temp file + rename), so readers see old or new, never half.
    """
    if mode not in ("append", "replace"):
        raise OpenClawMemoryError(f"unknown write mode {mode!r}: use 'append' or 'replace'")
    body = normalise_note(content)
    resolved = _curated_target(ws)
    if mode == "append":
        return _append_block(ws, resolved, body, max_file_bytes)
    return _replace_file(ws, resolved, body)


def _curated_target(ws: Workspace) -> ResolvedPath:
    upper = ws.resolve("MEMORY.md", purpose="write")
    if upper.exists:
        return upper
    # Write to the lowercase spelling only when it is the one the user already has, so a
    # workspace never grows a second curated file.
    lower = ws.resolve("memory.md", purpose="write")
    return lower if lower.exists else upper


def normalise_note(content: str) -> str:
    if not isinstance(content, str):
        raise ContentError("memory note must be text")
    if "\x00" in content:
        raise ContentError("memory note contains a NUL byte; it cannot be stored as text")
    text = content.replace("\r\n", "\n").replace("\r", "\n")
    # Drop surrounding blank lines and trailing spaces but keep the first line's indentation,
    # which can be meaningful Markdown (a code block, a nested list item).
    lines = text.rstrip().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    body = "\n".join(lines)
    if not body:
        raise ContentError("memory note is empty: nothing to write")
    size = len(body.encode("utf-8", errors="surrogatepass"))
    if size > MAX_NOTE_BYTES:
        raise ContentError(f"memory note is {size:,} bytes; a note is at most {MAX_NOTE_BYTES:,} "
                           "bytes: keep the essentials, or split it into several notes")
    try:
        body.encode("utf-8")
    except UnicodeEncodeError:
        raise ContentError("memory note is not valid text (lone surrogates)") from None
    return body


def _append_block(ws: Workspace, resolved: ResolvedPath, body: str,
                  max_file_bytes: int | None = None) -> WriteResult:
    with _io_errors("write", resolved.rel_path), _locked(ws, resolved) as fd:
        block, result = plan_append(read_fd(fd), body, resolved.rel_path, max_file_bytes)
        if block is None:
            return result
        write_all(fd, block)
        os.fsync(fd)
    return result


def plan_append(existing: bytes, body: str, rel_path: str,
                max_file_bytes: int | None = None) -> tuple[bytes | None, WriteResult]:
    """The bytes that append ``body`` (a normalised note) to a file holding ``existing``, and
    where the note will be; ``None`` when the note is already there as a block (the result
    then points at that copy). Shared by the folder and the database backends, so a note
    is laid out byte for byte the same in either."""
    note_lines = body.split("\n")
    lines = _split_lines(editor_lines_text(existing.decode("utf-8", errors="replace")))
    found = _find_block(lines, note_lines)
    if found is not None:
        end = found + len(note_lines) - 1
        return None, WriteResult(rel_path, found, end, False, "duplicate",
                                 existing="\n".join(lines[found - 1:end]))
    # Terminate a last line someone left without "\n", then separate blocks by a blank
    # line so each note stays its own Markdown paragraph (and its own findable block).
    prefix = "" if not existing or existing.endswith(b"\n") else "\n"
    separator = bool(lines) and bool(lines[-1].strip())
    if separator:
        prefix += "\n"
    block = (prefix + body + "\n").encode("utf-8")
    if max_file_bytes is not None and len(existing) + len(block) > max_file_bytes:
        # Past the indexing limit the whole file would stop being searchable: refuse
        # rather than report a note as saved that no search would ever find.
        raise ContentError(f"{rel_path} would grow past {max_file_bytes:,} bytes, "
                           "the largest file that is indexed; nothing was written")
    start = len(lines) + int(separator) + 1
    return block, WriteResult(rel_path, start, start + len(note_lines) - 1, True, "appended")


#: ``(as of 2026-11-25)`` ending a line: the day the fact on it was learned (the stamp curation
#: and curated writes put on a line; groups 1-3 are year, month, day).
DATE_STAMP = re.compile(r"[ \t]*\(as of (\d{4})-(\d{2})-(\d{2})\)[ \t]*$", re.MULTILINE)


def _undated(line: str) -> str:
    """A line without its ``(as of ...)`` stamp: the same fact learned again another day is
    the same note."""
    return DATE_STAMP.sub("", line).rstrip()


def _find_block(lines: list[str], note: list[str]) -> int | None:
    """1-based line where ``note`` appears as a whole block (blank lines or edges around it)."""
    size = len(note)
    wanted = [_undated(line) for line in note]
    for index in range(len(lines) - size + 1):
        if _undated(lines[index]) != wanted[0]:
            continue  # cheap first-line filter keeps this linear for typical notes
        if [_undated(line) for line in lines[index : index + size]] != wanted:
            continue
        before_ok = index == 0 or not lines[index - 1].strip()
        after = index + size
        after_ok = after == len(lines) or not lines[after].strip()
        if before_ok and after_ok:
            return index + 1
    return None


def _replace_file(ws: Workspace, resolved: ResolvedPath, body: str) -> WriteResult:
    payload = (body + "\n").encode("utf-8")
    with _io_errors("write", resolved.rel_path), _closing(ws.open_parent(resolved)) as dir_fd:
        old_fd = _open_existing(resolved.name, dir_fd)
        try:
            if old_fd is not None:
                # Hold the old file's lock across the swap: appenders waiting on it then see
                # that the path moved to a new file and append there instead of to a ghost.
                fcntl.flock(old_fd, fcntl.LOCK_EX)
            mode = None if old_fd is None else stat.S_IMODE(os.fstat(old_fd).st_mode)
            swap_in(dir_fd, resolved.name, payload, mode=mode)
        finally:
            if old_fd is not None:
                os.close(old_fd)
    total = body.count("\n") + 1
    return WriteResult(resolved.rel_path, 1, total, False, "replaced")


def _open_existing(name: str, dir_fd: int) -> int | None:
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except FileNotFoundError:
        return None
    except OSError as exc:
        if _is_link_error(exc):
            raise PathRefusedError() from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PathRefusedError()
    return fd


@contextlib.contextmanager
def _locked(ws: Workspace, resolved: ResolvedPath) -> Iterator[int]:
    """An append descriptor on ``resolved`` holding an exclusive lock on the file at the path."""
    for _ in range(_MAX_REOPENS):
        fd = ws.open_file(resolved, _APPEND_FLAGS, _NEW_FILE_MODE, create_parents=True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _still_at_path(ws, resolved, fd):
                yield fd
                return
        finally:
            os.close(fd)  # closing also releases the lock
    raise WorkspaceError(f"{resolved.rel_path} kept being replaced while trying to append")


def _still_at_path(ws: Workspace, resolved: ResolvedPath, fd: int) -> bool:
    with _closing(ws.open_parent(resolved)) as dir_fd:
        try:
            current = os.stat(resolved.name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
    mine = os.fstat(fd)
    return (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino)


@contextlib.contextmanager
def _closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def read_fd(fd: int) -> bytes:
    """Everything in an open file, read from its start whatever its offset."""
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _is_link_error(exc: OSError) -> bool:
    return exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR)


