"""Hits as search returns them, built by hand, and the default encoder, for tests of what
happens to hits after scoring (dates, newer first, present values)."""

from __future__ import annotations

from typing import Any

from openclaw_memory.search.subject_lines import PlacedLine
from openclaw_memory.types import HitExplanation, SearchHit


def cited_hit(path: str, text: str, score: float) -> SearchHit:
    """A hit citing ``text`` (line 1 of ``path``) with ``score``, as search renders it."""
    return SearchHit(path, 1, 1, score, f"{text}\n\nSource: {path}#L1", "memory", f"{path}#L1",
                     "id-" + path, HitExplanation(None, None, None, None, score))


def default_embed() -> Any:
    """The bundled default encoder's ``embed_documents``."""
    from openclaw_memory.config import EmbeddingSettings
    from openclaw_memory.embeddings.factory import build_provider

    return build_provider("local", EmbeddingSettings()).embed_documents


def curated_lines(*lines: str, path: str = "MEMORY.md") -> list[PlacedLine]:
    """``lines`` as a curated file's, numbered from 1."""
    return [PlacedLine(text, path, n, f"{path}:1") for n, text in enumerate(lines, 1)]
