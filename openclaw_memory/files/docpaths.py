"""The path gate for memory documents that live in a database rather than in a folder.

The same allowlist as :meth:`Workspace.resolve` without a file system: ``MEMORY.md`` /
``memory.md`` and ``memory/**/*.md``, relative, no ``..``, no control characters or
backslashes, no names a file system could not hold. What a folder workspace refuses, a
database workspace refuses too, so a workspace can move between backends unchanged.
"""

from __future__ import annotations

from openclaw_memory.errors import PathRefusedError
from openclaw_memory.files.workspace import PathKind, memory_kind, path_components

__all__ = ["document_path"]


def document_path(path: object) -> tuple[str, PathKind]:
    """``(normalised relative path, kind)`` of an allowed memory document, else
    :class:`PathRefusedError` (no detail: the refusal must not help probing)."""
    if not isinstance(path, str):
        raise PathRefusedError()
    parts = path_components(path)
    if parts is None or path.strip().startswith("/"):
        raise PathRefusedError()
    kind = memory_kind(parts)
    if kind is None or any(_unstorable(p) for p in parts):
        raise PathRefusedError()
    return "/".join(parts), kind


def _unstorable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True  # lone surrogates: cannot be stored as text or typed back
    return False
