"""``Memory``: what every backend of a workspace's memory offers the agent surfaces.

:class:`~openclaw_memory.index.MemoryIndex` (a folder of Markdown files and an SQLite index)
and :class:`~openclaw_memory.postgres.PostgresMemory` (documents and index in a shared
PostgreSQL) both are one. The LangChain retriever and tools, the LangGraph flush, citations
and session-start context, the VectorStore and the LangGraph ``BaseStore`` (through
:meth:`Memory.documents`) take any ``Memory``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.factory import ProviderChoice
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.curation import EditResult
from openclaw_memory.files.notes import NoteText, WriteResult
from openclaw_memory.files.space import DocumentSpace
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.types import SearchResponse, SyncReport

__all__ = ["ChatType", "Memory"]

ChatType = Literal["direct", "group", "channel"]


class Memory(ABC):
    settings: MemorySettings
    closed: bool
    last_sync: SyncReport | None
    backend: str = "sqlite"

    @property
    @abstractmethod
    def provider(self) -> EmbeddingProvider | None:
        """The embedding provider searches use (None: keyword-only)."""

    @abstractmethod
    def provider_choice(self) -> ProviderChoice:
        """Which provider was chosen, and why none when it is unavailable."""

    @abstractmethod
    def search(self, query: str, *, max_results: int | None = None,
               min_score: float | None = None, sources: tuple[str, ...] | None = None,
               chat_type: ChatType = "direct",
               path_filter: Callable[[str], bool] | None = None,
               path_prefix: str | None = None,
               now: datetime | None = None,
               max_injected_chars: int | None = None) -> SearchResponse:
        """Hybrid search; never raises for query text. ``max_injected_chars``: the bound on
        the hits' text together (None: ``search.max_injected_chars``; 0: none, for callers
        that page results rather than hand them to a model)."""

    @abstractmethod
    def get(self, path: str, from_line: int | None = None, lines: int | None = None,
            *, chat_type: ChatType = "direct") -> NoteText:
        """Lines of a memory file through the path gate (a citation works as ``path``)."""

    @abstractmethod
    def write(self, content: str, *, target: Literal["daily", "memory"] = "daily",
              now: datetime | None = None, area: str | None = None,
              chat_type: ChatType = "direct") -> WriteResult:
        """Append a note to today's daily file (or ``MEMORY.md``) and index it. Outside a
        direct chat a note is compared with the daily logs alone for restatements: the answer
        must not tell a group what ``MEMORY.md`` holds, nor keep its note out of the log."""

    def edit(self, citation: str, expected: str, replacement: str | None, *,
             reason: str | None = None, chat_type: ChatType = "direct",
             now: datetime | None = None) -> EditResult:
        """Replace (``replacement``) or remove (None) the lines a citation names in
        ``MEMORY.md`` or an evergreen note, if they still hold ``expected``; the old text goes
        to the history (:mod:`openclaw_memory.files.curation`)."""
        raise OpenClawMemoryError(f"editing notes is not available on the {self.backend} "
                                  "backend yet; write a correcting note instead")

    @abstractmethod
    def sync(self, *, full: bool = False) -> SyncReport:
        """Bring the index in line with the memory files."""

    @abstractmethod
    def status(self) -> dict[str, Any]:
        """What a person debugging "why no results?" needs."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def record_flush(self, *, appended: int = 0) -> None:
        """Record a completed pre-compaction memory flush (reported by ``status``)."""

    @abstractmethod
    def record_flush_failure(self, error: str, *, gave_up: bool) -> None:
        """Record a failed flush attempt."""

    @abstractmethod
    def on_session_start(self, session_key: str | None = None) -> bool:
        """An agent session began; True when a sync was requested."""

    @abstractmethod
    def write_problem(self) -> str | None:
        """Why notes cannot be written now (None: they can). The flush skips itself then."""

    @abstractmethod
    def indexed_paths(self) -> set[str]:
        """Every memory file the index holds (a search can only ever cite these)."""

    @abstractmethod
    def documents(self) -> DocumentSpace:
        """Where the VectorStore and the LangGraph store keep their own documents."""

    @abstractmethod
    def search_backend(self) -> SearchBackend:
        """The index as the search pipeline reads it (vector neighbours, chunk rows)."""

    @abstractmethod
    def curated_name(self) -> str:
        """The curated file's name: ``MEMORY.md``, or ``memory.md`` where that is the one."""

    def count_event(self, name: str) -> None:
        """Count one ``scope_denied`` or ``paths_refused`` (reported by ``status``; kept for
        the life of this object)."""
        counts: dict[str, int] = self.__dict__.setdefault("_event_counts", {})
        counts[name] = counts.get(name, 0) + 1

    def event_counts(self) -> dict[str, int]:
        return dict(self.__dict__.get("_event_counts", {}))

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
