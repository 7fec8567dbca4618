"""Session transcripts: JSONL in, one line of text per message out, and a JSONL writer.

The flattened text has exactly one line per user or assistant message (``User: ...`` /
``Assistant: ...``) and ``line_map`` gives, for each of those lines, the JSONL line it came from,
so search hits on a transcript cite JSONL line numbers. Damaged lines are counted, never fatal:
a transcript is often being written while we read it.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from openclaw_memory.errors import ContentError, WorkspaceError

__all__ = [
    "Transcript",
    "append_messages",
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
# O_NONBLOCK: a FIFO planted at the path must not hang the writer (it is then refused).
_APPEND_FLAGS = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                 | os.O_NONBLOCK)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


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


def append_messages(path: str | os.PathLike[str], messages: Iterable[BaseMessage]) -> int:
    """Append LangChain messages to a JSONL transcript; returns the number of lines written.

    Human and AI messages are stored as ``user`` / ``assistant`` records (the ones indexed);
    others keep their own type as role (``system``, ``tool``...) so the transcript stays
    complete, and are ignored by :func:`flatten_transcript`. Tool calls and tool-call ids are
    kept in the record, outside ``content``, so they never reach the index. The parent folder
    is created. All messages of one call are written with one ``write`` under an exclusive
    ``flock``, so concurrent writers (processes or threads) never interleave or tear lines.

    Raises :class:`ContentError` for something that is not a LangChain message and
    :class:`WorkspaceError` when the file is a symlink, sits in a symlinked folder, is not a
    regular file, or cannot be written.
    """
    batch = list(messages)
    for message in batch:
        if not isinstance(message, BaseMessage):
            raise ContentError(
                f"append_messages takes LangChain messages, not {type(message).__name__}")
    if not batch:
        return 0
    stamp = datetime.now(UTC)
    records = [_record(message, stamp) for message in batch]
    payload = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
    # A lone surrogate cannot be encoded; replacing it keeps the line valid UTF-8 JSON.
    data = payload.encode("utf-8", errors="replace")
    target = Path(path).expanduser()
    try:
        _append_locked(target, data)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EEXIST):
            raise WorkspaceError(
                f"refusing to write transcript {target}: it or its folder is a symlink "
                "or not a regular file/folder") from None
        raise WorkspaceError(f"cannot write transcript {target}: {exc.strerror}") from None
    return len(records)


def _append_locked(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # The file is opened relative to its folder, both without following links: a symlink
    # swapped in for either after the mkdir fails to open instead of redirecting the write.
    dir_fd = os.open(path.parent, _DIR_FLAGS)
    try:
        fd = os.open(path.name, _APPEND_FLAGS, 0o600, dir_fd=dir_fd)  # private: owner only
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.ENOTDIR, "not a regular file")  # a FIFO or device: refuse
        fcntl.flock(fd, fcntl.LOCK_EX)
        # A writer that crashed mid-line left no "\n": start on a fresh line so only the
        # broken record is lost, not ours too.
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)  # also releases the lock


def _record(message: BaseMessage, stamp: datetime) -> dict[str, Any]:
    if isinstance(message, HumanMessage):
        role = "user"
    elif isinstance(message, AIMessage):
        role = "assistant"
    else:
        role = str(message.type)
    body: dict[str, Any] = {
        "role": role,
        "content": message.content,
        "timestamp": int(stamp.timestamp() * 1000),
    }
    if message.id:
        body["id"] = message.id
    if message.name:
        body["name"] = message.name
    if isinstance(message, AIMessage) and message.tool_calls:
        body["tool_calls"] = [dict(call) for call in message.tool_calls]
    if isinstance(message, ToolMessage):
        body["tool_call_id"] = message.tool_call_id
    return {
        "type": "message",
        "timestamp": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "message": body,
    }


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]
