"""Append LangChain messages to a session transcript (JSONL) that the index can read.

Kept apart from :mod:`openclaw_memory.sessions.transcripts` (the reader) so that indexing never imports
LangChain: the engine and the CLI start faster and a transcript reader needs no message classes.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from openclaw_memory.errors import ContentError, WorkspaceError
from openclaw_memory.files.atomic import write_all

__all__ = ["append_messages"]

# O_NONBLOCK: a FIFO planted at the path must not hang the writer (it is then refused).
_APPEND_FLAGS = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                 | os.O_NONBLOCK)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


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
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
        write_all(fd, data)
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
