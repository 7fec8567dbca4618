"""The systems openclaw-memory supports, checked when the package is imported."""

from __future__ import annotations

import os

__all__ = ["require_posix"]


def require_posix() -> None:
    """Fail at import with the reason, not later with an AttributeError deep in the path gate."""
    try:
        import fcntl  # noqa: F401  (note appends lock with it)
    except ImportError:
        supported = False
    else:
        supported = os.name == "posix" and bool(getattr(os, "O_NOFOLLOW", 0))
    if not supported:
        raise ImportError(
            "openclaw-memory runs on POSIX systems (Linux, macOS): its path gate opens files "
            "relative to directory descriptors with O_NOFOLLOW and note appends take fcntl "
            "locks. On Windows, run it inside WSL.")


require_posix()
