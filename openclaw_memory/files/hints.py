"""What to tell someone whose workspace holds no memory files: what was looked for, and where
the notes probably are (``Memory/`` instead of ``memory/``, Markdown at the folder root, a
workspace one folder down); and why a workspace cannot be written."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["empty_workspace_hint", "write_problem"]

_LOOKED_FOR = "MEMORY.md (or memory.md) and memory/**/*.md"
_MAX_ENTRIES = 2000  # a home directory must not cost a full walk
_SHOWN = 3


def empty_workspace_hint(root: Path, *, extra_paths: tuple[Path, ...] = ()) -> str:
    """One line: where we looked, what for, and any likely mistake found nearby."""
    where = f"no memory files in {root} (looked for {_LOOKED_FOR}"
    where += f", and {len(extra_paths)} extra path(s))" if extra_paths else ")"
    if not root.is_dir():
        return f"{where}: the folder does not exist"
    clues = _clues(root)
    if not clues:
        clues = ["it holds no Markdown at all: write a note with `openclaw-memory write`, or point "
                 "--workspace (or OPENCLAW_MEMORY_WORKSPACE) at the folder holding MEMORY.md"]
    return f"{where}; " + "; ".join(clues)


def _clues(root: Path) -> list[str]:
    clues: list[str] = []
    root_md: list[str] = []
    nested: list[str] = []
    for entry in _entries(root):
        name = entry.name
        if entry.is_dir(follow_symlinks=False):
            if name.lower() == "memory" and name != "memory":
                clues.append(f"found {name}/ holding {_count_md(Path(entry.path))} .md file(s): "
                             f"names are case-sensitive, rename it to memory/")
            elif _is_workspace(Path(entry.path)):
                nested.append(name)
        elif name.lower().endswith(".md"):
            if name.lower() == "memory.md" and name not in {"MEMORY.md", "memory.md"}:
                clues.append(f"found {name}: rename it to MEMORY.md")
            else:
                root_md.append(name)
    if root_md:
        shown = ", ".join(sorted(root_md)[:_SHOWN]) + (", ..." if len(root_md) > _SHOWN else "")
        clues.append(f"found {len(root_md)} other .md file(s) at the folder root ({shown}): only "
                     "MEMORY.md is read there; move notes into memory/ or list them in extra_paths")
    for name in sorted(nested)[:_SHOWN]:
        clues.append(f"{name}/ looks like a workspace (it holds MEMORY.md or memory/): did you "
                     f"mean --workspace {root / name}?")
    return clues


def _entries(root: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(root) as it:
            return [entry for _, entry in zip(range(_MAX_ENTRIES), it, strict=False)]
    except OSError:
        return []


def _count_md(folder: Path) -> int:
    count = 0
    for seen, (_, _, files) in enumerate(os.walk(folder)):
        count += sum(1 for name in files if name.lower().endswith(".md"))
        if seen > _MAX_ENTRIES:
            break
    return count


def _is_workspace(folder: Path) -> bool:
    return any((folder / name).exists() for name in ("MEMORY.md", "memory.md", "memory"))


def write_problem(root: Path) -> str | None:
    """Why notes cannot be written to the workspace at ``root`` (None: nothing known)."""
    if not root.is_dir():
        return f"workspace {root} does not exist"
    memory_dir = root / "memory"
    target = memory_dir if memory_dir.is_dir() else root
    if not os.access(target, os.W_OK | os.X_OK):
        return f"workspace {target} is not writable"
    try:
        read_only_fs = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
    except OSError:
        read_only_fs = False  # unknown: let the write itself report a failure
    return f"workspace {target} is on a read-only file system" if read_only_fs else None
