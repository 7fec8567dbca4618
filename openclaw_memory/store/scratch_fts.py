"""Scratch FTS5 tables of a connection, tokenising as the index's own keyword table does.

Three things need FTS5's tokens of a few texts outside the index: which candidates hold which
question terms (term_lookup.py), a question's terms as FTS5 searches them, and the postings of
chunks added since the postings in memory were read (postings_read.py). Each fills a table of
the connection's ``temp`` schema made with the index table's tokenizer. The tables are
contentless (nothing reads a body back) and emptied with ``'delete-all'``: a delete from a
table with content tokenises every old row again to find its postings.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ScratchTable"]

_TOKENIZE = re.compile(r"tokenize\s*=\s*'([^']*)'")


class ScratchTable:
    """One scratch table ``temp.<name>`` (and, with ``vocab``, its ``fts5vocab`` instance
    table ``temp.<name>_instances``); callers hold the connection's lock."""

    def __init__(self, name: str, *, vocab: bool = False) -> None:
        self.name = name
        self.vocab = vocab
        self._ddl: str | None = None

    def prepare(self, conn: Any) -> bool:
        """An empty table with the index's current tokenizer; True when it was (re)made (the
        index's tokenizer changed, or first use on this connection)."""
        row = conn.execute("select sql from sqlite_master where name = 'chunks_fts'").fetchone()
        ddl = str(row[0]) if row else ""
        if ddl == self._ddl:
            conn.execute(f"insert into temp.{self.name}({self.name}) values('delete-all')")
            return False
        found = _TOKENIZE.search(ddl)
        tokenize = found.group(1) if found else "unicode61"
        conn.execute(f"drop table if exists temp.{self.name}_instances")
        conn.execute(f"drop table if exists temp.{self.name}")
        conn.execute(f"create virtual table temp.{self.name} using fts5(body, "
                     f"tokenize='{tokenize}', content='')")
        if self.vocab:
            conn.execute(f"create virtual table temp.{self.name}_instances "
                         f"using fts5vocab(temp, {self.name}, instance)")
        self._ddl = ddl
        return True

    def forget(self) -> None:
        """The index was replaced: check its tokenizer again next time."""
        self._ddl = None
