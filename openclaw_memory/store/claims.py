"""Which index files the live ``MemoryIndex`` objects of this process use, and with which vectors.

Two objects with different embeddings on one file would rebuild it under each other, so the
second is refused; each embedding other than the default also gets a default file of its own
(:func:`embedding_key`, used by :func:`~openclaw_memory.store.paths.default_index_path`).
"""

from __future__ import annotations

import json
import threading
import weakref
from pathlib import Path
from typing import Protocol

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.factory import openai_configured
from openclaw_memory.errors import ConfigError

__all__ = ["IndexClaimant", "claim_index_file", "embedding_key"]


class IndexClaimant(Protocol):
    """What a claim needs to know of the object holding an index file open."""

    embedding_key: str | None
    closed: bool


_LIVE: weakref.WeakValueDictionary[tuple[Path, str], IndexClaimant] = weakref.WeakValueDictionary()
_LIVE_LOCK = threading.Lock()


def embedding_key(settings: MemorySettings, embedder: EmbeddingProvider | None) -> str | None:
    """Identity of the vectors an index would hold; None for the default local model."""
    if embedder is not None:
        return f"custom:{embedder.id}:{embedder.model}:{embedder.provider_key}"
    e = settings.embedding
    provider = e.provider
    if provider == "auto":
        provider = "openai" if openai_configured(e) else "local"  # the factory's own rule
    if provider == "local" and e.model is None and e.local_model_path is None:
        return None
    return json.dumps([provider, e.model, e.base_url, e.dimensions,
                       str(e.local_model_path or "")])


def claim_index_file(path: Path, index: IndexClaimant) -> None:
    key = index.embedding_key or "default"
    with _LIVE_LOCK:
        for (other_path, other_key), other in list(_LIVE.items()):
            if other_path == path and other_key != key and not other.closed:
                raise ConfigError(
                    f"index {path} is already open in this process with another embedding "
                    f"({other_key}); two embeddings cannot share one index file: give this "
                    "one its own index_path (or leave index_path unset: each embedding then "
                    "gets its own file)")
        _LIVE[(path, key)] = index


