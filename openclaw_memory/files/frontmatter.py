"""The metadata a note carries in its front matter, for metadata filters.

Three forms are read (the index never searches front matter; this is only for filtering):

* one JSON object on the first line, as the VectorStore and the LangGraph store write it
  (``{"id": ..., "metadata": {...}}`` gives ``metadata``; ``{"store": {"value": {...}}}`` gives
  the item's value);
* YAML as people write it, the simple part of it: ``key: value`` lines whose values are read
  as JSON when they parse (numbers, ``true``, ``null``, ``"quoted"``, ``[lists]``) and as text
  otherwise, and ``key:`` followed by ``- item`` lines (a list).

Anything else (nested YAML mappings, anchors, multi-line strings) is skipped, not guessed at.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["front_matter"]

_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:\s*(.*)$")
_ITEM = re.compile(r"^\s+-\s+(.*)$|^-\s+(.*)$")
_MAX_LINES = 500


def front_matter(text: str) -> dict[str, Any]:
    """The metadata of a note's leading ``---`` block, or ``{}``."""
    text = text.removeprefix("\ufeff")
    if not text.startswith(("---\n", "---\r\n")):
        return {}
    lines = text.split("\n", _MAX_LINES + 2)[1:_MAX_LINES + 1]
    block: list[str] = []
    for line in lines:
        if line.rstrip("\r") in ("---", "..."):
            return _parse(block)
        block.append(line.rstrip("\r"))
    return {}


def _parse(block: list[str]) -> dict[str, Any]:
    if block and block[0].lstrip().startswith("{"):
        return _json_header("\n".join(block))
    found: dict[str, Any] = {}
    current: str | None = None
    for line in block:
        item = _ITEM.match(line)
        if item and current is not None:
            value = _scalar((item.group(1) or item.group(2) or "").strip())
            found[current] = [*found[current], value] if isinstance(found[current], list) else [value]
            continue
        match = _KEY.match(line)
        if match is None:
            current = None
            continue
        key, raw = match.group(1), match.group(2).strip()
        if raw == "":
            found[key], current = [], key
        else:
            found[key], current = _scalar(raw), None
    return found


def _json_header(text: str) -> dict[str, Any]:
    try:
        header = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(header, dict):
        return {}
    if isinstance(header.get("metadata"), dict):
        return dict(header["metadata"])
    store = header.get("store")
    if isinstance(store, dict) and isinstance(store.get("value"), dict):
        return dict(store["value"])
    return {key: value for key, value in header.items() if key != "id"}


def _scalar(raw: str) -> Any:
    if raw.startswith("#"):
        return ""
    try:
        return json.loads(raw)
    except ValueError:
        pass
    if raw.startswith("[") and raw.endswith("]"):  # [a, b] without quotes
        return [_scalar(part.strip()) for part in raw[1:-1].split(",") if part.strip()]
    if raw[:1] in "'\"" and raw[-1:] == raw[:1]:
        return raw[1:-1]
    return raw.split(" #")[0].strip()
