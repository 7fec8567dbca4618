"""A memory file's bytes as text for indexing: binary files told apart, encodings read, and
what cannot be stored (NUL bytes, invalid UTF-8) replaced with a warning, never dropped: line
numbers stay those of the file."""

from __future__ import annotations

from openclaw_memory.files.reading import decode_text, unicode_encoding
from openclaw_memory.indexing.chunking import editor_lines_text
from openclaw_memory.indexing.sync_report import SyncPlan

__all__ = ["decode_file", "looks_binary"]


def looks_binary(data: bytes, sample: int = 8_192) -> bool:
    """An image or archive named ``.md``: NUL bytes or undecodable bytes are common in its start.

    A text file with a stray NUL or a few bad bytes is indexed (with replacements and a
    warning); a binary file would only fill the index with garbage.
    """
    head = data[:sample]
    if not head:
        return False
    if head.count(b"\x00") > max(2, len(head) // 100):
        return True
    bad = len(head.decode("utf-8", errors="replace").encode("utf-8")) - len(
        head.decode("utf-8", errors="ignore").encode("utf-8"))
    return bad // 3 > len(head) // 10  # U+FFFD is 3 bytes: more than 10 % undecodable


def decode_file(data: bytes, path: str, plan: SyncPlan) -> str:
    if unicode_encoding(data[:4]) != "utf-8":  # UTF-16/32 with a byte-order mark
        return decode_text(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        plan.warn_file(path, "invalid UTF-8, indexed with replacement characters")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = editor_lines_text(text)
    if "\x00" in text:
        # SQLite text and FTS5 stop at NUL; keep line numbers by replacing, not removing.
        text = text.replace("\x00", "\ufffd")
        plan.warn_file(path, "NUL bytes replaced for indexing")
    return text
