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

from collections.abc import Sequence
from typing import Any

from openclaw_memory.language.textsearch import fts_body
from openclaw_memory.store.scratch_fts import ScratchTable

__all__ = ["CandidateTerms"]


class CandidateTerms:
    """The scratch table of one connection (callers hold the store's lock)."""

    def __init__(self) -> None:
        self._table = ScratchTable("candidate_terms")

    def lookup(self, conn: Any, texts: dict[int, str],
               terms: Sequence[str]) -> dict[str, set[int]]:
        """For each term, the rowids among ``texts`` (rowid -> chunk text) containing it."""
        if not texts or not terms:
            return {term: set() for term in terms}
        self._table.prepare(conn)
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
        self._table.forget()
