"""Curating documents on PostgreSQL: the same edit as on files (:mod:`openclaw_memory.files.
curation`), in one transaction.

The document's row is locked, its lines checked against the text the caller expects, the new
body stored and re-indexed, and the replaced text appended to the day's history document
(``memory-history/YYYY-MM-DD.md``), all or nothing. History documents are stored (``get``
and ``export`` read them) but never chunked, so a retired fact is never a hit.
"""

from __future__ import annotations

from datetime import UTC, datetime

from openclaw_memory.config import MemorySettings
from openclaw_memory.files.curation import (
    CurationError,
    EditResult,
    appended_entry,
    applied_result,
    check_edit,
    history_entry,
    history_path,
    new_lines_of,
    replace_lines,
)
from openclaw_memory.files.docpaths import document_path
from openclaw_memory.postgres.connection import Database
from openclaw_memory.postgres.documents import DocumentIndexer

__all__ = ["edit_document"]


def edit_document(db: Database, indexer: DocumentIndexer, settings: MemorySettings, path: str,
                  start_line: int, end_line: int, *, expected: str, replacement: str | None,
                  reason: str | None = None, now: datetime | None = None) -> EditResult:
    rel, kind = document_path(path)
    check_edit(kind, rel, start_line, end_line)
    moment = now or datetime.now(UTC)
    tz = settings.timezone
    new_lines = new_lines_of(replacement, tz, moment)
    history_rel = history_path(tz, moment, rel)
    with db.transaction(f"cannot edit {rel}") as conn:
        body = indexer.body(conn, rel, lock=True)
        if body is None:
            raise CurationError(f"{rel} does not exist: nothing to edit")
        outcome = replace_lines(body, rel, start_line, end_line, expected, new_lines)
        if isinstance(outcome, EditResult):
            return outcome
        payload, old_lines = outcome
        limit = settings.sync.max_file_bytes
        if len(payload) > limit:
            raise CurationError(f"{rel} would be {len(payload):,} bytes, over the {limit:,}-"
                                "byte limit of an indexed file; nothing was written")
        indexer.put(conn, rel, payload)
        entry = history_entry(rel, start_line, end_line, old_lines, new_lines, reason, moment)
        existing = indexer.lock_for_append(conn, history_rel)
        block, first = appended_entry(existing, entry)
        indexer.put(conn, history_rel, existing + block)
    return applied_result(rel, start_line, new_lines,
                          f"{history_rel}#L{first}-L{first + len(entry) - 1}")
