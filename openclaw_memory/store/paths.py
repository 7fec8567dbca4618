"""Where indexes live by default: a per-workspace file in a state directory."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

__all__ = ["cache_dir", "default_index_path", "prefix_range", "state_dir"]


def cache_dir() -> Path:
    """``$OPENCLAW_MEMORY_CACHE_DIR``, else ``$XDG_CACHE_HOME/openclaw-memory``, else ~/.cache:
    data derived from installed packages (the ready local model), safe to delete."""
    explicit = os.environ.get("OPENCLAW_MEMORY_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "openclaw-memory"


def state_dir() -> Path:
    """``$OPENCLAW_MEMORY_STATE_DIR``, else ``$XDG_STATE_HOME/openclaw-memory``, else ~/.local/state."""
    explicit = os.environ.get("OPENCLAW_MEMORY_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "openclaw-memory"


def default_index_path(workspace: Path, agent_id: str | None = None,
                       embedding_key: str | None = None) -> Path:
    """One index file per workspace (and agent, and embedding), never inside ``memory/``.

    Agents sharing a workspace get one index each, as in OpenClaw (``<agentId>.sqlite``), so
    one agent's transcripts never appear in another agent's searches. An embedding other than
    the default (``embedding_key``, see ``MemoryIndex``) gets its own file too: two objects
    with different vectors on one workspace never rebuild each other's index.
    """
    resolved = str(workspace.expanduser().resolve())
    digest = hashlib.sha256(resolved.encode()).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(resolved).name or "root")[:40]
    agent = f".agent-{agent_id}" if agent_id else ""
    embedding = ""
    if embedding_key:
        embedding = ".emb-" + hashlib.sha256(embedding_key.encode()).hexdigest()[:10]
    return state_dir() / "indexes" / f"{name}-{digest}{agent}{embedding}.sqlite"


def prefix_range(prefix: str) -> tuple[str, str]:
    """[low, high) bounds of the paths starting with ``prefix``, for the ``chunks_path`` index."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1) if prefix else "\U0010ffff"
