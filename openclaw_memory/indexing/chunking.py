"""Token-budget chunking on line boundaries.

A port of OpenClaw's ``chunkMarkdown`` that counts real tokens (the configured tiktoken
encoding) instead of ``chars / 4``, which under-sizes CJK and emoji text several times over.
Each line costs its tokens plus one for its newline; lines are collected until the next would
exceed the budget, then the chunk is emitted and its last lines (about ``overlap`` tokens)
start the next one, so a fact cut at a boundary is still found whole in one chunk.

Line numbers are 1-based and inclusive, so a chunk is cited as ``path#Lstart-Lend``; for
session transcripts ``line_map`` turns them into JSONL line numbers.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import re
from collections.abc import Iterator, Sequence
from typing import Literal, NamedTuple

from openclaw_memory.config import ChunkingSettings
from openclaw_memory.indexing.tokens import (
    DEFAULT_ENCODING,
    Tokenizer,
    count_tokens,
    count_tokens_many,
    get_encoding,
)
from openclaw_memory.types import Chunk

__all__ = [
    "blank_front_matter","chunk_hash", "chunk_text", "split_line", "split_lines"]


class _Item(NamedTuple):
    """One unit the windowing walks over: a whole line, or a piece of an over-long one."""

    line_no: int  # 1-based line of ``text`` (before line_map)
    text: str
    size: int  # tokens + 1 for the newline that joins it to the next item
    continuation: bool  # a later piece of the same line as the previous item


def editor_lines_text(text: str) -> str:
    """``text`` with every line break an editor shows written as ``\n``.

    Editors break lines at CRLF, at a lone CR (classic Mac, some exports) and at LF, in any
    mix; citations must count lines the same way, or a CR-only file is one giant line 1.
    """
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as an editor numbers them: no line terminators, no phantom last line.

    A final ``\\n`` ends the last line rather than starting an empty one, and a ``\\r`` before
    ``\\n`` belongs to the terminator (CRLF files), so neither ends up in a chunk.
    """
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    return lines


def chunk_hash(text: str) -> str:
    """SHA-256 hex of the chunk text (the embedding-cache and change-detection key)."""
    # surrogatepass: a lone surrogate must not crash indexing; the file reader should have
    # replaced it already, and for all valid text this is plain UTF-8.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def chunk_text(
    text: str,
    *,
    path: str,
    source: Literal["memory", "sessions"],
    settings: ChunkingSettings,
    line_map: Sequence[int] | None = None,
) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``settings.tokens`` tokens on line boundaries.

    The budget holds for each chunk's lines counted one by one plus the newlines joining
    them; a line over the budget is cut into pieces that keep its line number (only a single
    character that alone exceeds a tiny budget can be over). ``line_map[i - 1]`` is the line
    number reported for line ``i`` of ``text`` (session transcripts flattened from JSONL);
    a shorter ``line_map`` raises ``ValueError``. Chunks holding only whitespace are dropped,
    and so are exact repeats (same lines and text), which only pieces of a cut line with
    periodic content (``=====…``) produce: they add nothing to search and would collide on
    the store's chunk id.
    """
    if not text.strip():
        return []  # also: an empty transcript comes with an empty line_map
    lines = split_lines(text)
    if line_map is not None and len(line_map) < len(lines):
        raise ValueError(f"line_map has {len(line_map)} entries for {len(lines)} lines")
    items = _items(lines, settings.tokens, settings.encoding)
    chunks: list[Chunk] = []
    seen: set[tuple[int, int, str]] = set()
    for raw_window in _windows(items, settings.tokens, settings.overlap):
        window = _trim_blank_edges(raw_window)
        if not window:
            continue
        body = "\n".join(item.text for item in window)
        start, end = window[0].line_no, window[-1].line_no
        if line_map is not None:
            start, end = line_map[start - 1], line_map[end - 1]
        digest = chunk_hash(body)
        if (start, end, digest) in seen:
            continue
        seen.add((start, end, digest))
        chunks.append(Chunk(path, source, start, end, body, digest))
    return chunks


def blank_front_matter(text: str) -> str:
    """Blank out a leading ``---`` ... ``---`` block (metadata, not content).

    Lines are kept as empty lines so every later line keeps its number in citations.
    """
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return text
    lines = text.split("\n")
    for i in range(1, min(len(lines), 500)):
        if lines[i].rstrip("\r") in ("---", "..."):
            if not _looks_like_metadata(lines[1:i]):
                return text  # a horizontal rule, then notes: content, not metadata
            return "\n" * (i + 1) + "\n".join(lines[i + 1:])
    return text


_META_LINE = re.compile(r"^\s*(?:[\w.-]+\s*:(?:\s|$)|-\s|#|[{}\[\]\"]|$)")


def _looks_like_metadata(block: list[str]) -> bool:
    """Front matter as a person writes it: YAML keys (``tags: [a]``), list items under them,
    comments, or a JSON object; not Markdown notes that happen to sit between two rules."""
    lines = [line.rstrip("\r") for line in block]
    if any(line.strip() for line in lines) and lines[0].lstrip().startswith("{"):
        return True
    keys = [line for line in lines if re.match(r"^\s*[\w.-]+\s*:(?:\s|$)", line)]
    return bool(keys) and all(_META_LINE.match(line) for line in lines)


def _trim_blank_edges(window: Sequence[_Item]) -> Sequence[_Item]:
    """Drop blank lines at a chunk's edges: citations then point at text, not padding."""
    start, end = 0, len(window)
    while start < end and not window[start].text.strip():
        start += 1
    while end > start and not window[end - 1].text.strip():
        end -= 1
    return window[start:end]


def split_line(line: str, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> list[str]:
    """Cut one line into pieces of at most ``max_tokens`` tokens that concatenate to it.

    Cuts fall between characters (code points), never inside one; a line within the budget
    is returned whole. ``max_tokens`` below 1 raises ``ValueError``.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if count_tokens(line, encoding) <= max_tokens:
        return [line]
    return [piece for piece, _ in _split_overlong(line, max_tokens, get_encoding(encoding))]


def _items(lines: list[str], budget: int, encoding: str) -> Iterator[_Item]:
    """Lines with their sizes, over-long lines cut into pieces that fit the budget."""
    # One tight loop over all lines: per-call overhead dominates for line-sized texts.
    counts = count_tokens_many(lines, encoding)
    for line_no, (line, count) in enumerate(zip(lines, counts, strict=True), start=1):
        if count <= budget:
            yield _Item(line_no, line, count + 1, False)
            continue
        pieces = _split_overlong(line, budget, get_encoding(encoding))
        for index, (piece, piece_count) in enumerate(pieces):
            yield _Item(line_no, piece, piece_count + 1, index > 0)


def _windows(items: Iterator[_Item], budget: int, overlap: int) -> Iterator[list[_Item]]:
    """Greedy line windows of at most ``budget`` (sum of sizes), each seeded with overlap."""
    buffer: list[_Item] = []
    used = 0
    for item in items:
        # A later piece of a cut line always starts a chunk: two pieces of one line in one
        # chunk would need a "\n" that is not in the source between them.
        if buffer and (item.continuation or used + item.size > budget):
            yield buffer
            room = 0 if item.continuation else budget - item.size
            buffer = _carry(buffer, overlap, room)
            used = sum(kept.size for kept in buffer)
        buffer.append(item)
        used += item.size
    if buffer:
        yield buffer


def _carry(emitted: list[_Item], overlap: int, room: int) -> list[_Item]:
    """The tail of ``emitted`` that seeds the next chunk.

    Whole lines from the end until they reach ``overlap`` tokens, never the whole chunk (the
    next chunk would repeat it and the walk could stall), then trimmed from the front to fit
    ``room`` so that carry + next line stays within the budget.
    """
    kept = 0
    carried = 0
    while carried < overlap and kept < len(emitted) - 1:
        kept += 1
        carried += emitted[-kept].size
    tail = emitted[len(emitted) - kept :]
    while tail and carried > room:
        carried -= tail.pop(0).size
    return tail


def _split_overlong(line: str, budget: int, encoder: Tokenizer) -> list[tuple[str, int]]:
    """Cut ``line`` into pieces of at most ``budget`` tokens, only between characters.

    Returns ``(piece, tokens)`` pairs whose pieces concatenate to ``line`` exactly. A token
    may hold part of a multi-byte character, so cuts are made on the UTF-8 bytes at token
    ends and moved back to the character start; each piece is then re-encoded on its own
    (BPE differs at the cut), stepping back a token while it is still too long. A single
    character that alone exceeds a tiny budget becomes its own piece (unavoidable).
    """
    # surrogatepass keeps byte offsets aligned with tiktoken, which encodes a lone surrogate
    # as U+FFFD: both are three bytes.
    data = line.encode("utf-8", "surrogatepass")
    ids = encoder.encode_ordinary(line)
    ends = list(itertools.accumulate(len(encoder.decode_bytes([token])) for token in ids))
    pieces: list[tuple[str, int]] = []
    start = 0
    while start < len(data):
        first = bisect.bisect_right(ends, start)  # first token ending after ``start``
        last = min(first + budget, len(ends)) - 1
        while True:
            cut = _char_floor(data, ends[last]) if last >= first else start
            minimal = cut <= start
            if minimal:
                cut = _char_ceil(data, start + 1)  # progress: at least one character
            piece = data[start:cut].decode("utf-8", "surrogatepass")
            count = len(encoder.encode_ordinary(piece))
            if count <= budget or minimal:
                break
            last -= 1
        pieces.append((piece, count))
        start = cut
    return pieces


def _is_continuation_byte(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _char_floor(data: bytes, offset: int) -> int:
    """The nearest character start at or before byte ``offset``."""
    while offset < len(data) and _is_continuation_byte(data[offset]):
        offset -= 1
    return offset


def _char_ceil(data: bytes, offset: int) -> int:
    """The nearest character start at or after byte ``offset``."""
    while offset < len(data) and _is_continuation_byte(data[offset]):
        offset += 1
    return offset
