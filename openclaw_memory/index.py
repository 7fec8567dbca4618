"""``MemoryIndex``: the one facade every consumer goes through (CLI, LangChain, LangGraph)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from .config import MemorySettings
from .embeddings.base import EmbeddingProvider
from .embeddings.cache import CachedProvider
from .embeddings.factory import ProviderChoice, create_provider
from .errors import EmbeddingError, IndexCorruptError, OpenClawMemoryError, ProviderUnavailableError
from .notes import NoteText, WriteResult, append_daily, read_note, write_memory_md
from .paths import default_index_path
from .search import SearchRequest, run_search
from .store import Store
from .sync import LAST_SYNC_KEY, Progress, Syncer, ensure_not_inside_memory
from .types import SearchResponse, SyncReport
from .workspace import Workspace

__all__ = ["ChatType", "MemoryIndex"]

ChatType = Literal["direct", "group", "channel"]
_CURATED = frozenset({"MEMORY.md", "memory.md"})


def _quota_exhausted(error: EmbeddingError) -> bool:
    text = str(error).lower()
    return "quota" in text or error.status == 429


class MemoryIndex:
    """Open (or create) the index of one workspace.

    >>> with MemoryIndex.open("~/agent") as memory:          # doctest: +SKIP
    ...     memory.sync()
    ...     memory.search("what database did we choose?").results
    """

    def __init__(self, settings: MemorySettings, *, index_path: Path | None = None,
                 embedder: EmbeddingProvider | None = None) -> None:
        self.settings = settings
        self.workspace = Workspace(
            settings.workspace, settings.extra_paths,
            sessions_dir=(settings.sessions.directory or settings.workspace / "sessions")
            if settings.sessions.enabled else None)
        self.index_path = (index_path or settings.store.path
                           or default_index_path(settings.workspace)).expanduser().absolute()
        ensure_not_inside_memory(self.index_path, settings.workspace)
        self._lock = threading.RLock()
        self.notes: list[str] = []
        self.store = self._open_store()
        self._embedder = embedder
        self._choice: ProviderChoice | None = None
        self._provider: EmbeddingProvider | None = None
        self._synced = False
        self._dirty = True
        self.last_sync: SyncReport | None = None
        self.last_sync_at: float | None = None

    @classmethod
    def open(cls, workspace: str | os.PathLike[str] | None = None, *,
             index_path: str | os.PathLike[str] | None = None,
             settings: MemorySettings | None = None, embedder: EmbeddingProvider | None = None,
             **overrides: Any) -> MemoryIndex:
        """Build settings from ``settings`` plus keyword overrides and open the index."""
        base = settings or MemorySettings()
        data = base.model_dump()
        data.update(overrides)
        if workspace is not None:
            data["workspace"] = Path(workspace)
        resolved = MemorySettings.model_validate(data)
        return cls(resolved, index_path=Path(index_path) if index_path else None,
                   embedder=embedder)

    # -- lifecycle --------------------------------------------------------------------------
    def _open_store(self) -> Store:
        store_settings = self.settings.store
        def make() -> Store:
            return Store(self.index_path, vector_backend=store_settings.vector_backend,
                         fts_tokenizer=store_settings.fts_tokenizer,
                         busy_timeout_ms=store_settings.busy_timeout_ms)
        try:
            return make()
        except IndexCorruptError as exc:
            aside = self.index_path.with_name(
                f"{self.index_path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.index_path, aside)
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{self.index_path}{suffix}", f"{aside}{suffix}")
            self.notes.append(f"{exc}; moved it to {aside} and rebuilt from the Markdown files")
            return make()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- provider -----------------------------------------------------------------------------
    def provider_choice(self) -> ProviderChoice:
        with self._lock:
            if self._choice is None:
                self._choice = self._make_choice()
                raw = self._choice.provider
                if raw is not None and self.settings.embedding.cache:
                    self._provider = CachedProvider(raw, self.store)
                else:
                    self._provider = raw
            return self._choice

    def _make_choice(self) -> ProviderChoice:
        if self._embedder is not None:
            return ProviderChoice(self._embedder, "custom", None, None)
        try:
            return create_provider(self.settings.embedding)
        except ProviderUnavailableError as exc:
            # Never an exception at the model: search runs keyword-only and says why.
            return ProviderChoice(None, self.settings.embedding.provider, None, str(exc))

    @property
    def provider(self) -> EmbeddingProvider | None:
        self.provider_choice()
        return self._provider

    # -- indexing -----------------------------------------------------------------------------
    def sync(self, *, full: bool = False, progress: Progress | None = None) -> SyncReport:
        """Bring the index in line with the files (incremental unless ``full``)."""
        with self._lock:
            syncer = Syncer(self.settings, self.workspace, self.provider)
            report = syncer.sync(self.store, full=full, progress=progress)
            self._synced, self._dirty = True, False
            self.last_sync, self.last_sync_at = report, time.time()
            return report

    def mark_dirty(self) -> None:
        self._dirty = True

    # -- reading ------------------------------------------------------------------------------
    def search(self, query: str, *, max_results: int | None = None,
               min_score: float | None = None, sources: tuple[str, ...] | None = None,
               chat_type: ChatType = "direct",
               path_filter: Callable[[str], bool] | None = None,
               now: datetime | None = None) -> SearchResponse:
        """Hybrid search. Never raises for query text or provider failures."""
        if not self._synced:
            self.sync()
        s = self.settings.search
        choice = self.provider_choice()
        citations = s.citations == "on" or (s.citations == "auto" and chat_type == "direct")
        default_sources = ("memory", "sessions") if self.settings.sessions.enabled else (
            "memory",)
        request = SearchRequest(
            query=query.strip(), max_results=max_results or s.max_results,
            min_score=min_score,
            sources=sources or default_sources, citations=citations,
            now=now or datetime.now(UTC),
            path_filter=self._scope_filter(chat_type, path_filter))
        outcome = run_search(self.store, self.provider, request, s)
        return self._response(choice, outcome, s.citations)

    def _scope_filter(self, chat_type: ChatType, extra: Callable[[str], bool] | None,
                      ) -> Callable[[str], bool] | None:
        if chat_type == "direct":
            return extra
        # Curated long-term memory is private: never surfaced in group or channel chats.
        return lambda p: p not in _CURATED and (extra is None or extra(p))

    def _response(self, choice: ProviderChoice, outcome: Any, citations: Any) -> SearchResponse:
        provider = self._provider
        notes = list(outcome.notes)
        if choice.unavailable_reason:
            notes.append(f"keyword-only: {choice.unavailable_reason}")
        error = outcome.embedding_error
        warning = action = None
        if choice.unavailable_reason and choice.requested != "none":
            warning = f"Vector search is unavailable: {choice.unavailable_reason}"
            action = ("Check the embedding provider settings (key, base_url, model); "
                      "keyword results are shown.")
        if error is not None:
            if _quota_exhausted(error):
                warning = "Vector search is unavailable: the embedding provider quota is exhausted."
                action = "Top up or switch the embedding provider; keyword results are shown."
            else:
                warning = "Vector search is unavailable due to an embedding provider error."
                action = "Check the embedding provider configuration; keyword results are shown."
        return SearchResponse(
            results=outcome.hits, provider=provider.id if provider else "none",
            model=provider.model if provider else None, mode=outcome.mode,
            citations=citations, vector_path=self.store.vector_path,
            fallback=choice.fallback, stale=self._dirty and self._synced,
            error=str(error) if error else None, warning=warning, action=action,
            notes=tuple(notes))

    def get(self, path: str, from_line: int | None = None, lines: int | None = None,
            *, chat_type: ChatType = "direct") -> NoteText:
        """Read lines of a memory file through the path gate (missing file -> empty text)."""
        if chat_type != "direct" and self.workspace.resolve(path).kind == "memory_md":
            raise OpenClawMemoryError("MEMORY.md is private and not available in group chats")
        return read_note(self.workspace, path, from_line, lines)

    # -- writing ------------------------------------------------------------------------------
    def write(self, content: str, *, target: Literal["daily", "memory"] = "daily",
              now: datetime | None = None) -> WriteResult:
        """Append a note to today's daily file (or MEMORY.md) and index it."""
        if target == "memory":
            result = write_memory_md(self.workspace, content)
        else:
            result = append_daily(self.workspace, content, tz=self.settings.timezone, now=now)
        self._dirty = True
        if result.appended:
            self.sync()
        return result

    # -- status -------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Everything a person debugging "why no results?" needs, in one dictionary."""
        choice = self.provider_choice()
        provider = self._provider
        driver = self.store.driver
        raw_last = self.store.meta(LAST_SYNC_KEY)
        last: dict[str, Any] = json.loads(raw_last) if raw_last else {}
        pending = Syncer(self.settings, self.workspace, provider).pending(self.store)
        return {
            "workspace": str(self.settings.workspace),
            "index_path": str(self.index_path),
            **self.store.counts(),
            "dirty": pending > 0 or (self._dirty and self._synced),
            "pending_files": pending,
            "last_sync_at": last.get("at"),
            "last_sync_duration_s": last.get("duration_s"),
            "vector_path": self.store.vector_path,
            "vector_reason": self.store.vector_reason,
            "sqlite_driver": driver.name,
            "sqlite_version": driver.sqlite_version,
            "sqlite_vec_version": driver.vec_version,
            "provider": provider.id if provider else "none",
            "model": provider.model if provider else None,
            "mode": "hybrid" if provider else "keyword-only",
            "provider_unavailable_reason": choice.unavailable_reason,
            "fallback": choice.fallback,
            "skipped": last.get("skipped", []),
            "warnings": last.get("warnings", []),
            "notes": list(self.notes),
        }
