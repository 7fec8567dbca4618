"""The keyword side's candidate pool, bounded so that common words do not scan the index.

FTS5 answers an OR query by scoring every chunk that matches any term, before the LIMIT: a
question with a word found in a third of 100 000 chunks scores 30 000 chunks (about 100 ms),
while that word's BM25 weight is small next to the question's rarer words. So the query is
planned from the terms' chunk counts (:meth:`Store.term_statistics`, kept per index
generation), to score at most about :data:`MATCH_BUDGET` chunks:

* the rarest terms are OR-ed, as many as fit in the budget together; the rest (words found
  everywhere) are left out of the candidate query but still count in keyword coverage;
* when even the rarest term is found in more chunks than the budget (a question of common
  words only), the OR of all terms is scored among the newest chunks, as many as are
  expected to hold about :data:`WINDOW_BUDGET` matches: older notes stay reachable through
  the vector side and through any rarer word;
* within the budget (any index of at most that many chunks) the query is the full OR, as before;
* a translated question's renderings get what its own words leave of the budget;
* the join on ``chunks`` that filters by source is skipped when every chunk in the index is of
  a requested source (reading a row per match before the LIMIT was half the cost).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.language.textsearch import keyword_terms, quote_term
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.store.keyword_side import QueryTimeoutError

__all__ = ["MATCH_BUDGET", "WINDOW_BUDGET", "CandidateQuery", "candidate_query",
           "keyword_candidates"]

# Chunks the candidate query may score (FTS5 scores about 10 000 matches per millisecond
# here when it needs no join). At 100k chunks this keeps the pool of a question's own chunk
# as it was (benchmarks/keyword_cost.py) while a word found everywhere is left out.
MATCH_BUDGET = 20_000
# A question of common words only is scored among the newest chunks expected to hold this
# many matches: BM25 has little to rank by there, and the vector side sees every chunk.
WINDOW_BUDGET = 4_000


@dataclass(frozen=True)
class CandidateQuery:
    """The MATCH expression of the candidate query and the oldest rowid it may score."""

    expression: str | None
    min_rowid: int | None = None  # a question of common words only: the newest chunks


def _budgets(store: SearchBackend) -> tuple[int, int]:
    """(match, window) budgets: a backend that ranks matches more slowly than FTS5 (the
    PostgreSQL one reads each match's tsvector from the table) sets smaller ones."""
    own = getattr(store, "keyword_budgets", None)
    return (MATCH_BUDGET, WINDOW_BUDGET) if own is None else (int(own[0]), int(own[1]))


def candidate_query(store: SearchBackend, terms: Sequence[str],
                    renderings: Sequence[str] = ()) -> CandidateQuery:
    """The candidate query of the question's ``terms`` and, where the budget leaves room,
    ``renderings`` (its words in the other language, language/translation.py).

    The question's own words are planned first: renderings spend only what they leave of the
    budget, rarest first, so a translation can widen the pool but never push out the words
    the user wrote (in a large mixed-language index a dozen rare renderings took the budget
    from "incidents" and the question found nothing). A rendering no chunk holds is left out:
    it can match nothing, and on PostgreSQL each term is a branch of the query."""
    extra = [t for t in dict.fromkeys(renderings) if t not in terms]
    if not terms and not extra:
        return CandidateQuery(None)
    match_budget, window_budget = _budgets(store)
    total, containing = store.term_statistics([*terms, *extra])
    extra = [t for t in extra if containing[t] > 0]
    everything = [*terms, *extra]
    if not everything:
        return CandidateQuery(None)
    if total <= match_budget:
        return _any_of(everything)  # cheap as it is
    # What each term costs the query, where a backend reads more rows than a term matches
    # (PostgreSQL checks a phrase's order in every chunk holding its words); else its matches.
    costs = getattr(store, "term_costs", None)
    if costs is not None:
        containing = {**containing, **costs(everything)}
    if sum(containing[t] for t in everything) <= match_budget:
        return _any_of(everything)
    chosen, spent = _within(terms, containing, match_budget)
    if not chosen and terms:
        # A question of common words only: scored among the newest chunks (renderings too,
        # the window bounds their cost).
        newest = store.max_rowid()
        share = min(1.0, sum(containing[t] for t in everything) / max(1, total))
        window = max(window_budget, int(window_budget / share)) if share > 0 else total
        return CandidateQuery(_any_of(everything).expression, max(0, newest - window))
    more, _ = _within(extra, containing, match_budget - spent)
    return _any_of([*chosen, *more]) if chosen or more else CandidateQuery(None)


def _within(terms: Sequence[str], containing: dict[str, int],
            budget: int) -> tuple[list[str], int]:
    """The rarest of ``terms`` whose matches fit in ``budget`` together, and what they cost."""
    chosen: list[str] = []
    spent = 0
    for term in sorted(terms, key=lambda t: containing[t]):
        if spent + containing[term] > budget:
            break
        chosen.append(term)
        spent += containing[term]
    return chosen, spent


def _any_of(terms: Sequence[str]) -> CandidateQuery:
    return CandidateQuery(" OR ".join(quote_term(t) for t in terms))


def keyword_candidates(store: SearchBackend, query: str, limit: int, sources: Sequence[str],
                       notes: list[str], timeout_s: float | None = None, *,
                       path_prefix: str | None = None,
                       renderings: str = "") -> list[tuple[int, float]]:
    """(rowid, bm25) of the best keyword matches, best first; never raises for the query.
    ``renderings``: the question's words in the other language, searched where the budget
    leaves room (:func:`candidate_query`)."""
    try:
        plan = candidate_query(store, keyword_terms(query), keyword_terms(renderings))
        if plan.expression is None:
            return []
        return store.keyword_search(plan.expression, limit, sources, timeout_s=timeout_s,
                                    min_rowid=plan.min_rowid, path_prefix=path_prefix)
    except QueryTimeoutError as exc:
        notes.append(f"keyword search {exc} (search.query_timeout_seconds): too broad a query; "
                     "answering from the vector side")
        return []
    except IndexCorruptError:
        raise  # damage, not a query problem: the index repairs itself (MemoryIndex.search)
    except StoreError as exc:
        notes.append(f"keyword search failed: {exc}")
        return []
