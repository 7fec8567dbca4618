"""The rows of the index as the rest of the package reads them, and how chunk rows are named:
their id (a digest of what they are) and their rowid (never reused)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from openclaw_memory.types import Chunk

__all__ = ["ChunkRow", "FileRow", "chunk_id", "next_rowid"]


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    source: str
    hash: str
    mtime_ns: int
    size: int
    chunks: int
    indexed_at: float = 0.0  # when the indexed bytes were read (see sync's racy-stat check)


@dataclass(frozen=True, slots=True)
class ChunkRow:
    rowid: int
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str


def next_rowid(conn: Any) -> int:
    """The highest chunk rowid ever given out (a high-water mark in ``meta``, or the highest
    present). Chunks are immutable rows: the in-memory copies of their vectors and postings
    are brought up to date by rowid alone, so a rowid freed by deleting the newest file's
    chunks must never name a different chunk (SQLite hands out max(rowid) + 1 by default)."""
    row = conn.execute("select max(coalesce((select cast(value as integer) from meta "
                       "where key = 'rowid_high'), 0), coalesce((select max(rowid) from chunks), "
                       "0))").fetchone()
    return int(row[0])


def chunk_id(chunk: Chunk, model: str) -> str:
    raw = f"{chunk.source}:{chunk.path}:{chunk.start_line}:{chunk.end_line}:{chunk.hash}:{model}"
    return hashlib.sha256(raw.encode()).hexdigest()
