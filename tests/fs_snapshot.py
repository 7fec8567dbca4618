"""Helpers shared by tests (a module, not conftest: conftest names collide in subfolders)."""

from __future__ import annotations

from pathlib import Path


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Bytes and mtime of every file under ``root`` (to prove indexing never writes them)."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}
