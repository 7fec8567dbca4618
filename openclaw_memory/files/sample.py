"""The bundled sample workspace, copied where a user can try things on it."""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

from openclaw_memory.errors import WorkspaceError

__all__ = ["sample_workspace"]


def sample_workspace(target: str | os.PathLike[str]) -> Path:
    """Copy the bundled sample notes (a small team's ``MEMORY.md`` and daily logs) to
    ``target`` and return its path. A folder that already holds a ``MEMORY.md`` or a
    ``memory/`` folder is left as it is (so a second run keeps what was written there);
    any other existing, non-empty folder is refused rather than mixed with the sample."""
    path = Path(target).expanduser()
    if (path / "MEMORY.md").exists() or (path / "memory").is_dir():
        return path
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise WorkspaceError(f"{path} exists and is not a memory workspace: give an empty or "
                             "new folder for the sample")
    source = resources.files("openclaw_memory") / "sample_workspace"
    with resources.as_file(source) as src:
        shutil.copytree(src, path, dirs_exist_ok=True)
    return path
