"""One VectorStore document = one Markdown file: exact encoding, file names, safe writes.

A file is ``---\\n<JSON header>\\n---\\n<page_content>``. The header is one line of JSON
(``json.dumps`` escapes every control character, so it can never contain a newline or be
mistaken for the closing ``---``) holding the document id and its metadata; the page content
follows the closing marker byte for byte. The index blanks the front matter before chunking,
so only the page content is searched, and citations keep the file's real line numbers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openclaw_memory.errors import ContentError

_log = logging.getLogger(__name__)

__all__ = ["MAX_DEPTH", "StoredDocument", "check_json", "decode_document", "encode_document", "file_name",
           "read_header"]

# Types that come back from JSON as exactly the same type and value. Subclasses (enums,
# numpy scalars) and tuples would come back as something else, so they are refused instead.
_SCALARS = (str, int, float, bool, type(None))
_SLUG_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
_SLUG_MAX = 48
_DIGEST_HEX = 16
#: Deepest nesting of a stored value or metadata (JSON parsers recurse: a header nested
#: thousands deep made every reader of the folder fail).
MAX_DEPTH = 100
_OPEN = "---\n"
# What we write is "---\n"; CRLF markers are accepted because people edit these files too.
_MARKERS = ("---\n", "---\r\n")


@dataclass(frozen=True, slots=True)
class StoredDocument:
    id: str
    metadata: dict[str, Any]
    page_content: str


def file_name(doc_id: str) -> str:
    """A safe, stable file name for any id: a readable slug plus a digest of the exact id.

    The digest makes names unique (ids differing only in punctuation or case stay apart,
    also on case-insensitive file systems); the slug only helps a person browsing the folder.
    """
    digest = hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_HEX]
    slug = _SLUG_CHARS.sub("-", doc_id).strip("-")[:_SLUG_MAX].rstrip("-")
    return f"{slug}-{digest}.md" if slug else f"{digest}.md"


def encode_document(doc_id: str, metadata: Mapping[str, Any], page_content: str) -> bytes:
    """The file bytes of one document; refuses anything that would not read back identical."""
    if not isinstance(doc_id, str) or not doc_id:
        raise ContentError("document ids must be non-empty strings")
    if not isinstance(page_content, str):
        raise ContentError(f"page_content must be a str, got {type(page_content).__name__}")
    check_json(metadata, "metadata")
    # No sort_keys: insertion order is part of what round-trips, and the same input always
    # produces the same bytes anyway (which keeps re-adding a document a no-op).
    header = json.dumps({"id": doc_id, "metadata": metadata}, ensure_ascii=False)
    try:
        return f"{_OPEN}{header}\n---\n{page_content}".encode()
    except UnicodeEncodeError:
        raise ContentError(
            f"document {doc_id!r} holds invalid text (lone surrogates); it cannot be stored"
        ) from None


def read_header(data: bytes) -> tuple[dict[str, Any], str] | None:
    """(the one-line JSON header, the text after the closing marker) of a file in this format
    (the VectorStore's documents, the LangGraph store's items), or None for any other file."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    opener = next((m for m in _MARKERS if text.startswith(m)), None)
    if opener is None:
        return None
    header_end = text.find("\n", len(opener))
    if header_end < 0:
        return None
    rest = text[header_end + 1:]
    closer = next((m for m in _MARKERS if rest.startswith(m)), None)
    if closer is None:
        return None
    try:
        header = json.loads(text[len(opener):header_end])  # JSON ignores a trailing "\r"
    except ValueError:
        return None
    except RecursionError:  # a header nested thousands deep: not ours, and never fatal
        _log.warning("skipped a file whose header nests too deep to read")
        return None
    return (header, rest[len(closer):]) if isinstance(header, dict) else None


def decode_document(data: bytes) -> StoredDocument | None:
    """The document in ``data``, or ``None`` when the file is not one of ours."""
    found = read_header(data)
    if found is None:
        return None
    header, body = found
    doc_id, metadata = header.get("id"), header.get("metadata")
    if not isinstance(doc_id, str) or not isinstance(metadata, dict):
        return None
    return StoredDocument(doc_id, metadata, body)


def check_json(value: Any, where: str) -> None:
    """Refuse anything that would not read back identical from the JSON header, or that no
    reader could parse back safely: nesting past :data:`MAX_DEPTH`, a value that contains
    itself, text that is not valid Unicode. Iterative: any depth is refused, never a crash."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    open_containers: set[int] = set()  # ids of containers on the current path
    leaving: list[tuple[int, int]] = []  # (stack length when entered, id) to pop from the path
    while stack:
        while leaving and len(stack) < leaving[-1][0]:
            open_containers.discard(leaving.pop()[1])
        item, at, depth = stack.pop()
        _check_scalar_or_container(item, at)
        if type(item) not in (list, dict):
            continue
        if depth >= MAX_DEPTH:
            raise ContentError(f"{where} nests deeper than {MAX_DEPTH} levels")
        if id(item) in open_containers:
            raise ContentError(f"{at} contains itself; JSON cannot hold a circular value")
        open_containers.add(id(item))
        leaving.append((len(stack) + 1, id(item)))
        children = (enumerate(item) if type(item) is list else item.items())
        for key, child in children:
            if type(item) is dict:
                _check_text(key, f"a key of {at}")
            stack.append((child, f"{at}[{key!r}]", depth + 1))


def _check_scalar_or_container(value: Any, where: str) -> None:
    if type(value) is float and not math.isfinite(value):
        raise ContentError(f"{where} is {value!r}; JSON has no NaN or infinity")
    if type(value) is str:
        _check_text(value, where)
        return
    if type(value) in _SCALARS or type(value) in (list, dict):
        return
    raise ContentError(
        f"{where} has type {type(value).__name__}; only str, int, float, bool, None, list and "
        "dict with str keys round-trip exactly through the Markdown file")


def _check_text(text: Any, where: str) -> None:
    if type(text) is not str:
        raise ContentError(f"{where} is {text!r}; JSON keys are strings")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ContentError(f"{where} holds invalid text (lone surrogates)") from None
