"""The search pipeline's reads on PostgreSQL: tsvector candidates, term statistics, the
terms among candidates, pgvector HNSW neighbours, cosines and chunk rows.

It answers :class:`~openclaw_memory.search.backend.SearchBackend`, so ranking, fusion,
coverage, the relevance gate and citations are the SQLite backend's own code.

* Keywords: the chunk's CJK-spaced text as a ``tsvector`` (English stems with
  ``porter``) under a GIN index. A term becomes ``phraseto_tsquery`` (a CJK pair is a
  two-character phrase, as in FTS5). The candidate query is planned by the same budget as on
  SQLite (:func:`~openclaw_memory.search.keywords.candidate_query`): words found in too many
  chunks are left out of it, so a broad OR of common words never ranks every match (the
  issue measured 300-440 ms at 100k rows for one). The chunks holding the most IDF-weighted
  terms (found through GIN alone) form a pool three times the candidates wanted, which is
  ranked by BM25 from the pool's own tsvectors; the rank is returned negated (lower is
  better, like FTS5's bm25).
* Term counts are counted up to a cap and remembered for :data:`TERM_COUNT_TTL_S`: they
  plan the candidate query and weigh coverage, where a count a few writes old is as good.
* Vectors: ``vector`` values of any width; each width has its own partial HNSW index on
  ``embedding::vector(d)`` (cosine), created with the first vector of that width.
  Filtered searches use pgvector's iterative scan, so a workspace's neighbours are found
  however many other workspaces share the index.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

import numpy as np

from openclaw_memory.language.dates import DateWindow
from openclaw_memory.language.textsearch import parse_match
from openclaw_memory.postgres.alongside import SideConnection
from openclaw_memory.postgres.connection import QueryCanceled
from openclaw_memory.postgres.schema import SCHEMA
from openclaw_memory.postgres.tenant import Tenant
from openclaw_memory.postgres.term_counts import TermCounts
from openclaw_memory.postgres.values import pg_body, vector_literal
from openclaw_memory.search.coverage import idf
from openclaw_memory.store.keyword_side import QueryTimeoutError
from openclaw_memory.store.paths import prefix_range
from openclaw_memory.store.rows import ChunkRow

__all__ = ["HNSW_WITH", "PostgresIndex", "hnsw_build_mb"]

_K1, _B = 1.2, 0.75  # BM25's usual constants, FTS5's too
T = TypeVar("T")

_M, _EF_CONSTRUCTION = 16, 64  # the graph's links per element and build candidate list
HNSW_WITH = f"with (m = {_M}, ef_construction = {_EF_CONSTRUCTION})"


def hnsw_build_mb(count: int, dims: int, cap_mb: int) -> int:
    """maintenance_work_mem (MB) for building the graph of ``count`` vectors: each element
    holds its vector and up to 2m neighbour links at layer 0 (pgvector's layout), plus a
    quarter for upper layers and bookkeeping; never above ``cap_mb``."""
    need = count * (8 + 4 * dims + 2 * _M * 8) * 1.25 / 2**20
    return int(max(64, min(cap_mb, need)))


class PostgresIndex:
    """One workspace's chunks, read for search. Thread-safe (the connection's lock)."""

    vector_path = "pgvector-hnsw"
    # Matches the candidate query may rank, and the newest-chunks window of a question of
    # common words only (search/keywords.py). ts_rank reads each match's tsvector from the
    # table (about 10 us a row here, FTS5 ranks ten times faster from its own index), so
    # the budgets are a tenth of SQLite's.
    keyword_budgets = (2_000, 400)
    vector_reason = "PostgreSQL backend: pgvector HNSW index (cosine)"

    def __init__(self, tenant: Tenant, text_config: str, *, ef_search: int = 100) -> None:
        self.tenant = tenant
        self.config = text_config
        self.ef_search = ef_search  # store.hnsw_ef_search
        self._terms = TermCounts(tenant, text_config,
                                 lambda terms, params, name: self._tsquery(terms, params, name=name))
        self._side = SideConnection(tenant)
        self._side_view: PostgresIndex | None = None
        self._local = threading.local()

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Run the statements of one search in one read-only snapshot (repeatable read).

        Every change of a document replaces some of its chunk rows: without a snapshot, a
        writer committing between the candidate query and the row fetch would make the
        search lose the very chunks it found."""
        with self.tenant.db.transaction("search failed") as conn:
            conn.execute("set transaction isolation level repeatable read, read only")
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    def alongside(self, work: Callable[[PostgresIndex], T]) -> Future[T] | None:
        """``work`` started on a second connection in this search's snapshot while the
        caller goes on (postgres/alongside.py); None outside :meth:`snapshot`, where the
        caller runs it itself. The caller reads the result before the snapshot ends."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            return None

        def on_side(side: Tenant) -> T:
            if self._side_view is None or self._side_view.tenant is not side:
                self._side_view = PostgresIndex(side, self.config, ef_search=self.ef_search)
            return work(self._side_view)
        # This thread holds the connection (the snapshot's transaction): no lock to take.
        return self._side.submit(conn, on_side)

    def close(self) -> None:
        """Close the second connection, if a search opened one."""
        self._side.close()

    # -- keyword side ------------------------------------------------------------------------
    def _tsquery(self, terms: Sequence[str], params: dict[str, Any], *,
                 all_required: bool = False, name: str = "t") -> str:
        """A tsquery of ``terms`` (OR, or AND), their text added to ``params`` as
        ``{name}0``, ``{name}1``...: never spliced into the SQL."""
        parts = []
        for i, term in enumerate(terms):
            params[f"{name}{i}"] = pg_body(term).strip()
            parts.append(f"phraseto_tsquery(%(cfg)s::regconfig, %({name}{i})s)")
        params["cfg"] = self.config
        return "(" + (" && " if all_required else " || ").join(parts) + ")"

    def keyword_search(self, match: str, limit: int, sources: Sequence[str], *,
                       timeout_s: float | None = None, min_rowid: int | None = None,
                       path_prefix: str | None = None) -> list[tuple[int, float]]:
        """(id, -score) best first. An OR first pools the chunks holding the most
        IDF-weighted terms, each term's chunks found through the GIN index alone (``ts_rank``
        over every match would read and unpack each tsvector: 22 ms for 2 000 matches), then
        ranks the pool by BM25 (:meth:`_bm25`); an AND (every term required) is ranked by
        ``ts_rank`` among its few matches. The tsquery is written out where it is used (not
        joined in), so the planner matches it against the GIN index."""
        terms, all_required = parse_match(match)
        if not terms or "memory" not in sources:
            return []
        params: dict[str, Any] = {"limit": limit}
        where = ""
        if min_rowid is not None:  # the window: from that place on (max_rowid)
            where += " and (path, start_line) >= (%(wpath)s, %(wline)s)"
        if path_prefix is not None:
            params["lo"], params["hi"] = prefix_range(path_prefix)
            where += " and path >= %(lo)s and path < %(hi)s"
        if all_required:
            query = self._tsquery(terms, params, all_required=True)
            # Ties by place (the later first), never by row id: the write history must not
            # order results (an edited workspace ranks as a fresh one with the same chunks).
            sql = (f"select id, ts_rank(tsv, {query}) as r from {SCHEMA}.chunks "
                   f"where workspace = %(ws)s and tsv @@ {query}{where} "
                   f"order by r desc, path desc, start_line desc limit %(limit)s")
        else:
            total, containing = self.term_statistics(terms)
            branches = []
            for i, term in enumerate(terms):
                params[f"w{i}"] = idf(total, containing[term])
                query = self._tsquery([term], params, name=f"u{i}_")
                branches.append(f"select id, path, start_line, %(w{i})s::float8 as w from "
                                f"{SCHEMA}.chunks where workspace = %(ws)s and tsv @@ {query}{where}")
            # A pool of the chunks holding the most (IDF-weighted) terms, ranked by BM25 below.
            params["pool"] = max(3 * limit, 60)
            sql = (f"select id, sum(w) as r from ({' union all '.join(branches)}) m "
                   f"group by id, path, start_line order by r desc, path desc, start_line desc "
                   f"limit %(pool)s")
        try:
            with self.tenant.db.transaction("keyword search failed") as conn:
                if min_rowid is not None:
                    start = self._window_start(conn, min_rowid)
                    params["wpath"], params["wline"] = start if start is not None else ("", 0)
                if timeout_s is not None:
                    conn.execute(f"set local statement_timeout = {max(1, int(timeout_s * 1000))}")
                rows = self.tenant.run(conn, sql, params).fetchall()
                if timeout_s is not None:  # the rest of an enclosing snapshot: no bound (on
                    # a timeout the savepoint's rollback undoes the setting by itself)
                    conn.execute("set local statement_timeout to default")
        except QueryCanceled as exc:
            raise QueryTimeoutError(f"stopped after {timeout_s:g} s") from exc
        if all_required:
            return [(int(i), -float(r)) for i, r in rows]
        idfs = [float(params[f"w{i}"]) for i in range(len(terms))]
        return self._bm25([int(i) for i, _ in rows], terms, idfs, params)[:limit]

    def _bm25(self, ids: list[int], terms: Sequence[str], idfs: list[float],
              params: dict[str, Any]) -> list[tuple[int, float]]:
        """(id, -BM25) of the pool, best first: each term's frequency in the chunk (its
        rarest lexeme's positions, where the term itself matches: a phrase must match as
        one) and the chunk's length in distinct lexemes, read from the pool's own tsvectors
        (a few dozen rows, each unpacked once)."""
        if not ids:
            return []
        with self.tenant.db.transaction("cannot read the terms' lexemes") as conn:
            lexemes = [list(ls or []) for (ls,) in conn.execute(  # no table: the terms alone
                "select tsvector_to_array(to_tsvector(%s::regconfig, t)) from "
                "unnest(%s::text[]) with ordinality as u(t, n) order by n",
                (self.config, [params[f"u{i}_0"] for i in range(len(terms))]))]
        wanted = sorted({x for ls in lexemes for x in ls})
        matches = ", ".join(f"tsv @@ phraseto_tsquery(%(cfg)s::regconfig, %(u{i}_0)s)"
                            for i in range(len(terms)))
        rows = self.tenant.rows(
            f"select id, length(tsv), array[{matches}], (select coalesce(jsonb_object_agg("
            "x.lexeme, array_length(x.positions, 1)), '{}'::jsonb) from unnest(tsv) x where "
            f"x.lexeme = any(%(lexemes)s)), path, start_line from {SCHEMA}.chunks "
            "where workspace = %(ws)s and id = any(%(ids)s)",
            {**params, "ids": ids, "lexemes": wanted})
        if not rows:
            return []
        average = sum(int(r[1]) for r in rows) / len(rows) or 1.0
        scored = []
        places: dict[int, tuple[str, int]] = {}
        for key, length, matched, counts, path, start in rows:
            places[int(key)] = (str(path), int(start))
            norm = _K1 * (1 - _B + _B * int(length) / average)
            score = 0.0
            for weight, hit, lex in zip(idfs, matched, lexemes, strict=True):
                tf = min((int(counts.get(x, 0)) for x in lex), default=0) if hit else 0
                if tf:
                    score += weight * tf * (_K1 + 1) / (tf + norm)
            scored.append((int(key), -score))
        # Best first, ties by place (the later first), as the pool was cut: never by row id.
        scored.sort(key=lambda h: places[h[0]], reverse=True)
        scored.sort(key=lambda h: h[1])
        return scored

    def keyword_scores(self, match: str, rowids: Sequence[int]) -> dict[int, float]:
        terms, all_required = parse_match(match)
        if not terms or not rowids:
            return {}
        params: dict[str, Any] = {"ids": list(rowids)}
        query = self._tsquery(terms, params, all_required=all_required)
        rows = self.tenant.rows(
            f"select id, ts_rank(tsv, {query}) from {SCHEMA}.chunks "
            f"where workspace = %(ws)s and id = any(%(ids)s) and tsv @@ {query}", params)
        return {int(i): -float(r) for i, r in rows}

    def max_rowid(self) -> int:
        """The workspace's chunk count: "rowids" here are places in the chunks' own order
        (path, then line), not row ids, so that the newest-chunks window of a common-word
        question (search/keywords.py) is the last chunks of the latest daily files whatever
        the order they were written in (by row id, an edited workspace ranked such questions
        otherwise than a fresh one with the same chunks: 0 of 20 in the same order)."""
        rows = self.tenant.rows(f"select count(*) from {SCHEMA}.chunks where workspace = %(ws)s")
        return int(rows[0][0])

    def _window_start(self, conn: Any, skipped: int) -> tuple[str, int] | None:
        """The place (path, start line) of the chunk ``skipped`` chunks into the workspace in
        place order: the window is it and every chunk after it; None: the whole workspace."""
        if skipped <= 0:
            return None
        row = self.tenant.run(conn, f"select path, start_line from {SCHEMA}.chunks "
                                    "where workspace = %(ws)s order by path, start_line "
                                    "offset %(skip)s limit 1", {"skip": skipped}).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def forget_counts(self) -> None:
        """Drop remembered term counts (this process just changed many chunks)."""
        self._terms.forget()

    def term_statistics(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(chunks in the workspace, chunks holding each term): postgres/term_counts.py."""
        return self._terms.statistics(terms)

    def term_costs(self, terms: Sequence[str]) -> dict[str, int]:
        """Rows a candidate query reads for each term (a phrase: every chunk holding all of
        its lexemes, each checked for their order): what its match budget counts."""
        return self._terms.costs(terms)

    def terms_in(self, terms: Sequence[str], rowids: Sequence[int]) -> dict[str, set[int]]:
        found: dict[str, set[int]] = {t: set() for t in terms}
        if not terms or not rowids:
            return found
        params: dict[str, Any] = {"ids": sorted(set(rowids))}
        tests = [self._tsquery([term], params, name=f"u{i}_") for i, term in enumerate(terms)]
        sql = (f"select id, array[{', '.join(f'tsv @@ {q}' for q in tests)}] "
               f"from {SCHEMA}.chunks where workspace = %(ws)s and id = any(%(ids)s)")
        for key, flags in self.tenant.rows(sql, params):
            for term, present in zip(terms, flags, strict=True):
                if present:
                    found[term].add(int(key))
        return found

    # -- vector side -------------------------------------------------------------------------
    def vector_search(self, query: np.ndarray[Any, Any], k: int, sources: Sequence[str], *,
                      path_prefix: str | None = None) -> list[tuple[int, float]]:
        if "memory" not in sources:
            return []
        dims = int(query.shape[0])
        params: dict[str, Any] = {"q": vector_literal(query), "k": k}
        where = ""
        if path_prefix is not None:
            params["lo"], params["hi"] = prefix_range(path_prefix)
            where = " and path >= %(lo)s and path < %(hi)s"
        distance = f"embedding::vector({dims}) <=> %(q)s::vector({dims})"
        sql = (f"select id, 1 - ({distance}) from {SCHEMA}.chunks "
               f"where workspace = %(ws)s and dims = {dims}{where} "
               f"order by {distance} limit %(k)s")
        with self.tenant.db.transaction("vector search failed") as conn:
            conn.execute(f"set local hnsw.ef_search = {max(self.ef_search, 2 * k)}")
            conn.execute("set local hnsw.iterative_scan = relaxed_order")
            # The planner prices a full scan and sort of a small workspace below the HNSW
            # walk (it does not count reading every vector): 19 ms against 0.4 at 5k
            # chunks. A path prefix may still be answered exactly from its btree.
            conn.execute("set local enable_seqscan = off")
            conn.execute("set local enable_bitmapscan = off")
            rows = self.tenant.run(conn, sql, params).fetchall()
            conn.execute("set local enable_seqscan to default")
            conn.execute("set local enable_bitmapscan to default")
        hits = [(int(i), float(s)) for i, s in rows]
        hits.sort(key=lambda h: -h[1])  # relaxed order: nearly sorted, made exact here
        return hits

    def cosines(self, query: np.ndarray[Any, Any], rowids: Sequence[int]) -> dict[int, float]:
        return {key: row[0] for key, row in self.cosines_many(query[None, :], rowids).items()}

    def cosines_many(self, queries: np.ndarray[Any, Any],
                     rowids: Sequence[int]) -> dict[int, list[float]]:
        """One statement for every query vector: a question of 16 lines was 17 round trips."""
        if not rowids or not len(queries):
            return {}
        dims = int(queries.shape[1])
        params: dict[str, Any] = {"ids": list(rowids)}
        columns = []
        for i, query in enumerate(queries):
            params[f"q{i}"] = vector_literal(query)
            columns.append(f"1 - (embedding::vector({dims}) <=> %(q{i})s::vector({dims}))")
        rows = self.tenant.rows(
            f"select id, array[{', '.join(columns)}] from {SCHEMA}.chunks "
            f"where workspace = %(ws)s and id = any(%(ids)s) and dims = {dims}", params)
        return {int(i): [float(x) for x in s] for i, s in rows}

    def daily_paths(self, windows: Sequence[DateWindow],
                    path_prefix: str | None = None) -> list[str]:
        """Found through ``documents_day`` (the workspace's dated names, migration 2): a
        million-chunk workspace holds half a million dated files, too many to read out."""
        params: dict[str, Any] = {}
        tests = []
        for i, window in enumerate(windows):
            bounds = window.name_range()
            if bounds is None:  # a month of any year: the workspace's dated names, filtered
                params[f"m{i}"] = f"-{window.month:02d}-"
                tests.append(f"substr(right(path, 13), 5, 4) = %(m{i})s")
            else:
                params[f"lo{i}"], params[f"hi{i}"] = bounds
                tests.append(f"right(path, 13) collate \"C\" between %(lo{i})s and %(hi{i})s")
        if not tests:
            return []
        where = ""
        if path_prefix is not None:
            params["lo"], params["hi"] = prefix_range(path_prefix)
            where = " and path >= %(lo)s and path < %(hi)s"
        rows = self.tenant.rows(
            f"select path from {SCHEMA}.documents where workspace = %(ws)s "
            f"and path like '%%-__-__.md' and ({' or '.join(tests)}){where}", params)
        return [str(r[0]) for r in rows]

    def chunk_keys(self, paths: Sequence[str], limit: int | None = None) -> list[int]:
        if not paths:
            return []
        rows = self.tenant.rows(f"select id from {SCHEMA}.chunks where workspace = %(ws)s "
                                f"and path = any(%(paths)s) limit %(limit)s",
                                {"paths": list(paths), "limit": limit})
        return [int(r[0]) for r in rows]

    def chunks(self, rowids: Sequence[int]) -> dict[int, ChunkRow]:
        if not rowids:
            return {}
        rows = self.tenant.rows(
            f"select id, cid, path, 'memory', start_line, end_line, text from {SCHEMA}.chunks "
            "where workspace = %(ws)s and id = any(%(ids)s)", {"ids": list(rowids)})
        return {int(r[0]): ChunkRow(int(r[0]), *r[1:]) for r in rows}
