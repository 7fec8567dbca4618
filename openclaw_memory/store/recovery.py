"""Opening the index file, and what happens when it cannot be used.

An index is derived data: a damaged one (a torn page, a truncation, a newer schema) is moved
aside, kept for inspection and never deleted, and a new one is built from the Markdown files.
Only a file this library created is ever moved: SQLite's header still carries our application
id, or the file sits in our own state folder where nothing else writes. Anything else
(another application's database, a note, a typo in ``--index``) is someone's data: it is
refused with a clear error and left as it is.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Literal

from openclaw_memory.config import StoreSettings
from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.store.db import Store
from openclaw_memory.store.paths import state_dir
from openclaw_memory.store.schema import APPLICATION_ID

__all__ = ["is_ours", "new_store", "open_index_store", "set_aside"]


def open_index_store(path: Path, settings: StoreSettings, notes: list[str]) -> Store:
    """The store of the index file at ``path``; a damaged file of ours is set aside (a note
    says where) and a new index opened in its place."""
    try:
        return new_store(path, settings)
    except IndexCorruptError as exc:
        if not is_ours(path):
            raise StoreError(
                f"refusing to use {path} as the index: it is not an "
                f"openclaw-memory index ({exc}); nothing was changed. Point --index (or "
                "store.path) at a new file, or at an index this library created") from None
        set_aside(path, exc, notes)
        return new_store(path, settings)


def new_store(path: Path, settings: StoreSettings, *,
              keyword_backend: Literal["auto", "fts5"] | None = None) -> Store:
    """A store of the index file at ``path`` as ``settings`` say (``keyword_backend``: another
    than the settings')."""
    return Store(path, vector_backend=settings.vector_backend,
                 fts_tokenizer=settings.fts_tokenizer, busy_timeout_ms=settings.busy_timeout_ms,
                 max_matrix_mb=settings.max_matrix_mb,
                 keyword_backend=keyword_backend or settings.keyword_backend)


def is_ours(path: Path) -> bool:
    """Whether an unusable index file was created by this library, so it may be set aside."""
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        return False
    if len(header) >= 72 and int.from_bytes(header[68:72], "big") == APPLICATION_ID:
        return True
    return state_dir().resolve() in path.resolve().parents


def set_aside(path: Path, exc: IndexCorruptError, notes: list[str]) -> None:
    """Move a damaged index file (and its WAL files) away, kept for inspection, never
    deleted; ``notes`` says where."""
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    notes.append(f"{exc}; moved it to {aside} and rebuilt from the Markdown files")
