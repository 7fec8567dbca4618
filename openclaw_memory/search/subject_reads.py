"""What reordering a subject's lines reads from the index, when a question needs it: the
lines of the curated files among the hits (the attributes the notes keep) and a named
subject's lines anywhere in memory (search/subject_lines.py). Both read nothing until asked,
and read nothing (the hits stand as ranked) when the store fails."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from openclaw_memory.errors import StoreError
from openclaw_memory.files.workspace import dated_name
from openclaw_memory.language.textsearch import keyword_terms, quote_term
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.request import SearchRequest
from openclaw_memory.search.subject_lines import PlacedLine, SubjectText, curated
from openclaw_memory.types import SearchHit

__all__ = ["CURATED_CHUNKS", "SUBJECT_CHUNKS", "SUBJECT_POOL", "curated_reader", "subject_reader"]

#: The most chunks of curated files read to group a subject's lines by attribute.
CURATED_CHUNKS = 200
#: The most chunks naming a question's subject read for its lines no hit cites: the newest of
#: the :data:`SUBJECT_POOL` that name it best (a person in a year of daily notes is named in
#: hundreds; the 60 that BM25 likes best are the shortest, not the newest).
SUBJECT_CHUNKS = 60
SUBJECT_POOL = 400


def curated_reader(store: SearchBackend, hits: Sequence[SearchHit]) -> Callable[[], list[PlacedLine]]:
    """The lines of the curated files among ``hits`` (at most :data:`CURATED_CHUNKS` chunks),
    read when asked; none when the store fails (the hits stand as ranked)."""
    def read() -> list[PlacedLine]:
        paths = sorted({hit.path for hit in hits if curated(hit)})
        if not paths:
            return []
        try:
            keys = store.chunk_keys(paths, CURATED_CHUNKS)[:CURATED_CHUNKS]
            rows = store.chunks(keys)
        except StoreError:
            return []
        return [PlacedLine(line, rows[key].path, rows[key].start_line + n, rows[key].id)
                for key in keys if key in rows
                for n, line in enumerate(rows[key].text.splitlines())]
    return read


def subject_reader(store: SearchBackend, request: SearchRequest) -> SubjectText:
    """The lines of the chunks (the newest :data:`SUBJECT_CHUNKS`) holding every term of a
    subject, newest daily file first, then the undated files; read when asked (once per
    subject: a Chinese lead looked up to find the subject is asked for again as the subject),
    none when the store fails. Transcripts' chunks are rendered messages, not file lines:
    left out."""
    read_before: dict[tuple[str, ...], list[PlacedLine]] = {}

    def read(subject: set[str]) -> list[PlacedLine]:
        terms = tuple(keyword_terms(" ".join(sorted(subject))))
        if not terms or "memory" not in request.sources:
            return []
        if terms not in read_before:
            read_before[terms] = _subject_lines(store, request, terms)
        return read_before[terms]
    return read


def _subject_lines(store: SearchBackend, request: SearchRequest,
                   terms: tuple[str, ...]) -> list[PlacedLine]:
    try:
        found = store.keyword_search(" AND ".join(quote_term(t) for t in terms), SUBJECT_POOL,
                                     ("memory",), path_prefix=request.path_prefix)
        rows = store.chunks([key for key, _ in found])
    except StoreError:
        return []
    kept = [row for row in rows.values()
            if request.path_filter is None or request.path_filter(row.path)]
    kept.sort(key=lambda row: (str(dated_name(row.path) or ""), row.path, row.start_line),
              reverse=True)
    return [PlacedLine(line, row.path, row.start_line + n, row.id) for row in kept[:SUBJECT_CHUNKS]
            if len(lines := row.text.split("\n")) == row.end_line - row.start_line + 1
            for n, line in enumerate(lines)]
