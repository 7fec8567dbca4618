"""What the search pipeline reads from an index, whatever holds it.

:class:`~openclaw_memory.store.Store` (SQLite: FTS5 and a vector matrix or vec0) and
:class:`~openclaw_memory.postgres.PostgresIndex` (tsvector and pgvector) both answer these
calls, so ranking, fusion, coverage, the relevance gate and citations are one code path.

Keyword expressions are the FTS5 strings :mod:`~openclaw_memory.language.textsearch` builds
(quoted terms joined by ``OR`` or ``AND``); a backend with another query language reads them
back with :func:`~openclaw_memory.language.textsearch.parse_match`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from openclaw_memory.language.dates import DateWindow
from openclaw_memory.store.rows import ChunkRow

__all__ = ["SearchBackend"]


class SearchBackend(Protocol):
    def keyword_search(self, match: str, limit: int, sources: Sequence[str], *,
                       timeout_s: float | None = None, min_rowid: int | None = None,
                       path_prefix: str | None = None) -> list[tuple[int, float]]:
        """(key, rank) best first; lower rank is better (FTS5's negative bm25)."""
        ...

    def keyword_scores(self, match: str, rowids: Sequence[int]) -> dict[int, float]: ...

    def term_statistics(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]: ...

    def terms_in(self, terms: Sequence[str], rowids: Sequence[int]) -> dict[str, set[int]]: ...

    def max_rowid(self) -> int: ...

    def vector_search(self, query: np.ndarray[Any, Any], k: int, sources: Sequence[str], *,
                      path_prefix: str | None = None) -> list[tuple[int, float]]: ...

    def cosines(self, query: np.ndarray[Any, Any], rowids: Sequence[int]) -> dict[int, float]: ...

    def cosines_many(self, queries: np.ndarray[Any, Any],
                     rowids: Sequence[int]) -> dict[int, list[float]]:
        """Each chunk's cosine with each query vector (rows of ``queries``), in one read."""
        ...

    def chunks(self, rowids: Sequence[int]) -> dict[int, ChunkRow]: ...

    def daily_paths(self, windows: Sequence[DateWindow],
                    path_prefix: str | None = None) -> list[str]:
        """Indexed Markdown notes named as a date (``.../YYYY-MM-DD.md``) that may fall in
        ``windows`` (:func:`~openclaw_memory.language.dates.name_filter`; the caller checks
        each with ``in_windows``)."""
        ...

    def chunk_keys(self, paths: Sequence[str], limit: int | None = None) -> list[int]: ...
