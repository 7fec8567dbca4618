"""Where documents of the agent surfaces live: a folder, or a database.

The LangChain VectorStore and the LangGraph ``BaseStore`` keep each item as one Markdown file
of their own. :class:`DocumentSpace` is what they need of the memory that holds those files:
read, write, remove and list documents through the path gate, then make the writes
searchable. :class:`FolderSpace` is a workspace folder (atomic renames, never following
links, a sync after writing); the PostgreSQL backend's space writes rows, indexed as they are
written (``postgres/space.py``).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from openclaw_memory.errors import PathRefusedError, WorkspaceError
from openclaw_memory.files.atomic import swap_in
from openclaw_memory.files.workspace import ResolvedPath, Workspace

__all__ = ["DocumentSpace", "FolderSpace", "remove_file", "write_file"]


class DocumentSpace(ABC):
    @abstractmethod
    def check(self, rel_path: str, *, purpose: Literal["read", "write"] = "read") -> str:
        """The path as the gate normalises it; :class:`PathRefusedError` when refused."""

    @abstractmethod
    def read(self, rel_path: str) -> bytes | None:
        """A document's bytes (None: missing, or refused by the gate)."""

    @abstractmethod
    def write(self, rel_path: str, data: bytes) -> bool:
        """Replace a document whole; False when it already held exactly these bytes."""

    @abstractmethod
    def remove(self, rel_path: str) -> bool:
        """Delete a document; False when it was not there."""

    @abstractmethod
    def paths(self, folder: str) -> list[str]:
        """Every ``.md`` document below ``folder`` (``memory/...``), sorted."""

    @abstractmethod
    def settle(self, reason: str) -> None:
        """Make the writes so far searchable before returning."""


class FolderSpace(DocumentSpace):
    """Documents as files of a workspace folder, indexed by a sync of its ``MemoryIndex``.

    ``recorded(path)``: the (size, mtime_ns) the index holds for a file, so a same-size
    rewrite within one clock tick still looks changed to the next sync; ``settle(reason)``:
    sync the index now.
    """

    def __init__(self, ws: Workspace, recorded: Callable[[str], tuple[int, int] | None],
                 settle: Callable[[str], None], *, max_bytes: int | None = None) -> None:
        self.ws = ws
        self._recorded = recorded
        self._settle = settle
        self.max_bytes = max_bytes  # larger documents are refused (ContentError), not read

    def check(self, rel_path: str, *, purpose: Literal["read", "write"] = "read") -> str:
        return self.ws.resolve(rel_path, purpose=purpose).rel_path

    def read(self, rel_path: str) -> bytes | None:
        try:
            resolved = self.ws.resolve(rel_path)
        except PathRefusedError:
            return None  # e.g. a symlink swapped in since indexing: not a document any more
        return self.ws.read_bytes(resolved, max_bytes=self.max_bytes)

    def write(self, rel_path: str, data: bytes) -> bool:
        resolved = self.ws.resolve(rel_path, purpose="write")
        if self.ws.read_bytes(resolved) == data:
            return False  # same bytes: no new mtime, no re-index
        write_file(self.ws, resolved, data, avoid_stat=self._recorded(resolved.rel_path))
        return True

    def remove(self, rel_path: str) -> bool:
        return remove_file(self.ws, self.ws.resolve(rel_path, purpose="write"))

    def paths(self, folder: str) -> list[str]:
        base = self.ws.root.joinpath(*folder.strip("/").split("/"))
        if not base.is_dir() or base.is_symlink():
            return []
        found = []
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames.sort()
            rel = Path(dirpath).relative_to(self.ws.root).as_posix()
            found += [f"{rel}/{name}" for name in filenames if name.endswith(".md")]
        return sorted(found)

    def settle(self, reason: str) -> None:
        self._settle(reason)


def write_file(ws: Workspace, resolved: ResolvedPath, payload: bytes,
               avoid_stat: tuple[int, int] | None = None) -> None:
    """Replace the file atomically (temp file + rename in the same directory).

    ``avoid_stat`` is the (size, mtime_ns) the index recorded for this path: sync skips a file
    whose size and mtime are unchanged, so on a coarse-clock file system a same-size rewrite
    within one clock tick would go unseen. The new file's mtime is nudged when it collides.
    """
    try:
        dir_fd = ws.open_parent(resolved, create=True)
    except OSError as exc:
        raise _write_error(resolved, exc) from None
    try:
        swap_in(dir_fd, resolved.name, payload, avoid_stat=avoid_stat)
    except OSError as exc:
        raise _write_error(resolved, exc) from None
    finally:
        os.close(dir_fd)


def remove_file(ws: Workspace, resolved: ResolvedPath) -> bool:
    """Unlink the file (never following links); False when it was already gone."""
    try:
        dir_fd = ws.open_parent(resolved)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _write_error(resolved, exc) from None
    try:
        os.unlink(resolved.name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _write_error(resolved, exc) from None
    finally:
        os.close(dir_fd)
    return True


def _write_error(resolved: ResolvedPath, exc: OSError) -> WorkspaceError:
    return WorkspaceError(f"cannot write {resolved.rel_path}: {exc.strerror or exc}")
