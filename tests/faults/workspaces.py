"""Workspaces whose every line carries the version of the file it belongs to."""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["SMALL_CHUNKS", "note_text", "write_note", "write_workspace"]

#: Small chunks so that a few lines give several chunks per file (more kill points).
SMALL_CHUNKS = {"chunking": {"tokens": 48, "overlap": 8}}

_WORDS = ("invoice billing postgres redis frankfurt lisbon coffee peanut deploy ticket renderer "
          "cluster cache tokyo meeting agenda budget roadmap sprint backlog").split()


def note_text(name: str, version: int, lines: int = 12, seed: int = 0) -> str:
    """Markdown whose lines all say ``<name> v<version>`` (to spot mixed versions)."""
    rng = random.Random(f"{name}:{version}:{seed}")
    body = [f"# {name} v{version}", ""]
    for i in range(lines):
        words = " ".join(rng.choice(_WORDS) for _ in range(8))
        body.append(f"- {name} v{version} line {i}: {words}")
    return "\n".join(body) + "\n"


def write_note(root: Path, rel: str, version: int, lines: int = 12) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(note_text(Path(rel).stem, version, lines), encoding="utf-8")


def write_workspace(root: Path, files: int, version: int = 1, lines: int = 12) -> list[str]:
    """``MEMORY.md`` plus ``files - 1`` notes under ``memory/`` (some in sub-folders)."""
    rels = ["MEMORY.md"] + [
        f"memory/2026-02-{i:02d}.md" if i % 3 else f"memory/topics/t{i}.md"
        for i in range(1, files)]
    for rel in rels:
        write_note(root, rel, version, lines)
    return rels
