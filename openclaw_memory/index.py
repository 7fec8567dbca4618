"""``MemoryIndex``: the one facade every consumer goes through (CLI, LangChain, LangGraph)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.cache import CachedProvider
from openclaw_memory.embeddings.factory import ProviderChoice, choose_provider
from openclaw_memory.errors import (
    IndexCorruptError,
    OpenClawMemoryError,
    PathRefusedError,
    StoreError,
    WorkspaceError,
)
from openclaw_memory.files.curation import (
    EditResult,
    edit_lines,
    edit_target,
    settle_interrupted_edits,
    stamp_date,
)
from openclaw_memory.files.hints import empty_workspace_hint, write_problem
from openclaw_memory.files.notes import NoteText, WriteResult, append_to, normalise_note, read_cited, today
from openclaw_memory.files.space import FolderSpace
from openclaw_memory.files.workspace import Workspace, curated_file_name
from openclaw_memory.freshness.activity import record_flush, record_flush_failure
from openclaw_memory.freshness.state import Freshness
from openclaw_memory.freshness.triggers import SyncOutcome
from openclaw_memory.freshness.watch import MemoryWatcher
from openclaw_memory.index_status import index_status
from openclaw_memory.indexing.standby import Standby
from openclaw_memory.indexing.sync import (
    Progress,
    Syncer,
    ensure_not_inside_memory,
)
from openclaw_memory.indexing.sync_connection import SyncConnection
from openclaw_memory.memory_base import ChatType, Memory
from openclaw_memory.search.pipeline import SearchOutcome, SearchRequest, run_search
from openclaw_memory.search.response import CitationMode, build_response
from openclaw_memory.search.restatements import duplicate_of, note_check
from openclaw_memory.settings_sources import SettingsOrigin, load_settings, set_fields
from openclaw_memory.store import Store
from openclaw_memory.store.claims import claim_index_file, embedding_key
from openclaw_memory.store.paths import default_index_path
from openclaw_memory.store.recovery import open_index_store, set_aside
from openclaw_memory.types import SearchResponse, SyncReport

if TYPE_CHECKING:
    from openclaw_memory.postgres import PostgresMemory

__all__ = ["ChatType", "MemoryIndex"]

_CURATED = frozenset({"MEMORY.md", "memory.md"})


#: Seconds a sync spends, by default, embedding chunks whose vectors are missing.
BACKFILL_S = 5.0


class MemoryIndex(Memory):
    """Open (or create) the index of one workspace.

    >>> with MemoryIndex.open("~/agent") as memory:          # doctest: +SKIP
    ...     memory.sync()
    ...     memory.search("what database did we choose?").results
    """

    def __init__(self, settings: MemorySettings, *, index_path: str | os.PathLike[str] | None = None,
                 embedder: EmbeddingProvider | None = None,
                 origin: SettingsOrigin | None = None) -> None:
        self.settings = settings
        # Where each setting came from (status); settings built in code are all arguments.
        self.settings_origin = origin or SettingsOrigin(
            dict.fromkeys(set_fields(settings), "argument"))
        self.workspace = Workspace(
            settings.workspace, settings.extra_paths,
            sessions_dir=settings.sessions.resolved_directory(settings.workspace)
            if settings.sessions.enabled else None)
        self.embedding_key = embedding_key(settings, embedder)
        configured = settings.store.resolved_path(settings.sessions.agent_id)
        self.index_path = Path(index_path or configured or default_index_path(
            settings.workspace, settings.sessions.agent_id, self.embedding_key,
        )).expanduser().absolute()
        ensure_not_inside_memory(self.index_path, settings.workspace, settings.extra_paths)
        self._lock = threading.RLock()
        self.closed = False
        claim_index_file(self.index_path, self)
        self.notes: list[str] = []
        self.store = self._open_store()
        self._embedder = embedder
        self._choice: ProviderChoice | None = None
        self._provider: EmbeddingProvider | None = None
        self._synced = False
        self.last_sync: SyncReport | None = None
        self.last_sync_at: float | None = None
        # Dirty state and the non-blocking sync triggers (search, session start, interval,
        # watcher); created last because an interval timer may fire right away.
        self._background = SyncConnection(self.index_path, settings.store, settings.embedding.cache)
        self.freshness = Freshness(self)
        # The fallback provider's own index, opened if the primary goes down at run time.
        self.standby = Standby(settings, self.index_path,
                               lambda fallback, path: MemoryIndex(fallback, index_path=path))
        if settings.sync.watch:  # a long-running agent: follow the files as they change
            try:
                self.freshness.start_watch()
            except OpenClawMemoryError as exc:  # search still works, syncing on demand
                self.notes.append(f"sync.watch: the watcher could not start ({exc})")

    @overload
    @classmethod
    def open(cls, workspace: str | os.PathLike[str] | None = None, *,
             index_path: str | os.PathLike[str] | None = None,
             settings: MemorySettings | None = None, embedder: EmbeddingProvider | None = None,
             backend: Literal["sqlite"] = "sqlite", create: bool = False,
             **overrides: Any) -> MemoryIndex: ...

    @overload
    @classmethod
    def open(cls, workspace: str | None = None, *, backend: Literal["postgres"],
             dsn: str | None = None, settings: MemorySettings | None = None,
             embedder: EmbeddingProvider | None = None, **overrides: Any) -> PostgresMemory: ...

    @classmethod
    def open(cls, workspace: str | os.PathLike[str] | None = None, *,
             index_path: str | os.PathLike[str] | None = None,
             settings: MemorySettings | None = None, embedder: EmbeddingProvider | None = None,
             backend: Literal["sqlite", "postgres"] = "sqlite", dsn: str | None = None,
             create: bool = False, **overrides: Any) -> MemoryIndex | PostgresMemory:
        """Open (or create) the memory of a workspace with settings merged from, highest
        first: keyword overrides and the fields set on ``settings``, ``OPENCLAW_MEMORY_*``
        environment variables, the workspace's ``openclaw-memory.toml``, the defaults
        (:mod:`openclaw_memory.settings_sources`).

        ``backend="postgres"``: the workspace named ``workspace`` (default
        ``store.workspace_name``) in the shared database at ``dsn`` (default ``store.dsn``),
        a :class:`~openclaw_memory.postgres.PostgresMemory`.
        :func:`~openclaw_memory.opening.open_memory` picks the backend from the settings
        (``store.backend``) instead.

        ``create=True``: make the workspace folder and its ``memory/`` (owner-only) when they
        do not exist yet; without it, a missing folder searches as empty and refuses writes
        (a mistyped path does not quietly start a new memory).
        """
        if backend == "postgres":
            from openclaw_memory.postgres import PostgresMemory  # psycopg: optional

            return PostgresMemory.open(dsn, workspace=None if workspace is None else str(workspace),
                                       settings=settings, embedder=embedder, **overrides)
        resolved, origin = load_settings(workspace, settings=settings, overrides=overrides)
        if create:
            try:
                (resolved.workspace / "memory").mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError as exc:
                raise WorkspaceError(f"cannot create the workspace {resolved.workspace}: "
                                     f"{exc.strerror or exc}") from exc
        return cls(resolved, index_path=Path(index_path) if index_path else None,
                   embedder=embedder, origin=origin)

    # -- lifecycle --------------------------------------------------------------------------
    def _open_store(self) -> Store:
        return open_index_store(self.index_path, self.settings.store, self.notes)

    def _replace_damaged_store(self, exc: IndexCorruptError) -> None:
        """Damage found after opening (a page no query had read yet): start a new index."""
        with contextlib.suppress(Exception):
            self.store.close()
        set_aside(self.index_path, exc, self.notes)
        self.store = self._open_store()
        if isinstance(self._provider, CachedProvider):
            self._provider.backend = self.store

    def close(self) -> None:
        self.closed = True
        self.freshness.close()  # stops the watcher, joins a background sync
        self._background.drop()
        self.standby.close()
        self.store.close()

    def __enter__(self) -> MemoryIndex:
        return self

    # -- provider -----------------------------------------------------------------------------
    def provider_choice(self) -> ProviderChoice:
        choice = self._choice
        if choice is not None:  # lock-free: a search must not wait for a running sync's lock
            return choice
        with self._lock:
            if self._choice is None:
                choice = self._make_choice()
                raw = choice.provider
                if raw is not None and self.settings.embedding.cache:
                    self._provider = CachedProvider(raw, self.store)
                else:
                    self._provider = raw
                self._choice = choice  # published last: the read above relies on the order
            return self._choice

    def _make_choice(self) -> ProviderChoice:
        return choose_provider(self.settings.embedding, self._embedder)

    @property
    def provider(self) -> EmbeddingProvider | None:
        self.provider_choice()
        return self._provider

    # -- indexing -----------------------------------------------------------------------------
    def sync(self, *, full: bool = False, progress: Progress | None = None,
             force_sessions: bool = False, defer_vectors: bool = False,
             backfill_s: float | None = BACKFILL_S,
             vector_progress: Progress | None = None) -> SyncReport:
        """Bring the index in line with the files (incremental unless ``full``).

        Session transcripts already indexed are re-indexed once they pass the
        ``sessions.delta_bytes`` / ``delta_lines`` thresholds, or on ``force_sessions``.

        ``defer_vectors`` indexes text and keywords only (a very large workspace is
        searchable by keyword at once); chunks without a vector are embedded by later
        syncs, each spending at most ``backfill_s`` seconds on them (at least one batch;
        None: until none is left, as ``openclaw-memory index`` does), so that a search's
        sync never stalls on a large backfill. ``report.vectors_pending`` says how many
        are still waiting.
        """
        with self._lock:
            # An edit a killed process left half done gets its history entry (or none).
            with contextlib.suppress(OpenClawMemoryError, OSError):
                settle_interrupted_edits(self.workspace)
            seq = self.freshness.begin()
            syncer = Syncer(self.settings, self.workspace, self.provider,
                            defer_vectors=defer_vectors, backfill_s=backfill_s,
                            vector_progress=vector_progress)
            try:
                report = syncer.sync(self.store, full=full, progress=progress,
                                     force_sessions=force_sessions)
            except IndexCorruptError as exc:
                self._replace_damaged_store(exc)
                report = syncer.sync(self.store, full=full, progress=progress,
                                     force_sessions=force_sessions)
            self._synced = True
            self._save_search_vectors()
            self.freshness.settle(seq)
            self.standby.sync(self.provider_choice().provider)  # the primary is down
            report = self._with_empty_hint(report)
            self.last_sync, self.last_sync_at = report, time.time()
            return report

    def _save_search_vectors(self) -> None:
        """A costly provider's vectors that searches paid for, written to the cache by the
        sync (a search never writes); a read-only or locked index keeps them in memory."""
        if isinstance(self._provider, CachedProvider):
            with contextlib.suppress(StoreError):
                self._provider.save_search_vectors()

    def _with_empty_hint(self, report: SyncReport) -> SyncReport:
        """A sync that found nothing says where it looked (a newcomer's first question)."""
        if report.scanned or not self.workspace_is_empty():
            return report
        return replace(report, warnings=(*report.warnings, self.empty_hint()))

    def workspace_is_empty(self) -> bool:
        """No file is indexed and none is on disk to index (a workspace whose index was never
        built is not empty). One row read when anything is indexed: it runs on every search
        that finds nothing; the disk is only looked at when the index holds nothing."""
        if self.store.query("select 1 from files limit 1"):
            return False
        try:
            found = self.workspace.discover(max_file_bytes=self.settings.sync.max_file_bytes)
        except OpenClawMemoryError:
            return True
        return not (found.files or found.skipped)

    def empty_hint(self) -> str:
        return empty_workspace_hint(self.settings.workspace, extra_paths=self.settings.extra_paths)

    def _background_sync(self, progress: Progress) -> SyncReport:
        """A sync on a second connection, so searches on ``self.store`` never wait for it
        (not even while it waits for another process's write lock)."""
        with self._lock:
            seq = self.freshness.begin()
            store, provider = self._background.get(self.store, self.provider_choice().provider)
            try:
                report = Syncer(self.settings, self.workspace, provider).sync(
                    store, progress=progress)
            except IndexCorruptError:
                # The foreground path knows how to set a damaged index aside and start anew.
                self._background.drop()
                return self.sync(progress=progress)
            if report.full_rebuild:
                self.store.refresh()
            self._synced = True
            self._save_search_vectors()
            self.freshness.settle(seq)
            self.standby.sync(self.provider_choice().provider)  # the primary is down
            report = self._with_empty_hint(report)
            self.last_sync, self.last_sync_at = report, time.time()
            return report

    def mark_dirty(self, reason: str = "marked dirty") -> None:
        """Note that the files may have changed; the next search starts a background sync."""
        self.freshness.mark(reason)

    def sync_in_background(self, reason: str = "requested") -> bool:
        """Start a sync in a background thread (or join the one running); never blocks."""
        return self.freshness.request(reason)

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Block until no background sync runs or is queued; False on timeout."""
        return self.freshness.background.wait(timeout)

    def on_session_start(self, session_key: str | None = None) -> bool:
        """An agent session began: sync in the background, once per ``session_key``.

        Returns True when a sync was requested (False: already done for this key, or
        ``sync.on_session_start`` is off). Never blocks.
        """
        return self.freshness.session_start(session_key)

    def watch(self, *, on_sync: Callable[[SyncOutcome], None] | None = None,
              force_polling: bool = False, debounce_ms: int | None = None) -> MemoryWatcher:
        """Watch the memory files and sync in the background after each burst of changes.

        Returns the running :class:`~openclaw_memory.freshness.watch.MemoryWatcher` (the same one if
        already watching); :meth:`close` or ``watcher.stop()`` ends it. ``on_sync`` is called
        in the sync thread after every background sync, with its outcome.
        """
        return self.freshness.start_watch(on_sync=on_sync, force_polling=force_polling,
                                          debounce_ms=debounce_ms)

    def record_flush(self, *, appended: int = 0) -> None:
        """Record a completed pre-compaction memory flush (reported by :meth:`status`)."""
        record_flush(self.store, appended=appended)

    def record_flush_failure(self, error: str, *, gave_up: bool) -> None:
        """Record a failed flush attempt (``status``: ``flush_failures``, ``last_flush_error``)."""
        record_flush_failure(self.store, error=error, gave_up=gave_up)

    def pending_sessions(self) -> list[dict[str, Any]]:
        """Per transcript: ``path, pending_bytes, pending_lines, due, malformed``... (status).

        Lock-free like ``status``: it must answer while a sync holds the index lock.
        """
        syncer = Syncer(self.settings, self.workspace, self._provider)
        return [d.as_dict() for d in syncer.pending_sessions(self.store)]

    # -- reading ------------------------------------------------------------------------------
    def search(self, query: str, *, max_results: int | None = None,
               min_score: float | None = None, sources: tuple[str, ...] | None = None,
               chat_type: ChatType = "direct",
               path_filter: Callable[[str], bool] | None = None,
               path_prefix: str | None = None,
               now: datetime | None = None,
               max_injected_chars: int | None = None) -> SearchResponse:
        """Hybrid search. Never raises for query text or provider failures.

        ``path_prefix``: only files under this folder (e.g. ``"memory/users/alice/"``), applied
        inside the candidate queries; ``path_filter`` is a predicate applied to the ranked pool.
        """
        stale = self.freshness.for_search()  # never waits for a sync, except the first build
        s = self.settings.search
        choice = self.provider_choice()
        options: dict[str, Any] = {"max_results": max_results, "min_score": min_score,
                                   "sources": sources, "chat_type": chat_type,
                                   "path_filter": path_filter, "path_prefix": path_prefix,
                                   "now": now, "max_injected_chars": max_injected_chars}
        if self.standby.applies(choice.provider):  # the primary is down: the fallback answers
            assert choice.provider is not None
            answered = self.standby.search(choice.provider, query, **options)
            if answered is not None:
                return answered
        citations = s.citations == "on" or (s.citations == "auto" and chat_type == "direct")
        default_sources = ("memory", "sessions") if self.settings.sessions.enabled else (
            "memory",)
        request = SearchRequest(
            query=query.strip(), max_results=max_results or s.max_results,
            min_score=min_score,
            sources=sources or default_sources, citations=citations,
            now=now or datetime.now(UTC),
            path_filter=self._scope_filter(chat_type, path_filter), path_prefix=path_prefix,
            max_injected_chars=max_injected_chars)
        try:
            outcome = run_search(self.store, self.provider, request, s)
        except IndexCorruptError as exc:
            # Damage that showed on use: set the file aside, rebuild from the Markdown files
            # (the embedding cache is gone with it; vectors are recomputed), answer again.
            with self._lock:
                self._replace_damaged_store(exc)
            self.sync()
            outcome = run_search(self.store, self.provider, request, s)
            outcome = replace(outcome, notes=(*outcome.notes, self.notes[-1]))
        if outcome.embedding_error is not None and self.standby.applies(choice.provider):
            assert choice.provider is not None  # it failed just now: the fallback answers
            answered = self.standby.search(choice.provider, query, **options)
            if answered is not None:
                return answered
        return self._response(choice, outcome, s.citations, stale=stale)

    def _scope_filter(self, chat_type: ChatType, extra: Callable[[str], bool] | None,
                      ) -> Callable[[str], bool] | None:
        if chat_type == "direct":
            return extra
        # Curated long-term memory is private: never surfaced in group or channel chats.
        return lambda p: p not in _CURATED and (extra is None or extra(p))

    def _response(self, choice: ProviderChoice, outcome: SearchOutcome, citations: CitationMode, *,
                  stale: bool = False) -> SearchResponse:
        empty = self.empty_hint() if not outcome.hits and self.workspace_is_empty() else None
        return build_response(outcome, choice, self._provider, vector_path=self.store.vector_path,
                              citations=citations, stale=stale, empty_hint=empty)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None,
            *, chat_type: ChatType = "direct") -> NoteText:
        """Read lines of a memory file through the path gate (missing file -> empty text).

        ``path`` may be a citation as search returns it (``memory/x.md#L3-L5``, ``#L3``, a
        session transcript's ``sessions/<name>.jsonl#L7``): those lines are read.
        """
        try:
            return read_cited(self.workspace, path, from_line, lines, private=chat_type == "direct",
                              max_bytes=self.settings.sync.max_file_bytes,
                              max_chars=self.settings.search.get_max_chars)
        except PathRefusedError:
            self.count_event("paths_refused")  # status shows them: a probing model, a bug
            raise

    # -- writing ------------------------------------------------------------------------------
    def write(self, content: str, *, target: Literal["daily", "memory"] = "daily",
              now: datetime | None = None, area: str | None = None,
              chat_type: ChatType = "direct") -> WriteResult:
        """Append a note to today's daily file (or MEMORY.md) and index it.

        ``area``: a folder below ``memory/`` that is one user's or agent's own memory (see
        :class:`~openclaw_memory.langchain.MemoryScope`): the daily file and ``MEMORY.md`` are
        then the ones in that folder.
        """
        if target == "memory":  # a curated fact carries the day it was learned
            content = stamp_date(normalise_note(content),
                                 today(self.settings.timezone, now).isoformat())
        check = note_check(self, content, target=target, area=area, chat_type=chat_type)
        if check.same is not None:  # said already, word for word: cite it instead of a copy
            return duplicate_of(check.same)
        result = append_to(self.workspace, content, target, area=area, tz=self.settings.timezone,
                           now=now, max_file_bytes=self.settings.sync.max_file_bytes)
        if result.written:
            result = replace(result, related=check.related)
        self.freshness.mark("written through write()")
        if result.appended:
            try:
                self.sync()
            except StoreError as exc:  # the note is saved: the file is the truth
                return replace(result, warning=(
                    f"the note is saved in {result.path}, but the index could not be updated "
                    f"({exc}); it is searchable after the next sync that can write the index"))
        return result

    def edit(self, citation: str, expected: str, replacement: str | None, *,
             reason: str | None = None, chat_type: ChatType = "direct",
             now: datetime | None = None) -> EditResult:
        """Replace (``replacement``) or remove (None) the lines ``citation`` names
        (``MEMORY.md#L5-L6``) if they still hold ``expected``; else nothing is written and the
        result shows what is there now. The old text goes to ``memory-history/``."""
        path, start, end = edit_target(citation, chat_type)
        result = edit_lines(self.workspace, path, start, end, expected=expected,
                            replacement=replacement, tz=self.settings.timezone, now=now,
                            reason=reason)
        if result.applied:
            self.freshness.mark("edited through edit()")
            with contextlib.suppress(StoreError):  # the file is the truth; the next sync
                self.sync()                        # catches up if the index cannot be written
        return result

    def write_problem(self) -> str | None:
        return write_problem(self.settings.workspace)

    def indexed_paths(self) -> set[str]:
        return set(self.store.files())

    def documents(self) -> FolderSpace:
        return FolderSpace(self.workspace, self._recorded_stat, self._settle,
                           max_bytes=self.settings.sync.max_file_bytes)

    def search_backend(self) -> Store:
        return self.store

    def _recorded_stat(self, rel_path: str) -> tuple[int, int] | None:
        row = self.store.query("select size, mtime_ns from files where path = ?", (rel_path,))
        return (int(row[0][0]), int(row[0][1])) if row else None

    def _settle(self, reason: str) -> None:
        self.mark_dirty(reason)
        self.sync()

    def curated_name(self) -> str:
        return curated_file_name(self.settings.workspace)

    # -- status -------------------------------------------------------------------------------
    def repair(self) -> dict[str, Any]:
        """Index every chunk's stored text again into a new keyword table (no file read,
        nothing embedded): repairs keyword totals that drifted (an index written by an older
        version that could not be converted when opened) and damaged keyword pages."""
        before = self.store.keyword_totals()
        rows = self.store.rebuild_keyword_index()
        return {"before": before.as_dict(), "after": self.store.keyword_totals().as_dict(),
                "rows": rows}

    @property
    def synced_once(self) -> bool:
        """Whether this object has synced (a dirty flag means something only after that)."""
        return self._synced

    def status(self) -> dict[str, Any]:
        """Everything a person debugging "why no results?" needs, in one dictionary."""
        return index_status(self)

