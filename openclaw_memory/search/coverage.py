"""Keyword coverage: how much of a query's information a chunk contains, on an absolute scale.

BM25 ranks chunks well within one query, but its magnitude depends on the query's length and
the corpus, so a BM25 score says nothing on its own about relevance. Coverage does: each query
term weighs its inverse document frequency (a name on every line of a conversation weighs
almost nothing, a rare word a lot), and a chunk's coverage is the share of that weight it
contains, from 0 (no term) to 1 (every term). "How tall is Mount Everest?" asked of notes that
only share the word "tall" covers little; a note naming the ticket asked about covers it all.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.language.translation import QueryTranslation
from openclaw_memory.search.backend import SearchBackend

__all__ = ["concept_coverage", "coverages", "idf", "keyword_coverage"]


def idf(total: int, containing: int) -> float:
    """BM25's inverse document frequency, never negative."""
    return math.log(1.0 + (total - containing + 0.5) / (containing + 0.5))


@dataclass(frozen=True, slots=True)
class _Terms:
    """What the index says of some terms: chunk count, chunks holding each term, and which of
    the candidates hold each."""

    total: int
    containing: Mapping[str, int]
    holding: Mapping[str, set[int]]

    def idf(self, term: str) -> float:
        return idf(self.total, self.containing[term])


def _look_up(store: SearchBackend, terms: Sequence[str], keys: Sequence[int],
             own: AbstractSet[str]) -> _Terms:
    total, containing = store.term_statistics(terms)
    # Renderings no chunk holds are matched by no candidate: not looked for (a translation
    # brings dozens, most of them absent; on PostgreSQL each is a test of every candidate).
    wanted = [t for t in terms if t in own or containing[t] > 0]
    holding = {t: set(found) for t, found in store.terms_in(wanted, keys).items()}
    return _Terms(total, containing, holding)


def _own(terms: Sequence[str], keys: Sequence[int], seen: _Terms) -> dict[int, float]:
    weights = {t: seen.idf(t) for t in terms}
    mass = sum(weights.values())
    if mass <= 0:
        return {}
    covered = dict.fromkeys(keys, 0.0)
    for term in terms:
        for key in seen.holding.get(term, ()):
            if key in covered:
                covered[key] += weights[term]
    return {key: min(1.0, value / mass) for key, value in covered.items()}


def _concepts(concepts: Sequence[list[list[str]]], keys: Sequence[int],
              seen: _Terms) -> dict[int, float]:
    # A concept weighs the IDF of its commonest rendering term: it is as rare as its commonest
    # way of being said, and its renderings never add up (three synonyms are one word).
    weights = [seen.idf(max((t for r in rs for t in r), key=lambda t: seen.containing[t]))
               if rs else 0.0 for rs in concepts]
    mass = sum(weights)
    if mass <= 0:
        return {}
    covered = dict.fromkeys(keys, 0.0)
    for rs, weight in zip(concepts, weights, strict=True):
        having: set[int] = set()
        for r in rs:
            having |= set.intersection(*(seen.holding.get(t, set()) for t in r))
        for key in having:
            if key in covered:
                covered[key] += weight
    return {key: min(1.0, value / mass) for key, value in covered.items()}


def keyword_coverage(store: SearchBackend, query: str, keys: Sequence[int]) -> Mapping[int, float]:
    """Coverage in [0, 1] of ``query``'s terms for each chunk in ``keys`` (absent: no terms)."""
    return coverages(store, query, None, keys)[0]


def concept_coverage(store: SearchBackend, translation: QueryTranslation,
                     keys: Sequence[int]) -> Mapping[int, float]:
    """Coverage in [0, 1] of a translated question's concepts for each chunk in ``keys``.

    A chunk covers a concept when it holds every term of one of its renderings.
    """
    return coverages(store, "", translation, keys)[1]


def coverages(store: SearchBackend, query: str, translation: QueryTranslation | None,
              keys: Sequence[int]) -> tuple[Mapping[int, float], Mapping[int, float]]:
    """:func:`keyword_coverage` and :func:`concept_coverage` from one look-up of their terms
    (the candidates' texts are matched once, not once per language)."""
    own = keyword_terms(query)
    concepts = [c.rendering_terms() for c in translation.concepts] if translation else []
    terms = list(dict.fromkeys([*own, *(t for rs in concepts for r in rs for t in r)]))
    if not terms or not keys:
        return {}, {}
    seen = _look_up(store, terms, keys, frozenset(own))
    return (_own(own, keys, seen) if own else {},
            _concepts(concepts, keys, seen) if concepts else {})
