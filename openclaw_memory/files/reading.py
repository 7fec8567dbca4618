"""Reading memory files (``get`` / ``memory_get``), bounded in time, memory and output.

Line numbers are 1-based and count ``\\n``-terminated lines, the same way the chunker does, so
a citation ``path#L3-L5`` read back through :func:`read_note` gives exactly the cited lines.

Bounds: a file larger than the index accepts (``sync.max_file_bytes``) is refused, not read
(a sparse terabyte file answered nothing in 300 s; a 40 MB line was handed whole to the
model); reading is one linear pass (a long line was re-split with everything read so far);
and the text returned holds at most ``max_chars`` characters: whole lines while they fit (the
first one cut if it alone does not), with ``truncated`` set and the line to read on from.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from openclaw_memory.errors import ContentError, WorkspaceError
from openclaw_memory.files.workspace import Workspace
from openclaw_memory.indexing.chunking import editor_lines_text

__all__ = ["COUNT_ALL_BYTES", "NoteText", "cap_note", "decode_text", "io_errors", "note_text",
           "read_note", "split_lines", "unicode_encoding"]

COUNT_ALL_BYTES = 4 * 1024 * 1024
_BLOCK = 64 * 1024


@dataclass(frozen=True, slots=True)
class NoteText:
    """Lines ``start_line..end_line`` (inclusive) of ``path``; ``end_line < start_line`` if none.

    ``truncated``: the lines asked for did not fit the output bound; ``text`` holds those up
    to ``end_line`` (the last one cut short when ``line_cut``), and the rest is read from
    :attr:`next_line` on."""

    path: str
    text: str
    start_line: int
    end_line: int
    total_lines: int
    missing: bool = False
    truncated: bool = False
    line_cut: bool = False

    @property
    def next_line(self) -> int | None:
        """Where to read on after a truncated answer (None when nothing was left out)."""
        if not self.truncated:
            return None
        return self.end_line if self.line_cut else self.end_line + 1

    def marker(self) -> str:
        """The line a model or a person is shown after truncated text: what was left out and
        how to read on."""
        if not self.truncated:
            return ""
        cut = f" (line {self.end_line} cut short)" if self.line_cut else ""
        return (f"[truncated: lines {self.start_line}-{self.end_line}{cut} shown; read on "
                f"with from_line={self.next_line}, or fewer lines at a time]")


# UTF-32 first: its little-endian mark begins with UTF-16's.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def unicode_encoding(head: bytes) -> str:
    """The encoding a file's first bytes name: UTF-16 or UTF-32 by their byte-order mark
    (Windows editors save notes so), else UTF-8."""
    return next((name for bom, name in _BOMS if head.startswith(bom)), "utf-8")


def decode_text(data: bytes) -> str:
    """A memory file's text: UTF-8, or UTF-16/32 with a byte-order mark; a stray invalid
    byte becomes U+FFFD (a person's editor must not make the whole file unreadable)."""
    return data.decode(unicode_encoding(data[:4]), errors="replace")


def split_lines(text: str) -> list[str]:
    # Split on "\n" only (not str.splitlines, which also breaks on \x0b, \x1c, U+2028...)
    # so that numbering agrees with the chunker; a final "\n" ends a line, it does not start one.
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return parts


@contextlib.contextmanager
def io_errors(action: str, rel: str) -> Iterator[None]:
    """Turn file-system failures into :class:`WorkspaceError` with a message people can act on."""
    try:
        yield
    except FileNotFoundError:
        raise WorkspaceError(
            f"cannot {action} {rel}: the workspace folder does not exist"
        ) from None
    except OSError as exc:
        if exc.errno == errno.EROFS or (isinstance(exc, PermissionError) and action == "write"):
            raise WorkspaceError(
                f"cannot write {rel}: the workspace is read-only ({exc.strerror})"
            ) from None
        raise WorkspaceError(f"cannot {action} {rel}: {exc.strerror}") from None


def read_note(ws: Workspace, path: str, from_line: int | None = None, lines: int | None = None,
              *, max_bytes: int | None = None, max_chars: int | None = None) -> NoteText:
    """Read a memory file, or a slice of it; a missing file reads as empty text.

    ``from_line`` is clamped to at least 1 and ``lines`` to at least 1; with neither, the whole
    file (unchanged, trailing newline included). A range past the end gives empty text. A
    range is read as a stream and reading stops after it: ``get`` of one line of a 100 MB file
    does not read 100 MB. ``total_lines`` is then exact for files up to
    :data:`COUNT_ALL_BYTES`, and -1 for larger ones (not read to their end).

    ``max_bytes``: a larger file is refused (:class:`ContentError`), as indexing skips it.
    ``max_chars``: the bound of the text returned (:func:`cap_note`).
    """
    resolved = ws.resolve(path)
    start = max(1, from_line or 1)
    with io_errors("read", resolved.rel_path):
        try:
            fd = ws.open_file(resolved, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return NoteText(resolved.rel_path, "", start, start - 1, 0, missing=True)
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if max_bytes is not None and size > max_bytes:
                raise ContentError(
                    f"{resolved.rel_path} is {size} bytes, more than sync.max_file_bytes "
                    f"({max_bytes}): it is neither indexed nor read")
            encoding = unicode_encoding(handle.read(4))
            handle.seek(0)
            if from_line or lines:
                note = _read_range(handle, resolved.rel_path, size, start,
                                   max(1, lines) if lines else None, encoding)
            else:
                text = editor_lines_text(decode_text(handle.read()))
                all_lines = split_lines(text)
                note = NoteText(resolved.rel_path, text, 1, len(all_lines), len(all_lines))
    return cap_note(note, max_chars)


def note_text(rel_path: str, data: bytes | None, from_line: int | None = None,
              lines: int | None = None, *, max_chars: int | None = None) -> NoteText:
    """:func:`read_note`'s answer for a document already in memory (the database backend):
    the same clamping, decoding, line numbering and output bound."""
    start = max(1, from_line or 1)
    if data is None:
        return NoteText(rel_path, "", start, start - 1, 0, missing=True)
    text = editor_lines_text(decode_text(data))
    all_lines = split_lines(text)
    if not (from_line or lines):
        return cap_note(NoteText(rel_path, text, 1, len(all_lines), len(all_lines)), max_chars)
    count = max(1, lines) if lines else None
    selected = all_lines[start - 1: None if count is None else start - 1 + count]
    return cap_note(NoteText(rel_path, "\n".join(selected), start,
                             start + len(selected) - 1, len(all_lines)), max_chars)


def cap_note(note: NoteText, max_chars: int | None) -> NoteText:
    """``note`` with at most ``max_chars`` characters of text: the whole lines that fit, or
    the first line cut when it alone does not."""
    if max_chars is None or len(note.text) <= max_chars:
        return note
    head = note.text[:max_chars]
    cut_at = head.rfind("\n")
    if cut_at > 0:  # whole lines
        kept = head[:cut_at]
        shown = kept.count("\n") + 1
        return replace(note, text=kept, end_line=note.start_line + shown - 1, truncated=True)
    return replace(note, text=head, end_line=note.start_line, truncated=True, line_cut=True)


def _read_range(handle: Any, rel_path: str, size: int, start: int,
                count: int | None, encoding: str) -> NoteText:
    selected: list[str] = []
    seen = 0
    for line in _editor_lines(handle, encoding):
        seen += 1
        if seen >= start and (count is None or seen < start + count):
            selected.append(line)
        elif count is not None and seen >= start + count and size > COUNT_ALL_BYTES:
            seen = -1  # a large file is not read past the range
            break
    return NoteText(rel_path, "\n".join(selected), start, start + len(selected) - 1, seen)


def _editor_lines(handle: Any, encoding: str = "utf-8") -> Iterator[str]:
    """The file's lines as an editor shows them (LF, CRLF or CR), decoded block by block, in
    one linear pass: a block without a line break is only kept, never re-split."""
    # "utf-16" / "utf-32" read the byte-order mark and drop it.
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    held: list[str] = []  # the current line's pieces so far
    while True:
        block = handle.read(_BLOCK)
        text = decoder.decode(block, final=not block)
        held.append(text)
        if block and "\n" not in text and "\r" not in text:
            continue
        pending = "".join(held)
        if block and pending.endswith("\r"):
            held = [pending]  # a CRLF may be split across blocks: wait for the next one
            continue
        parts = editor_lines_text(pending).split("\n")
        held = [parts.pop()]
        yield from parts
        if not block:
            if held[0]:
                yield held[0]
            return
