"""The keyword side of the index: FTS5 candidates, BM25 lookups, term statistics and the
terms among candidates. A mixin of :class:`~openclaw_memory.store.db.Store`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.language.textsearch import parse_match, quote_term
from openclaw_memory.store.connection import is_corruption
from openclaw_memory.store.fts_table import KeywordTotals
from openclaw_memory.store.fts_table import rebuild as rebuild_fts
from openclaw_memory.store.fts_table import totals as fts_totals
from openclaw_memory.store.parts import StorePart
from openclaw_memory.store.paths import prefix_range
from openclaw_memory.store.postings import PhraseHits, Postings
from openclaw_memory.store.postings_keeper import PostingsKeeper
from openclaw_memory.store.postings_read import QueryTokens
from openclaw_memory.store.term_lookup import CandidateTerms
from openclaw_memory.store.vectors import placeholders

__all__ = ["FTS_CHECK_MAX_CHUNKS", "KeywordQueries", "QueryTimeoutError"]

FTS_CHECK_MAX_CHUNKS = 20_000
"""Up to this size a sync verifies the keyword index (a few ms per thousand chunks)."""


class QueryTimeoutError(StoreError):
    """A query ran past its time bound and was interrupted."""


class KeywordQueries(StorePart):
    """FTS5 queries of :class:`Store` (its connection and lock)."""

    _terms: CandidateTerms
    _postings: PostingsKeeper
    _query_tokens: QueryTokens
    _term_cache: dict[str, int]
    _term_cache_generation: int | None = None
    _term_cache_total: int | None = None
    _sources_cache: tuple[int, set[str]] | None = None
    _keyword_index_checked: bool = False
    fts_tokenizer: str
    max_matrix_bytes: int

    if TYPE_CHECKING:
        def vector_memory_bytes(self) -> int: ...

    def keyword_totals(self) -> KeywordTotals:
        """FTS5's row and token totals beside the chunks (``drift`` when they disagree)."""
        with self._lock:
            try:
                self._conn.execute("begin")  # one snapshot for both counts
                try:
                    return fts_totals(self._conn)
                finally:
                    self._conn.execute("rollback")
            except self.driver.errors as exc:
                if is_corruption(exc):
                    raise IndexCorruptError(f"the keyword index is damaged: {exc}") from exc
                raise StoreError(f"cannot read the keyword index's totals: {exc}") from exc

    def rebuild_keyword_index(self) -> int:
        """Index every chunk's text again into a new FTS5 table (in one transaction; no file
        is read, nothing embedded): repairs drifted totals or damaged keyword pages."""
        with self.write() as conn:
            rows = rebuild_fts(conn, self.fts_tokenizer)
        self._keyword_index_checked = False
        return rows

    def keyword_search(self, match: str, limit: int, sources: Sequence[str], *,
                       timeout_s: float | None = None, min_rowid: int | None = None,
                       path_prefix: str | None = None) -> list[tuple[int, float]]:
        """(rowid, bm25 rank) best first; bm25 is negative and lower is better.

        ``min_rowid``: score only chunks from this rowid on (the newest ones; FTS5 skips the
        rest of each doclist instead of scoring it). ``path_prefix``: only chunks of files
        under it (one user's folder), applied before the LIMIT so that other folders' matches
        never crowd it out.

        ``timeout_s`` bounds the query: past it SQLite is interrupted and
        :class:`QueryTimeoutError` raised (a broad OR of common words on a huge index).
        """
        if path_prefix is None:
            found = self._memory_search(match, limit, sources, min_rowid)
            if found is not None:
                return found
        window = "" if min_rowid is None else " and f.rowid >= ?"
        window_params: tuple[object, ...] = () if min_rowid is None else (min_rowid,)
        params: tuple[object, ...]
        if path_prefix is not None:
            low, high = prefix_range(path_prefix)
            sql = (f"select f.rowid, bm25(chunks_fts) as r from chunks_fts f "
                   f"join chunks c on c.rowid = f.rowid where chunks_fts match ?{window} "
                   f"and c.path >= ? and c.path < ? "
                   f"and c.source in ({placeholders(len(sources))}) order by r limit ?")
            params = (match, *window_params, low, high, *sources, limit)
        elif self.sources_present() <= set(sources):
            # Every chunk qualifies: no join, which read a chunks row per match before the LIMIT.
            sql = (f"select f.rowid, bm25(chunks_fts) as r from chunks_fts f "
                   f"where chunks_fts match ?{window} order by r limit ?")
            params = (match, *window_params, limit)
        else:
            sql = (f"select f.rowid, bm25(chunks_fts) as r from chunks_fts f "
                   f"join chunks c on c.rowid = f.rowid where chunks_fts match ?{window} "
                   f"and c.source in ({placeholders(len(sources))}) order by r limit ?")
            params = (match, *window_params, *sources, limit)
        with self._deadline(timeout_s):
            rows = self.query(sql, params)
        return [(int(a), float(b)) for a, b in rows]

    def max_rowid(self) -> int:
        """The newest chunk's rowid (0 when empty)."""
        return int(self.query("select coalesce(max(rowid), 0) from chunks")[0][0])

    def sources_present(self) -> set[str]:
        """The sources of the indexed files (remembered per index generation)."""
        generation = self.generation()
        cached = self._sources_cache
        if cached is None or cached[0] != generation:
            found = {str(row[0]) for row in self.query("select distinct source from files")}
            self._sources_cache = cached = (generation, found)
        return set(cached[1])

    @contextlib.contextmanager
    def _deadline(self, seconds: float | None) -> Iterator[None]:
        if seconds is None:
            yield
            return
        end = time.monotonic() + seconds
        expired = False

        def check() -> int:
            nonlocal expired
            expired = time.monotonic() > end
            return 1 if expired else 0

        with self._lock:
            self._conn.set_progress_handler(check, 20_000)
            try:
                yield
            except StoreError as exc:
                if expired:
                    raise QueryTimeoutError(f"stopped after {seconds:g} s") from exc
                raise
            finally:
                self._conn.set_progress_handler(None, 0)

    def keyword_scores(self, match: str, rowids: Sequence[int]) -> dict[int, float]:
        """bm25 of the given chunks for ``match`` (absent when they do not match)."""
        if not rowids:
            return {}
        memory = self._memory_phrases(match)
        if memory is not None:
            postings, phrases, every = memory
            docs, scores = postings.scores(phrases, every)
            found = dict(zip(postings.rowids[docs].tolist(), scores.tolist(), strict=True))
            return {r: found[r] for r in set(rowids) if r in found}
        # FTS5 pushes a rowid range down into its doclist scan but not an IN list, which it
        # tests row by row after scoring: the range and a set filter here cost about half.
        wanted = set(rowids)
        sql = ("select rowid, bm25(chunks_fts) from chunks_fts where chunks_fts match ? "
               "and rowid between ? and ?")
        rows = self.query(sql, (match, min(wanted), max(wanted)))
        return {int(a): float(b) for a, b in rows if a in wanted}

    def check_keyword_index(self, max_chunks: int = FTS_CHECK_MAX_CHUNKS) -> bool:
        """Run FTS5's own integrity check when the index is small enough for it to be cheap.

        Damage in FTS5's pages only shows when a query reads them: a sync that finds every
        file unchanged would otherwise report success over an index no search can use.
        Raises :class:`IndexCorruptError` on damage; False when skipped (too large: damage
        is then found, and repaired, on the first search that reads it). Once per opened
        index: the check reads every FTS5 page (about 25 ms per 2 000 chunks), and damage that
        appears while this process has the index open shows on the search that reads it.
        """
        if self._keyword_index_checked:
            return True
        if self.chunk_count() > max_chunks:
            return False
        with self._lock:
            try:
                self._conn.execute("insert into chunks_fts(chunks_fts) values('integrity-check')")
            except self.driver.errors as exc:
                if is_corruption(exc):
                    raise IndexCorruptError(f"the keyword index is damaged: {exc}") from exc
                return False  # locked by another writer, read-only...: not checked this time
        self._keyword_index_checked = True
        return True

    def term_statistics(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(chunks in the index, chunks containing each term), counted by FTS5.

        Remembered per index generation: the counts only change when the index does, and a
        common term's doclist is long to walk at 100k chunks. Safe across threads: the cache
        is replaced whole when the generation moves, never reset under a reader.
        """
        generation = self.generation()
        with self._lock:
            if self._term_cache_generation != generation or self._term_cache_total is None:
                total = self.chunk_count()
                self._term_cache, self._term_cache_total = {}, total
                self._term_cache_generation = generation
            cache, total = self._term_cache, self._term_cache_total
            counted = self._memory_counts([t for t in terms if t not in cache])
            cache.update(counted)
            for term in terms:
                if term not in cache:
                    quoted = '"' + term.replace('"', "") + '"'
                    cache[term] = int(self.query(
                        "select count(*) from chunks_fts where chunks_fts match ?", (quoted,))[0][0])
            return total, {t: cache[t] for t in terms}

    def terms_in(self, terms: Sequence[str], rowids: Sequence[int]) -> dict[str, set[int]]:
        """For each term, which of ``rowids`` contain it (as FTS5 tokenises it: stems, CJK
        pairs, phrases), matched among those chunks alone (store/term_lookup.py)."""
        wanted = sorted(set(rowids))
        if not wanted or not terms:
            return {term: set() for term in terms}
        held = self._memory_holding(terms, wanted)
        if held is not None:
            return held
        with self._lock:
            try:
                texts = {int(r): str(t) for r, t in self._conn.execute(
                    f"select rowid, text from chunks where rowid in "
                    f"({placeholders(len(wanted))})", wanted)}
                return self._terms.lookup(self._conn, texts, terms)
            except self.driver.errors as exc:
                if is_corruption(exc):
                    raise IndexCorruptError(f"the index file is damaged: {exc}") from exc
                raise StoreError(f"index query failed: {exc}") from exc

    # -- the postings in memory (store/postings.py): same answers as FTS5, in numpy ---------
    def keyword_path(self) -> str:
        """What answers keyword queries now: FTS5, or the postings in memory (and why)."""
        return self._postings.state

    def wait_for_keyword_postings(self, timeout: float | None = None) -> bool:
        """Read the postings of the current generation now if they are due, and wait for
        them (benchmarks and long-lived services warming up); True when they answer."""
        self._ready_postings()
        self._postings.wait(timeout)
        return self._ready_postings() is not None

    def _ready_postings(self) -> Postings | None:
        generation = self.generation()
        postings = self._postings.get(generation)
        if postings is None:
            with self._lock:
                self._postings.request(generation, self._postings_room, self.chunk_count)
        return postings

    def chunk_count(self) -> int:
        """Chunks in the index."""
        return int(self.query("select count(*) from chunks")[0][0])

    def _postings_room(self) -> int:
        return self.max_matrix_bytes - self.vector_memory_bytes()

    def _memory_hits(self, postings: Postings, terms: Sequence[str]) -> list[PhraseHits] | None:
        with self._lock:
            try:
                tokens = self._query_tokens.tokens(self._conn, terms)
            except self.driver.errors:
                return None
        found = [postings.hits(tokens[t]) for t in terms]
        return None if any(h is None for h in found) else [h for h in found if h is not None]

    def _memory_phrases(self, match: str) -> tuple[Postings, list[PhraseHits], bool] | None:
        postings = self._ready_postings()
        if postings is None:
            return None
        terms, every = parse_match(match)
        joiner = " AND " if every else " OR "
        if not terms or joiner.join(quote_term(t) for t in terms) != match:
            return None  # an expression not built by textsearch: FTS5 reads it
        hits = self._memory_hits(postings, terms)
        return None if hits is None else (postings, hits, every)

    def _memory_search(self, match: str, limit: int, sources: Sequence[str],
                       min_rowid: int | None) -> list[tuple[int, float]] | None:
        memory = self._memory_phrases(match)
        if memory is None:
            return None
        postings, phrases, every = memory
        docs, scores = postings.scores(phrases, every)
        keep = None
        if min_rowid is not None:
            keep = postings.rowids[docs] >= min_rowid
        if not self.sources_present() <= set(sources):
            allowed = postings.source_mask(sources)[docs]
            keep = allowed if keep is None else keep & allowed
        if keep is not None:
            docs, scores = docs[keep], scores[keep]
        return postings.best(docs, scores, limit)

    def _memory_counts(self, terms: Sequence[str]) -> dict[str, int]:
        postings = self._ready_postings() if terms else None
        if postings is None:
            return {}
        hits = self._memory_hits(postings, terms)
        return {} if hits is None else {t: h.count for t, h in zip(terms, hits, strict=True)}

    def _memory_holding(self, terms: Sequence[str], rowids: Sequence[int]) -> dict[str, set[int]] | None:
        postings = self._ready_postings()
        if postings is None:
            return None
        hits = self._memory_hits(postings, terms)
        if hits is None:
            return None
        present, docs = postings.documents(rowids)
        return {t: set(present[np.isin(docs, h.docs, assume_unique=True)].tolist())
                for t, h in zip(terms, hits, strict=True)}
