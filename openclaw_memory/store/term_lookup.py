"""Which of a few candidate chunks contain which query terms, without walking the index.

Keyword coverage (search/coverage.py) needs, for each term of a question and each of its
30-odd candidates, whether the chunk contains the term as FTS5 tokenises it (stems, CJK
pairs, phrases). Asking the index's FTS5 table once per term walked the term's whole doclist
(a name on every line: every chunk), 20 ms of a 30 ms search at 30k chunks. Here the
candidates' bodies go into a scratch FTS5 table of the connection's ``temp`` schema, built
with the index table's own tokenizer, and the terms are matched there: the same answers
(tested), at the cost of tokenising a few dozen chunks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from openclaw_memory.search.textsearch import fts_body

__all__ = ["CandidateTerms"]

_TOKENIZE = re.compile(r"tokenize\s*=\s*'([^']*)'")


class CandidateTerms:
    """The scratch table of one connection (callers hold the store's lock)."""

    def __init__(self) -> None:
        self._ddl: str | None = None

    def _prepare(self, conn: Any) -> None:
        row = conn.execute("select sql from sqlite_master where name = 'chunks_fts'").fetchone()
        ddl = str(row[0]) if row else ""
        if ddl == self._ddl:
            conn.execute("insert into temp.candidate_terms(candidate_terms) values('delete-all')")
            return
        found = _TOKENIZE.search(ddl)
        tokenize = found.group(1) if found else "unicode61"
        conn.execute("drop table if exists temp.candidate_terms")
        # Contentless, emptied by 'delete-all': a delete from a table with content
        # tokenises every old row again to find its postings.
        conn.execute(f"create virtual table temp.candidate_terms using fts5(body, "
                     f"tokenize='{tokenize}', content='')")
        self._ddl = ddl

    def lookup(self, conn: Any, texts: dict[int, str],
               terms: Sequence[str]) -> dict[str, set[int]]:
        """For each term, the rowids among ``texts`` (rowid -> chunk text) containing it."""
        if not texts or not terms:
            return {term: set() for term in terms}
        self._prepare(conn)
        conn.executemany("insert into temp.candidate_terms(rowid, body) values (?, ?)",
                         [(rowid, fts_body(text)) for rowid, text in texts.items()])
        out: dict[str, set[int]] = {}
        for term in terms:
            quoted = '"' + term.replace('"', "") + '"'
            out[term] = {int(r[0]) for r in conn.execute(
                "select rowid from temp.candidate_terms where candidate_terms match ?",
                (quoted,))}
        return out

    def forget(self) -> None:
        """The index was replaced: check its tokenizer again next time."""
        self._ddl = None
