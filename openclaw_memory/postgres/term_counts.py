"""How many chunks of a workspace hold each search term, cheaply enough to ask per question.

The keyword side plans its candidate query from these counts (words found everywhere are
left out of it) and weighs keyword coverage by them (IDF). Counting a common word's chunks
through the GIN index reads every one of them from the table (30k rows: tens of ms), so:

* a term whose every lexeme is among the column's most common elements, as ANALYZE records
  them in ``pg_stats`` (frequencies over a sample, table-wide), is estimated from them: the
  rarest of its lexemes' frequencies times the workspace's chunks (an upper bound for a
  phrase, exact enough for a word);
* any other term is rarer than everything ANALYZE tracks (the column keeps statistics on
  10 000 elements, so that is a small share of the table) and is counted, up to
  :data:`COUNT_CAP` rows, all of a question's terms in one statement;
* counts are remembered for :data:`TTL_S` (they plan and weigh; a few writes' drift does not
  matter), the statistics for :data:`STATS_TTL_S`.

A phrase (a CJK character pair, two words) has two counts: its matches (what IDF weighs) and
its *scattered* count, the chunks holding all of its lexemes anywhere (:meth:`costs`). The
GIN index finds the second set and the server then reads each of its tsvectors to check the
order, so that is what a phrase costs a candidate query: "找 一" matched no chunk of a
million but made the server read 2 092 tsvectors (40 ms). In a workspace of more than
:data:`COUNT_CAP` chunks the scattered count stands for the matches too (see
:meth:`statistics`); smaller ones count phrases exactly, as FTS5 does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from openclaw_memory.postgres.schema import SCHEMA
from openclaw_memory.postgres.tenant import Tenant
from openclaw_memory.postgres.values import pg_body

__all__ = ["COUNT_CAP", "STATS_TTL_S", "TTL_S", "TermCounts"]

TTL_S = 60.0
STATS_TTL_S = 300.0
COUNT_CAP = 4_000  # twice the candidate query's match budget: past it a term is "common"


class TermCounts:
    def __init__(self, tenant: Tenant, config: str,
                 tsquery: Callable[[Sequence[str], dict[str, Any], str], str]) -> None:
        self.tenant = tenant
        self.config = config
        self._tsquery = tsquery
        self._lock = threading.Lock()
        self._counts: dict[tuple[bool, str], tuple[float, int]] = {}
        self._total: tuple[float, int] | None = None
        self._common: tuple[float, dict[str, float]] | None = None

    def forget(self) -> None:
        with self._lock:
            self._counts, self._total, self._common = {}, None, None

    def statistics(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(chunks in the workspace, chunks matching each term). Past :data:`COUNT_CAP`
        chunks a phrase's count is its scattered one, an upper bound the GIN index gives
        alone: counting a long Chinese question's hundred pairs exactly read every chunk
        holding both characters of each (150-250 ms a question at 1M chunks; 20 ms so)."""
        total = self._workspace_total(time.monotonic())
        if total <= COUNT_CAP or not any(" " in _body(t) for t in terms):
            return self._counted(terms, scattered=False)
        return total, self.costs(terms)

    def costs(self, terms: Sequence[str]) -> dict[str, int]:
        """The chunks the GIN index returns for each term: a phrase's scattered count (module
        doc), a word's matches."""
        phrases = [t for t in terms if " " in _body(t)]
        costs = self._counted(phrases, scattered=True)[1] if phrases else {}
        words = [t for t in terms if t not in costs]
        return {**self._counted(words, scattered=False)[1], **costs}

    def _counted(self, terms: Sequence[str], *, scattered: bool) -> tuple[int, dict[str, int]]:
        now = time.monotonic()
        total = self._workspace_total(now)
        with self._lock:
            # Looked up by term: the remembered counts grow with every word ever asked.
            known = {t: entry[1] for t in set(terms) if (entry := self._counts.get(
                (scattered, t))) is not None and now - entry[0] <= TTL_S}
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        if missing:
            # The common-elements estimate (the rarest lexeme's share) bounds both counts.
            estimated = self._estimates(missing, total, now)
            counted = self._count([t for t in missing if t not in estimated], scattered)
            fresh = {**estimated, **counted}
            with self._lock:
                self._counts.update({(scattered, t): (now, c) for t, c in fresh.items()})
            known.update(fresh)
        return total, {t: known[t] for t in terms}

    def _workspace_total(self, now: float) -> int:
        with self._lock:
            cached = self._total
        if cached is None or now - cached[0] > TTL_S:
            rows = self.tenant.rows(f"select count(*) from {SCHEMA}.chunks "
                                    "where workspace = %(ws)s")
            cached = (now, int(rows[0][0]))
            with self._lock:
                self._total = cached
        return cached[1]

    def _common_elements(self, now: float) -> dict[str, float]:
        with self._lock:
            cached = self._common
        if cached is None or now - cached[0] > STATS_TTL_S:
            with self.tenant.db.transaction("cannot read the planner's statistics") as conn:
                rows = conn.execute(  # table-wide statistics: no workspace to scope
                    "select most_common_elems::text::text[], most_common_elem_freqs "
                    "from pg_stats where schemaname = %s and tablename = 'chunks' "
                    "and attname = 'tsv'", (SCHEMA,)).fetchall()
            freqs: dict[str, float] = {}
            if rows and rows[0][0] is not None:
                freqs = dict(zip(rows[0][0], rows[0][1], strict=False))
            cached = (now, freqs)
            with self._lock:
                self._common = cached
        return cached[1]

    def _estimates(self, terms: Sequence[str], total: int, now: float) -> dict[str, int]:
        common = self._common_elements(now)
        if not common:
            return {}
        with self.tenant.db.transaction("cannot read the terms' lexemes") as conn:
            rows = conn.execute(  # no table read: the terms' own lexemes
                "select t, tsvector_to_array(to_tsvector(%s::regconfig, t)) "
                "from unnest(%s::text[]) as t",
                (self.config, [_body(t) for t in terms])).fetchall()
        lexemes = {str(t): list(ls) for t, ls in rows}
        out: dict[str, int] = {}
        for term in terms:
            found = lexemes.get(_body(term)) or []
            if found and all(x in common for x in found):
                estimate = int(min(common[x] for x in found) * total)
                if estimate >= COUNT_CAP:
                    out[term] = estimate
        return out

    def _count(self, terms: Sequence[str], scattered: bool = False) -> dict[str, int]:
        if not terms:
            return {}
        params: dict[str, Any] = {"cap": COUNT_CAP}
        parts = []
        for i, term in enumerate(terms):
            if scattered:  # every lexeme, in any order: the GIN index answers it alone
                params[f"c{i}_"], params["cfg"] = _body(term), self.config
                query = f"plainto_tsquery(%(cfg)s::regconfig, %(c{i}_)s)"
            else:
                query = self._tsquery([term], params, f"c{i}_")
            parts.append(f"select {i} as i, count(*) as n from (select 1 from {SCHEMA}.chunks "
                         f"where workspace = %(ws)s and tsv @@ {query} limit %(cap)s) s{i}")
        rows = self.tenant.rows(" union all ".join(parts), params)
        return {terms[int(i)]: int(n) for i, n in rows}


def _body(term: str) -> str:
    return pg_body(term).strip()
