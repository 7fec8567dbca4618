"""Session transcripts: JSONL in, one line of text per message out, and a JSONL writer.

The flattened text has exactly one line per user or assistant message (``User: ...`` /
``Assistant: ...``) and ``line_map`` gives, for each of those lines, the JSONL line it came from,
so search hits on a transcript cite JSONL line numbers. Damaged lines are counted, never fatal:
a transcript is often being written while we read it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Transcript",
    "flatten_transcript",
    "indexable_prefix",
    "message_text",
]

_SPEAKERS = {"user": "User", "assistant": "Assistant"}
# LangChain's own message type names, as written by ``messages_to_dict`` or flat dicts.
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant"}
# JSON "\ud83d" escapes can decode to lone surrogates, which no UTF-8 consumer (SQLite included)
# accepts; they become U+FFFD in the flattened text.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")



@dataclass(frozen=True, slots=True)
class Transcript:
    """Flattened transcript; ``line_map[i]`` is the JSONL line of text line ``i + 1``."""

    text: str
    line_map: tuple[int, ...]
    messages: int
    malformed: int
    hash: str


def flatten_transcript(data: bytes) -> Transcript:
    """Flatten JSONL bytes; blank lines are ignored, undecodable or invalid lines are counted.

    Understood records: OpenClaw's ``{"type": "message", "message": {"role", "content"}}``
    (what :func:`append_messages` writes) and LangChain's ``{"type": "human"|"ai", "content"}``
    or ``{"type": ..., "data": {"content"}}``. Only text reaches the output: tool calls, tool
    results, images and reasoning blocks are dropped.
    """
    lines: list[str] = []
    line_map: list[int] = []
    malformed = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        record = _parse(raw)
        if record is None:
            malformed += 1
            continue
        entry = _message_line(record)
        if entry is not None:
            lines.append(entry)
            line_map.append(number)
    text = "\n".join(lines)
    digest = hashlib.sha256((text + "\n" + ",".join(map(str, line_map))).encode()).hexdigest()
    return Transcript(text, tuple(line_map), len(line_map), malformed, digest)


def indexable_prefix(data: bytes) -> bytes:
    """``data`` without a last line that is still being written.

    A final line with no newline that does not parse yet is a record in the middle of being
    appended: it is left for the next sync (and counted in its byte delta) instead of being
    indexed as damage. A final line that parses is kept (some writers omit the last newline).
    """
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    if tail.strip() and _parse(tail) is None:
        return data[:cut]
    return data


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    # A valid JSON value that is not an object is not a record: count it as damaged.
    return value if isinstance(value, dict) else None


def _message_line(record: dict[str, Any]) -> str | None:
    role, content = _role_and_content(record)
    speaker = _SPEAKERS.get(role) if isinstance(role, str) else None
    if speaker is None:
        return None
    text = message_text(content)
    return f"{speaker}: {text}" if text else None


def _role_and_content(record: dict[str, Any]) -> tuple[object, object]:
    kind = record.get("type")
    if kind == "message":
        message = record.get("message")
        if isinstance(message, dict):
            return message.get("role"), message.get("content")
        return None, None
    if isinstance(kind, str) and kind in _LANGCHAIN_ROLES:
        data = record.get("data")
        source = data if isinstance(data, dict) else record
        return _LANGCHAIN_ROLES[kind], source.get("content")
    return None, None


def message_text(content: object) -> str:
    """The text of a message ``content`` (a string or a list of blocks) on one line.

    Every run of whitespace, line breaks included (also ``\\r``, U+2028 and friends), becomes
    one space, so one message is always exactly one line of the flattened transcript.
    """
    if isinstance(content, str):
        return _one_line(content)
    if not isinstance(content, list):
        return ""
    pieces = (_one_line(text) for text in _text_blocks(content))
    return " ".join(piece for piece in pieces if piece)


def _text_blocks(blocks: list[Any]) -> Iterator[str]:
    for block in blocks:
        if isinstance(block, str):
            yield block  # LangChain allows bare strings in a content list
        elif isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                yield text


def _one_line(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", " ".join(text.split()))


