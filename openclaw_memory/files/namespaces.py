"""Namespaces as folders below ``memory/``: ``("memories", "alice")`` is
``memory/memories/alice``, shared by the LangGraph store, per-user memory scopes and langmem.

Labels are percent-encoded where a character is not safe in a path, so ``"a/b"`` is one folder
``a%2Fb``, never two, and a leading dot never makes a hidden folder. Any label a LangGraph store
or a user id can hold maps to one folder name within every file system's 255-byte limit: a
label whose encoding is longer than :data:`MAX_LABEL_CHARS` keeps a readable prefix and ends in
``%~`` and a digest of the whole label (a sequence the plain encoding never produces, so two
labels never share a folder); the empty label is ``%~`` alone. A long label's folder name is
not decoded back: the LangGraph store reads an item's namespace from its file's header, which
must encode to its own folder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from urllib.parse import quote, unquote

__all__ = ["MAX_LABEL_CHARS", "ROOT", "encode_label", "folder_of", "namespace_of"]

ROOT = "memory"
_SAFE = "-_~@+=,"  # besides letters and digits: readable, and safe in every file system
MAX_LABEL_CHARS = 200  # ASCII after encoding: bytes; file systems allow 255
_PREFIX_CHARS = 120
_LONG = "%~"  # never in a plain encoding: "%" is always followed by two hex digits there


def folder_of(namespace: Sequence[str]) -> str:
    """``memory/<label>/<label>...`` for a namespace (empty: ``memory``)."""
    return "/".join([ROOT, *(_label(part) for part in namespace)])


def _label(part: str) -> str:
    return encode_label(part)


def encode_label(part: str) -> str:
    """One path segment for any label: reversible by :func:`namespace_of` up to
    :data:`MAX_LABEL_CHARS`, a digest-tagged prefix beyond (module doc)."""
    if not part:
        return _LONG  # the empty label (a LangGraph batch() accepts it): never a plain name
    encoded = quote(part, safe=_SAFE, errors="surrogatepass")
    # A leading dot would make a hidden folder (and "." / ".." are not names at all).
    encoded = "%2E" + encoded[1:] if encoded.startswith(".") else encoded
    if len(encoded) <= MAX_LABEL_CHARS:
        return encoded
    prefix = encoded[:_PREFIX_CHARS]
    cut = prefix.rfind("%", len(prefix) - 2)  # never split a %XX triple
    if cut >= 0:
        prefix = prefix[:cut]
    digest = hashlib.sha256(part.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{prefix}{_LONG}{digest}"


def namespace_of(folder_parts: Sequence[str]) -> tuple[str, ...]:
    """The namespace of a folder below ``memory/`` (its parts, decoded; a long label's
    digest-tagged name stays as it is)."""
    return tuple("" if part == _LONG else part if _LONG in part else unquote(part)
                 for part in folder_parts)
