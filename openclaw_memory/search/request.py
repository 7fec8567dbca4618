"""One search as the pipeline receives it (``MemoryIndex.search`` and ``PostgresMemory.search``
build it from their arguments and settings)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from openclaw_memory.language.translation import QueryTranslation

__all__ = ["Mode", "SearchRequest"]

#: How a search was answered: both sides, or one of them alone.
Mode = Literal["hybrid", "keyword-only", "vector-only"]


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    max_results: int
    min_score: float | None
    sources: tuple[str, ...]
    citations: bool
    now: datetime
    path_filter: Callable[[str], bool] | None = None
    keyword_query: str | None = None
    """The query as the keyword side searches it (its terms bounded); None: ``query``."""
    translation: QueryTranslation | None = None
    """The question's words in the other language (language/translation.py), set by the
    pipeline: the keyword side searches them too, and a hit whose keyword coverage comes from
    them cites the lines holding them."""
    path_prefix: str | None = None
    """Only files under this folder are candidates (one user's memory in a shared workspace):
    applied inside the candidate queries, so other folders never crowd the pool."""

    max_injected_chars: int | None = None
    """The bound on the hits' text together; None: ``search.max_injected_chars``; 0: none."""

    @property
    def keywords(self) -> str:
        return self.query if self.keyword_query is None else self.keyword_query
