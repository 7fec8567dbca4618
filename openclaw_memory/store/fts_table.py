"""The keyword index's FTS5 table: its form, how rows leave it, and its statistics.

The table is contentless (``content=''``): nothing reads the indexed body back (snippets come
from ``chunks.text``), and FTS5's own copy of every chunk's text was 1 KB of the 1.7 KB the
keyword index cost per chunk.

Rows leave it through FTS5's ``'delete'`` command, given the body that was indexed (rebuilt
from ``chunks.text`` with :func:`fts_body`, a pure function of the text). That is what keeps
BM25 exact as the index ages: FTS5 subtracts the row from the totals its ranking reads (the
number of rows and the tokens per column). The ``contentless_delete=1`` form this project
used before deletes by rowid alone and can never subtract anything: after three rounds of
editing a third of 1 500 files its totals counted 8 283 rows for 4 279 chunks, and most
questions ranked differently from a fresh index of the same files. An index in that form is
converted when opened (:func:`ensure_current`), and :func:`rebuild` repairs any drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openclaw_memory.language.textsearch import fts_body

__all__ = ["KeywordTotals", "ddl", "delete_rows", "ensure_current", "is_current", "rebuild",
           "totals"]

#: Rows re-indexed per statement batch while rebuilding.
_REBUILD_BATCH = 2_000


def ddl(tokenizer: str) -> str:
    """The table's ``create`` statement for the configured tokenizer."""
    tok = "porter unicode61 remove_diacritics 2" if tokenizer == "porter" else (
        "unicode61 remove_diacritics 2")
    # rowid = chunks.rowid; the body is the CJK-spaced text (fts_body), not the raw text.
    return (f"create virtual table if not exists chunks_fts using fts5(body, tokenize='{tok}'"
            ", content='')")


def _current_sql(conn: Any) -> str | None:
    row = conn.execute("select sql from sqlite_master where name = 'chunks_fts'").fetchone()
    return None if row is None else str(row[0])


def is_current(conn: Any) -> bool:
    """Whether the table exists in the form :func:`ddl` creates (deletable with totals)."""
    sql = _current_sql(conn)
    return sql is not None and "contentless_delete" not in sql and "content=''" in sql


def delete_rows(conn: Any, rows: Sequence[tuple[int, str]]) -> None:
    """Remove ``(rowid, chunk text)`` rows, subtracting them from FTS5's totals.

    The body given must be exactly the one indexed, or FTS5 would remove postings the row
    never had: it is rebuilt from the chunk's stored text by the same pure function.
    """
    if not rows:
        return
    if is_current(conn):
        conn.executemany("insert into chunks_fts(chunks_fts, rowid, body) values('delete', ?, ?)",
                         [(rowid, fts_body(text)) for rowid, text in rows])
    else:  # an old form that could not be converted (read-only when opened): by rowid
        conn.executemany("delete from chunks_fts where rowid = ?", [(r,) for r, _t in rows])


@dataclass(frozen=True, slots=True)
class KeywordTotals:
    """What BM25 reads besides the postings: rows counted and their tokens, against the
    chunks that really exist. ``drift`` is true when the two disagree (IDF and length
    normalisation are then off, and :func:`rebuild` repairs it)."""

    rows: int
    tokens: int
    chunks: int

    @property
    def drift(self) -> bool:
        return self.rows != self.chunks

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "tokens": self.tokens, "chunks": self.chunks,
                "drift": self.drift}


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (FTS5's averages record is a row count, then tokens per column)."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:  # the ninth byte carries all 8 bits
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def totals(conn: Any) -> KeywordTotals:
    """FTS5's own totals (its averages record) beside the number of chunks."""
    chunks = int(conn.execute("select count(*) from chunks").fetchone()[0])
    row = conn.execute("select block from chunks_fts_data where id = 1").fetchone()
    values = _varints(bytes(row[0])) if row is not None and row[0] is not None else []
    rows = values[0] if values else 0
    tokens = values[1] if len(values) > 1 else 0
    return KeywordTotals(rows=rows, tokens=tokens, chunks=chunks)


def rebuild(conn: Any, tokenizer: str) -> int:
    """Drop the table and index every chunk again from its stored text, inside the caller's
    transaction; returns the rows indexed. No file is read and nothing is embedded."""
    conn.execute("drop table if exists chunks_fts")
    conn.execute(ddl(tokenizer))
    last, indexed = 0, 0
    while True:
        batch = conn.execute("select rowid, text from chunks where rowid > ? order by rowid "
                             "limit ?", (last, _REBUILD_BATCH)).fetchall()
        if not batch:
            return indexed
        conn.executemany("insert into chunks_fts(rowid, body) values (?, ?)",
                         [(int(r), fts_body(str(t))) for r, t in batch])
        last, indexed = int(batch[-1][0]), indexed + len(batch)


def ensure_current(conn: Any, tokenizer: str) -> bool:
    """Convert a table of an older form (whose totals drift) in one write transaction;
    True when converted. Left as it is when the index cannot be written now."""
    if is_current(conn) or _current_sql(conn) is None:
        return False
    conn.execute("begin immediate")
    try:
        if is_current(conn):  # another process converted it meanwhile
            conn.execute("rollback")
            return False
        rebuild(conn, tokenizer)
        conn.execute("commit")
    except BaseException:
        conn.execute("rollback")
        raise
    return True
