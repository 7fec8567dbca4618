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

from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.textsearch import keyword_terms
from openclaw_memory.search.translation import QueryTranslation

__all__ = ["concept_coverage", "idf", "keyword_coverage"]


def idf(total: int, containing: int) -> float:
    """BM25's inverse document frequency, never negative."""
    return math.log(1.0 + (total - containing + 0.5) / (containing + 0.5))


def keyword_coverage(store: SearchBackend, query: str, keys: Sequence[int]) -> Mapping[int, float]:
    """Coverage in [0, 1] of ``query``'s terms for each chunk in ``keys`` (absent: no terms)."""
    terms = keyword_terms(query)
    if not terms or not keys:
        return {}
    total, containing = store.term_statistics(terms)
    weights = {t: idf(total, containing[t]) for t in terms}
    mass = sum(weights.values())
    if mass <= 0:
        return {}
    covered = dict.fromkeys(keys, 0.0)
    for term, found in store.terms_in(terms, keys).items():
        for key in found:
            if key in covered:
                covered[key] += weights[term]
    return {key: min(1.0, value / mass) for key, value in covered.items()}


def concept_coverage(store: SearchBackend, translation: QueryTranslation,
                     keys: Sequence[int]) -> Mapping[int, float]:
    """Coverage in [0, 1] of a translated question's concepts for each chunk in ``keys``.

    A chunk covers a concept when it holds every term of one of its renderings. A concept
    weighs the IDF of its commonest rendering term: it is as rare as its commonest way of
    being said, and its renderings never add up (three synonyms are one word of the question).
    """
    concepts = [c.rendering_terms() for c in translation.concepts]
    terms = list(dict.fromkeys(t for rs in concepts for r in rs for t in r))
    if not terms or not keys:
        return {}
    total, containing = store.term_statistics(terms)
    weights = [idf(total, max(containing[t] for r in rs for t in r)) if rs else 0.0
               for rs in concepts]
    mass = sum(weights)
    if mass <= 0:
        return {}
    holding = {t: set(found) for t, found in store.terms_in(terms, keys).items()}
    empty: set[int] = set()
    covered = dict.fromkeys(keys, 0.0)
    for rs, weight in zip(concepts, weights, strict=True):
        having = set().union(*(set.intersection(*(holding.get(t, empty) for t in r)) for r in rs))
        for key in having:
            if key in covered:
                covered[key] += weight
    return {key: min(1.0, value / mass) for key, value in covered.items()}
