"""Read FTS5's postings out of an index, for :class:`~openclaw_memory.store.postings.Postings`.

FTS5's ``fts5vocab`` table in its ``instance`` form lists every token occurrence (term,
chunk, offset) in term order: grouped per term and joined into one string per term inside
SQLite, 16.8 million occurrences of 100k chunks come out in about two seconds, where a row
per occurrence took eight. Query terms are tokenised by a scratch FTS5 table of the same
tokenizer and its own ``instance`` table, so a question's words become exactly the tokens
FTS5 would search for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from openclaw_memory.language.textsearch import fts_body
from openclaw_memory.store.fts_table import totals
from openclaw_memory.store.postings import Postings, position_keys
from openclaw_memory.store.scratch_fts import ScratchTable

__all__ = ["TERM_BYTES", "QueryTokens", "TooLarge", "estimated_bytes", "indexed_rowids",
           "read_postings", "read_rows"]

_CJK_CHAR = re.compile(
    "[\u2e80-\u2fff\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4ff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]")


class Stopped(Exception):
    """The reader was asked to stop (the index is being closed)."""


class TooLarge(Exception):
    """The postings being read passed the memory they may take (``store.max_matrix_mb``)."""

    def __init__(self, used: int) -> None:
        super().__init__(used)
        self.used = used


#: What a distinct term costs while the postings are read, beyond its text and occurrences:
#: its arrays, tuple and dict entry, twice over while they are assembled (1 M distinct terms
#: of one occurrence each took 769 MB of RSS, the issue that found the token-only estimate
#: 12 MB). Charged as the read goes, so a vocabulary of identifiers stops the read at the
#: budget instead of passing it.
TERM_BYTES = 770
_OCCURRENCE_BYTES = 24


def estimated_bytes(tokens: int, rows: int) -> int:
    """Memory the postings of an index with these totals take, at most (before reading)."""
    return tokens * 12 + rows * 33


def _numbers(text: str | None, dtype: type[np.generic]) -> npt.NDArray[Any]:
    if not text:
        return np.zeros(0, dtype)
    # fromstring's text mode parses in C (a list of Python strings took three times longer)
    return np.fromstring(text, dtype=dtype, sep=",")


def read_postings(conn: Any, generation: int, stopped: Callable[[], bool],
                  room: int | None = None) -> Postings | None:
    """The postings of the index open on ``conn`` (the caller holds a read transaction, so
    they are those of ``generation``); None when FTS5's totals and its postings disagree
    (drift: FTS5 answers then, as it always has). ``room``: the bytes the read may take;
    past them :class:`TooLarge` is raised."""
    conn.execute("create virtual table if not exists temp.postings_instances "
                 "using fts5vocab(main, chunks_fts, instance)")
    kept = totals(conn)
    rowids = indexed_rowids(conn)
    groups = _groups(conn, "temp.postings_instances", stopped, room)
    if sum(g[1].shape[0] for g in groups) != kept.tokens or rowids.shape[0] != kept.rows:
        return None
    sources = dict(conn.execute("select rowid, source from chunks").fetchall())
    return _assemble(generation, kept.rows, kept.tokens, rowids, groups, sources)


def read_rows(conn: Any, rowids: npt.NDArray[np.int64], stopped: Callable[[], bool]) -> Postings:
    """The postings of the given chunks alone (a few new ones), as FTS5 indexed them:
    their text, made into FTS5 bodies again, tokenised by a scratch table of the index's own
    tokenizer (document indexes follow ``rowids``, which must be ascending)."""
    ScratchTable("postings_new", vocab=True).prepare(conn)  # this connection's own
    wanted = rowids.tolist()
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        texts = conn.execute(f"select rowid, text from chunks where rowid in "
                             f"({','.join('?' * len(part))})", part).fetchall()
        conn.executemany("insert into temp.postings_new(rowid, body) values (?, ?)",
                         [(int(r), fts_body(str(t))) for r, t in texts])
    groups = _groups(conn, "temp.postings_new_instances", stopped)
    sources = dict(conn.execute(f"select rowid, source from chunks where rowid in "
                                f"({','.join('?' * len(wanted))})", wanted).fetchall()
                   ) if wanted else {}
    counted = sum(g[1].shape[0] for g in groups)
    return _assemble(0, len(wanted), counted, rowids, groups, sources)


def indexed_rowids(conn: Any) -> npt.NDArray[np.int64]:
    """Every row of the keyword index, ascending (its document-size table has one each)."""
    return np.asarray([r for (r,) in conn.execute("select id from chunks_fts_docsize order by id")],
                      np.int64)


def _groups(conn: Any, table: str, stopped: Callable[[], bool], room: int | None = None,
            ) -> list[tuple[str, npt.NDArray[np.int64], npt.NDArray[np.int64] | None]]:
    """(term, the chunk of each occurrence, their offsets for a single CJK character) of a
    ``fts5vocab`` instance table; :class:`TooLarge` once they would take more than ``room``
    bytes (:data:`TERM_BYTES` a term, its text twice, each occurrence)."""
    groups: list[tuple[str, npt.NDArray[np.int64], npt.NDArray[np.int64] | None]] = []
    used = 0
    for term, docs in conn.execute(f"select term, group_concat(doc) from {table} group by term"):
        if stopped():
            raise Stopped
        used += TERM_BYTES + 2 * len(term) + _OCCURRENCE_BYTES * (docs.count(",") + 1 if docs else 0)
        if room is not None and used > room:
            raise TooLarge(used)
        at = _numbers(docs, np.int64)
        off = None
        if len(term) == 1 and _CJK_CHAR.match(term):  # positions: CJK pairs are phrases
            at, off = _occurrences(conn, table, str(term))
        elif at.shape[0] > 1 and np.any(np.diff(at) < 0):
            at.sort()  # SQL does not promise the order inside a group
        groups.append((str(term), at, off))
    return groups


def _occurrences(conn: Any, table: str, term: str
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    rows = conn.execute(f"select doc, offset from {table} where term = ? "
                        "order by doc, offset", (term,)).fetchall()
    found = np.asarray(rows, np.int64).reshape(-1, 2)
    return found[:, 0].copy(), found[:, 1].copy()


def _assemble(generation: int, rows: int, tokens: int, rowids: npt.NDArray[np.int64],
              groups: Sequence[tuple[str, npt.NDArray[np.int64], npt.NDArray[np.int64] | None]],
              sources: dict[int, str]) -> Postings:
    terms: dict[str, int] = {}
    starts = [0]
    doc_parts: list[npt.NDArray[np.int32]] = []
    freq_parts: list[npt.NDArray[np.float64]] = []
    positions: dict[int, npt.NDArray[np.int64]] = {}
    for term, at, off in groups:
        docs = np.searchsorted(rowids, at).astype(np.int32)
        uniq, counts = _runs(docs)
        terms[term] = len(terms)
        doc_parts.append(uniq)
        freq_parts.append(counts)
        starts.append(starts[-1] + uniq.shape[0])
        if off is not None:
            positions[terms[term]] = position_keys(docs, off)
    names = tuple(sorted(set(sources.values())))
    code = {name: i for i, name in enumerate(names)}
    source_codes = np.asarray([code.get(sources.get(int(r), ""), -1) for r in rowids], np.int8)
    return Postings(
        generation=generation, rows=rows, tokens=tokens, rowids=rowids,
        sources=source_codes, source_names=names, terms=terms,
        starts=np.asarray(starts, np.int64),
        docs=np.concatenate(doc_parts) if doc_parts else np.zeros(0, np.int32),
        freqs=np.concatenate(freq_parts) if freq_parts else np.zeros(0, np.float64),
        positions=positions)


def _runs(docs: npt.NDArray[np.int32]) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
    """The distinct values of a sorted array and how often each occurs."""
    if not docs.shape[0]:
        return docs, np.zeros(0, np.float64)
    edges = np.flatnonzero(np.diff(docs)) + 1
    firsts = np.concatenate(([0], edges))
    counts = np.diff(np.concatenate((firsts, [docs.shape[0]])))
    return docs[firsts], counts.astype(np.float64)


class QueryTokens:
    """Query terms as FTS5 tokenises them (remembered: questions repeat their words)."""

    def __init__(self) -> None:
        self._table = ScratchTable("query_tokens", vocab=True)
        self._known: dict[str, tuple[str, ...]] = {}

    def tokens(self, conn: Any, terms: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Each term (as written inside a quoted FTS5 phrase) -> its tokens, in order."""
        wanted = list(dict.fromkeys(terms))
        missing = [t for t in wanted if t not in self._known]
        if missing:
            if self._table.prepare(conn):
                self._known.clear()  # another tokenizer: what was remembered is void
            conn.executemany("insert into temp.query_tokens(rowid, body) values (?, ?)",
                             list(enumerate(missing, start=1)))
            found: dict[int, list[tuple[int, str]]] = {}
            for term, doc, offset in conn.execute(
                    "select term, doc, offset from temp.query_tokens_instances"):
                found.setdefault(int(doc), []).append((int(offset), str(term)))
            if len(self._known) > 50_000:
                self._known.clear()
            for i, term in enumerate(missing, start=1):
                self._known[term] = tuple(t for _o, t in sorted(found.get(i, [])))
        return {t: self._known[t] for t in wanted}

    def forget(self) -> None:
        self._table.forget()
