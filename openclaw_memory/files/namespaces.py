"""Namespaces as folders below ``memory/``: ``("memories", "alice")`` is
``memory/memories/alice``, shared by the LangGraph store, per-user memory scopes and langmem.

Labels are percent-encoded where a character is not safe in a path, so ``"a/b"`` is one folder
``a%2Fb``, never two, and a leading dot never makes a hidden folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote, unquote

__all__ = ["ROOT", "folder_of", "namespace_of"]

ROOT = "memory"
_SAFE = "-_~@+=,"  # besides letters and digits: readable, and safe in every file system


def folder_of(namespace: Sequence[str]) -> str:
    """``memory/<label>/<label>...`` for a namespace (empty: ``memory``)."""
    return "/".join([ROOT, *(_label(part) for part in namespace)])


def _label(part: str) -> str:
    encoded = quote(part, safe=_SAFE)
    # A leading dot would make a hidden folder (and "." / ".." are not names at all).
    return "%2E" + encoded[1:] if encoded.startswith(".") else encoded


def namespace_of(folder_parts: Sequence[str]) -> tuple[str, ...]:
    """The namespace of a folder below ``memory/`` (its parts, decoded)."""
    return tuple(unquote(part) for part in folder_parts)
