"""One LangGraph store item = one Markdown file: where it lives, what it holds, what is searched.

``("memories", "alice")`` / ``"tea"`` lives at ``memory/memories/alice/tea-<digest>.md``::

    ---
    {"store": {"namespace": ["memories", "alice"], "key": "tea", "value": {...},
               "created_at": "2026-11-23T10:00:00+00:00", "updated_at": "...", "index": null}}
    ---
    # tea

    Alice drinks green tea without sugar.

The one-line JSON header keeps the value exactly (types and key order round-trip; the index
never searches front matter). The body is what a person reads and what search sees: the
indexed fields of the value (the store's ``index["fields"]``, or ``put(..., index=[...])``),
strings as paragraphs, anything else as ``field: JSON``. ``put(..., index=False)`` writes no
body, so the item is stored and listed but never found by a query.

Namespace labels become folder names (:mod:`openclaw_memory.files.namespaces`); keys become
file names through the same slug-plus-digest rule as the VectorStore's ids.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import Item, get_text_at_path, tokenize_path

from openclaw_memory.errors import ContentError
from openclaw_memory.files.namespaces import ROOT, folder_of, namespace_of
from openclaw_memory.langchain._docfile import check_json, file_name, read_header

__all__ = [
    "ROOT",
    "StoredItem",
    "check_label",
    "decode_item",
    "encode_item",
    "folder_of",
    "index_of",
    "indexed_text",
    "item_path",
    "namespace_of",
]

_OPEN = "---\n"


@dataclass(frozen=True, slots=True)
class StoredItem:
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    #: TTL in minutes (LangGraph's unit) and when the item expires; None: never.
    ttl: float | None = None
    expires_at: datetime | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def as_item(self) -> Item:
        return Item(value=self.value, key=self.key, namespace=self.namespace,
                    created_at=self.created_at, updated_at=self.updated_at)


def check_label(label: object) -> None:
    """A namespace label or key must be text that a file name can carry (no lone
    surrogates): :class:`ContentError` (a ``ValueError``) otherwise."""
    if not isinstance(label, str):
        raise ContentError(f"namespace labels and keys are strings, got {type(label).__name__}")
    try:
        label.encode("utf-8")
    except UnicodeEncodeError:
        raise ContentError(f"{label!r} holds invalid text (lone surrogates)") from None


#: The folder of items in the empty namespace (a LangGraph ``batch()`` accepts it); ``memory/``
#: itself holds daily logs, and a plain label never encodes to a name starting with ``%~``.
ROOT_ITEMS = f"{ROOT}/%~root"


def item_path(namespace: Sequence[str], key: str) -> str:
    folder = folder_of(namespace) if namespace else ROOT_ITEMS
    return f"{folder}/{file_name(key)}"


def indexed_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The searchable text of a value: the given fields (LangGraph's path syntax, ``$`` for
    the whole value)."""
    if fields is None or list(fields) == ["$"]:
        return _render(value)
    parts: list[str] = []
    for path in fields:
        texts = [_render(value)] if path == "$" else get_text_at_path(value, tokenize_path(path))
        parts.extend(text for text in texts if text.strip())
    return "\n\n".join(parts)


def _render(value: Mapping[str, Any]) -> str:
    if len(value) == 1:
        only = next(iter(value.values()))
        if isinstance(only, str):
            return only  # {"content": "..."}: the text alone reads best
    lines = []
    for field, item in value.items():
        if isinstance(item, str):
            lines.append(f"{field}: {item}")
        else:
            lines.append(f"{field}: {json.dumps(item, ensure_ascii=False)}")
    return "\n".join(lines)


def encode_item(item: StoredItem, index: Sequence[str] | bool | None,
                fields: Sequence[str] | None) -> bytes:
    """The file bytes of an item (``index``: the put's own ``index`` argument)."""
    if not isinstance(item.value, dict):
        raise ContentError(f"a store value is a dict, got {type(item.value).__name__}")
    check_json(item.value, "the value")
    meta: dict[str, Any] = {"namespace": list(item.namespace), "key": item.key,
                            "value": item.value, "created_at": item.created_at.isoformat(),
                            "updated_at": item.updated_at.isoformat(),
                            "index": index if index is not None else None}
    if item.expires_at is not None:  # only items with a TTL carry these (files stay as before)
        meta.update(ttl=item.ttl, expires_at=item.expires_at.isoformat())
    header = {"store": meta}
    text = f"{_OPEN}{json.dumps(header, ensure_ascii=False)}\n---\n"
    if index is not False:
        body = indexed_text(item.value, list(index) if isinstance(index, Sequence)
                            and not isinstance(index, str) else fields)
        if body.strip():
            heading = item.key.replace("\n", " ")
            text += f"# {heading}\n\n{body.rstrip()}\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ContentError(f"item {item.key!r} holds invalid text (lone surrogates)") from None


def decode_item(data: bytes) -> StoredItem | None:
    """The item in a file, or None when the file is not a store item (a person's note)."""
    found = read_header(data)
    store = found[0].get("store") if found is not None else None
    if not isinstance(store, dict):
        return None
    try:
        expires = store.get("expires_at")
        ttl = store.get("ttl")
        return StoredItem(tuple(store["namespace"]), str(store["key"]), dict(store["value"]),
                          datetime.fromisoformat(store["created_at"]),
                          datetime.fromisoformat(store["updated_at"]),
                          float(ttl) if ttl is not None else None,
                          datetime.fromisoformat(expires) if expires is not None else None)
    except (KeyError, TypeError, ValueError):
        return None


def index_of(data: bytes) -> list[str] | bool | None:
    """The ``index`` argument an item file was written with (kept when it is rewritten)."""
    found = read_header(data)
    store = found[0].get("store") if found is not None else None
    index = store.get("index") if isinstance(store, dict) else None
    if index is None or isinstance(index, bool):
        return index
    return [str(f) for f in index] if isinstance(index, list) else None
