"""``PostgresMemory``: the memory of one workspace kept in a shared PostgreSQL database.

The same product as :class:`~openclaw_memory.index.MemoryIndex` on another backend: Markdown
documents under workspace-relative paths (``MEMORY.md``, ``memory/YYYY-MM-DD.md``,
``memory/**/*.md``), append-only daily notes, line-exact citations that :meth:`get` reads
back, and the same hybrid search pipeline. The documents themselves live in the database,
so replicas on many machines share one memory without a shared disk; :meth:`export` writes a
workspace out as a folder, byte for byte, and :meth:`publish` loads a folder in.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.factory import ProviderChoice, choose_provider
from openclaw_memory.errors import (
    ConfigError,
    OpenClawMemoryError,
    WorkspaceError,
)
from openclaw_memory.files.curation import EditResult, edit_target, stamp_date
from openclaw_memory.files.docpaths import document_path
from openclaw_memory.files.notes import (
    NoteText,
    WriteResult,
    daily_note_path,
    normalise_note,
    note_text,
    plan_append,
    split_citation,
    today,
)
from openclaw_memory.files.workspace import Workspace
from openclaw_memory.freshness.activity import (
    FLUSH_APPENDED_KEY,
    FLUSH_AT_KEY,
    FLUSH_COUNT_KEY,
    FLUSH_ERROR_KEY,
    FLUSH_FAILURES_KEY,
)
from openclaw_memory.indexing.sync import index_fingerprint
from openclaw_memory.memory_base import ChatType, Memory
from openclaw_memory.postgres.connection import Database, Limits
from openclaw_memory.postgres.curating import edit_document
from openclaw_memory.postgres.documents import DocumentIndexer, document_hash
from openclaw_memory.postgres.maintenance import analyze, ensure_vector_index, statistics_stale
from openclaw_memory.postgres.meta import bump_meta, read_meta, set_meta
from openclaw_memory.postgres.schema import SCHEMA, SCHEMA_VERSION, migrate, text_config
from openclaw_memory.postgres.search_side import PostgresIndex
from openclaw_memory.postgres.space import DatabaseSpace
from openclaw_memory.postgres.tenant import open_tenant
from openclaw_memory.search.pipeline import SearchRequest, run_search
from openclaw_memory.search.response import build_response
from openclaw_memory.search.restatements import duplicate_of, note_check
from openclaw_memory.settings_sources import load_settings
from openclaw_memory.types import SearchResponse, SyncReport

__all__ = ["PostgresMemory", "PublishReport"]

_CURATED = ("MEMORY.md", "memory.md")
_BACKFILL_BATCH = 256


@dataclass(frozen=True)
class PublishReport:
    """What :meth:`PostgresMemory.publish` did with a folder."""

    scanned: int
    unchanged: int
    written: int
    deleted: int
    chunks: int
    skipped: tuple[str, ...]


class PostgresMemory(Memory):
    """Open (or create) workspace ``workspace`` in the database at ``dsn``.

    >>> with PostgresMemory.open("postgresql://db/memory", workspace="alice") as memory:
    ...     memory.write("Alice prefers tea")                     # doctest: +SKIP
    """

    backend = "postgres"

    def __init__(self, dsn: str, workspace: str, settings: MemorySettings, *,
                 embedder: EmbeddingProvider | None = None) -> None:
        if not workspace or len(workspace) > 200 or not workspace.isprintable():
            raise WorkspaceError("a database workspace is named by 1-200 printable characters")
        self.settings = settings
        self.workspace_name = workspace
        store = settings.store
        self.db = Database(dsn, limits=Limits(
            connect_timeout_s=store.connect_timeout_s, statement_timeout_s=store.statement_timeout_s,
            idle_in_transaction_timeout_s=store.idle_in_transaction_timeout_s,
            keepalive_idle_s=store.keepalive_idle_s,
            maintenance_timeout_s=store.maintenance_timeout_s))
        try:
            migrate(self.db)
            self.tenant = open_tenant(self.db, workspace)
        except BaseException:
            self.db.close()
            raise
        self.text_config = text_config(settings.store.fts_tokenizer)
        self.choice = choose_provider(settings.embedding, embedder)
        self._provider = self.choice.provider
        self.index = PostgresIndex(self.tenant, self.text_config,
                                   ef_search=settings.store.hnsw_ef_search)
        self.indexer = DocumentIndexer(self.tenant, settings, self._provider, self.text_config)
        self.closed = False
        self.last_sync: SyncReport | None = None
        self.notes: list[str] = []

    @classmethod
    def open(cls, dsn: str | None = None, *, workspace: str | None = None,
             settings: MemorySettings | None = None, embedder: EmbeddingProvider | None = None,
             **overrides: Any) -> PostgresMemory:
        """Settings merge as for :meth:`MemoryIndex.open` (arguments, environment, defaults);
        ``dsn`` defaults to ``store.dsn``, ``workspace`` to ``store.workspace_name``."""
        resolved, _ = load_settings(None, settings=settings, overrides=overrides)
        target = dsn or resolved.store.dsn
        if not target:
            raise ConfigError("the postgres backend needs a connection string: dsn=... or "
                              "store.dsn (OPENCLAW_MEMORY_STORE__DSN)")
        # "" is a name asked for (and refused), not "the default": opening the shared default
        # workspace by mistake would mix one tenant's notes into everyone's.
        name = resolved.store.workspace_name if workspace is None else workspace
        return cls(target, name, resolved, embedder=embedder)

    @property
    def provider(self) -> EmbeddingProvider | None:
        return self._provider

    def provider_choice(self) -> ProviderChoice:
        return self.choice

    def close(self) -> None:
        self.closed = True
        self.index.close()
        self.db.close()

    def __enter__(self) -> PostgresMemory:
        return self

    def on_session_start(self, session_key: str | None = None) -> bool:
        return False  # every write indexes itself: there is nothing to catch up on

    def write_problem(self) -> str | None:
        return None  # the database says so on the write itself, and the flush reports it

    def curated_name(self) -> str:
        return self._curated_path()

    def indexed_paths(self) -> set[str]:
        return set(self.paths())

    def documents(self) -> DatabaseSpace:
        return DatabaseSpace(self)

    def search_backend(self) -> PostgresIndex:
        return self.index

    # -- flush bookkeeping (status) -------------------------------------------------------------
    def record_flush(self, *, appended: int = 0) -> None:
        with self.db.transaction("cannot record the flush") as conn:
            bump_meta(self.tenant, conn, FLUSH_COUNT_KEY)
            set_meta(self.tenant, conn, FLUSH_AT_KEY, repr(time.time()))
            set_meta(self.tenant, conn, FLUSH_APPENDED_KEY, str(int(appended)))

    def record_flush_failure(self, error: str, *, gave_up: bool) -> None:
        detail = json.dumps({"at": time.time(), "error": error[:500], "gave_up": gave_up})
        with self.db.transaction("cannot record the flush failure") as conn:
            bump_meta(self.tenant, conn, FLUSH_FAILURES_KEY)
            set_meta(self.tenant, conn, FLUSH_ERROR_KEY, detail)

    def _flush_status(self) -> dict[str, Any]:
        meta = read_meta(self.tenant)
        try:
            error = json.loads(meta.get(FLUSH_ERROR_KEY, "null"))
        except ValueError:
            error = None
        return {
            "last_flush_at": float(meta[FLUSH_AT_KEY]) if FLUSH_AT_KEY in meta else None,
            "flush_count": int(meta.get(FLUSH_COUNT_KEY, 0)),
            "last_flush_appended": int(meta[FLUSH_APPENDED_KEY])
            if FLUSH_APPENDED_KEY in meta else None,
            "flush_failures": int(meta.get(FLUSH_FAILURES_KEY, 0)),
            "last_flush_error": error if isinstance(error, dict) else None,
        }

    # -- the index ----------------------------------------------------------------------------
    def sync(self, *, full: bool = False) -> SyncReport:
        """Keep the index right for this process's settings: rebuild every chunk when the
        model or chunking changed (or ``full``), embed chunks stored without a vector, and
        create the vector index of this model's width. Writes index their own documents."""
        started = time.monotonic()
        fingerprint = index_fingerprint(self.settings, self.provider)
        stored = self._fingerprint()
        rebuild = full or (stored is not None and stored != fingerprint)
        indexed = chunks = 0
        if rebuild:
            for path in sorted(self.indexer.hashes()):
                with self.db.transaction(f"cannot re-index {path}") as conn:
                    body = self.indexer.body(conn, path, lock=True)
                    if body is None:
                        continue
                    done = self.indexer.reindex(conn, path, body, reuse_vectors=False)
                indexed, chunks = indexed + 1, chunks + done.chunks
        if stored != fingerprint:
            self.tenant.rows(f"update {SCHEMA}.workspaces set fingerprint = %(f)s "
                             "where id = %(ws)s", {"f": fingerprint})
        backfilled = self._backfill()
        created = ensure_vector_index(self.db, self.tenant, self.settings.store.index_build_mb)
        if rebuild or backfilled or created or statistics_stale(self.tenant):
            analyze(self.db, self.tenant)  # a no-op sync stays cheap: ANALYZE samples the shared table
        self.index.forget_counts()
        warnings, self.indexer.warnings = tuple(self.indexer.warnings), []
        report = SyncReport(
            scanned=len(self.indexer.hashes()), indexed=indexed, chunks_added=chunks,
            full_rebuild=rebuild, rebuild_reason=("requested" if full else "settings changed")
            if rebuild else None, duration_s=time.monotonic() - started, warnings=warnings,
            vectors_backfilled=backfilled, vectors_pending=self._missing_vectors())
        self.last_sync = report
        return report

    def _fingerprint(self) -> str | None:
        rows = self.tenant.rows(f"select fingerprint from {SCHEMA}.workspaces where id = %(ws)s")
        return None if not rows or rows[0][0] is None else str(rows[0][0])

    def _backfill(self) -> int:
        if self.provider is None:
            return 0
        total = 0
        while True:
            with self.db.transaction("cannot embed missing vectors") as conn:
                done = self.indexer.backfill(conn, _BACKFILL_BATCH)
            total += done
            if done < _BACKFILL_BATCH:
                return total

    def _missing_vectors(self) -> int:
        if self.provider is None:
            return 0
        return int(self.tenant.rows(f"select count(*) from {SCHEMA}.chunks where "
                                    "workspace = %(ws)s and embedding is null")[0][0])

    # -- reading ------------------------------------------------------------------------------
    def search(self, query: str, *, max_results: int | None = None,
               min_score: float | None = None, sources: tuple[str, ...] | None = None,
               chat_type: ChatType = "direct",
               path_filter: Callable[[str], bool] | None = None,
               path_prefix: str | None = None, now: datetime | None = None,
               max_injected_chars: int | None = None) -> SearchResponse:
        """Hybrid search, as :meth:`MemoryIndex.search`. Never raises for query text."""
        s = self.settings.search
        citations = s.citations == "on" or (s.citations == "auto" and chat_type == "direct")
        scope = path_filter
        if chat_type != "direct":
            def scope(p: str) -> bool:
                return p not in _CURATED and (path_filter is None or path_filter(p))
        request = SearchRequest(
            query=query.strip(), max_results=max_results or s.max_results, min_score=min_score,
            sources=sources or ("memory",), citations=citations, now=now or datetime.now(UTC),
            path_filter=scope, path_prefix=path_prefix, max_injected_chars=max_injected_chars)
        with self.index.snapshot():
            outcome = run_search(self.index, self.provider, request, s)
        empty = None
        if not outcome.hits and not self.indexer.any():
            empty = (f"workspace {self.workspace_name!r} holds no documents yet: write notes, "
                     "or load a folder with `openclaw-memory publish`")
        return build_response(outcome, self.choice, self.provider,
                              vector_path=self.index.vector_path, citations=s.citations,
                              stale=False, empty_hint=empty)

    def get(self, path: str, from_line: int | None = None, lines: int | None = None, *,
            chat_type: ChatType = "direct") -> NoteText:
        """Lines of a document (a citation such as ``memory/x.md#L3-L5`` works too)."""
        path, from_line, lines = split_citation(path, from_line, lines)
        rel, kind = document_path(path)
        if chat_type != "direct" and kind in ("memory_md", "history"):
            raise OpenClawMemoryError("MEMORY.md and its history are private and not "
                                      "available in group chats")
        with self.db.transaction(f"cannot read {rel}") as conn:
            body = self.indexer.body(conn, rel)
        return note_text(rel, body, from_line, lines,
                         max_chars=self.settings.search.get_max_chars)

    def paths(self) -> list[str]:
        """Every document's path, sorted."""
        return sorted(self.indexer.hashes())

    def documents_bytes(self, path: str) -> bytes | None:
        """A document's bytes exactly as stored (None when there is none)."""
        rel, _ = document_path(path)
        with self.db.transaction(f"cannot read {rel}") as conn:
            return self.indexer.body(conn, rel)

    # -- writing ------------------------------------------------------------------------------
    def write(self, content: str, *, target: Literal["daily", "memory"] = "daily",
              now: datetime | None = None, area: str | None = None,
              chat_type: ChatType = "direct") -> WriteResult:
        """Append a note to today's daily document (or ``MEMORY.md``), indexed in the same
        transaction: searchable by every replica once this returns."""
        body = normalise_note(content)
        if target == "memory":  # a curated fact carries the day it was learned
            body = stamp_date(body, today(self.settings.timezone, now).isoformat())
        check = note_check(self, body, target=target, area=area, chat_type=chat_type)
        if check.same is not None:  # said already, word for word: cite it instead of a copy
            return duplicate_of(check.same)
        if target == "memory":
            path = f"{area}/MEMORY.md" if area is not None else self._curated_path()
        else:
            path = daily_note_path(self.settings.timezone, now, area or "memory")
        rel, _ = document_path(path)
        with self.db.transaction(f"cannot write {rel}") as conn:
            existing = self.indexer.lock_for_append(conn, rel)
            block, result = plan_append(existing, body, rel, self.settings.sync.max_file_bytes)
            if block is not None:
                self.indexer.put(conn, rel, existing + block)
        if block is not None:
            self.index.forget_counts()  # this workspace's term counts just moved
        return replace(result, related=check.related) if result.written else result

    def edit(self, citation: str, expected: str, replacement: str | None, *,
             reason: str | None = None, chat_type: ChatType = "direct",
             now: datetime | None = None) -> EditResult:
        """Replace or remove the lines ``citation`` names if they still hold ``expected``, in
        one transaction with the history entry (:mod:`openclaw_memory.postgres.curating`)."""
        path, start, end = edit_target(citation, chat_type)
        result = edit_document(self.db, self.indexer, self.settings, path, start, end,
                               expected=expected,
                               replacement=replacement, reason=reason, now=now)
        if result.applied:
            self.index.forget_counts()  # this workspace's term counts just moved
        return result

    def _curated_path(self) -> str:
        known = self.indexer.hashes()
        return "memory.md" if "memory.md" in known and "MEMORY.md" not in known else "MEMORY.md"

    def put_document(self, path: str, body: bytes) -> None:
        """Store a whole document (replacing it), indexed in the same transaction."""
        rel, _ = document_path(path)
        self._check_size(rel, body)
        with self.db.transaction(f"cannot write {rel}") as conn:
            self.indexer.lock_for_append(conn, rel)
            self.indexer.put(conn, rel, body)
        self.index.forget_counts()

    def delete_document(self, path: str) -> bool:
        rel, _ = document_path(path)
        with self.db.transaction(f"cannot delete {rel}") as conn:
            deleted = self.indexer.delete(conn, rel)
        self.index.forget_counts()
        return deleted

    def _check_size(self, rel: str, body: bytes) -> None:
        limit = self.settings.sync.max_file_bytes
        if len(body) > limit:
            raise OpenClawMemoryError(f"{rel} is {len(body):,} bytes, over the {limit:,}-byte "
                                      "limit of an indexed file; nothing was written")

    # -- folders ------------------------------------------------------------------------------
    def publish(self, folder: str | os.PathLike[str], *, mirror: bool = False) -> PublishReport:
        """Load a folder's memory files (``MEMORY.md``, ``memory/**/*.md``) into this workspace,
        incrementally: unchanged documents are left alone, changed ones replaced and
        re-indexed (vectors of unchanged text kept). ``mirror`` also deletes documents that
        are not in the folder; by default they stay (notes agents wrote meanwhile)."""
        ws = Workspace(Path(folder))
        if not ws.root.is_dir():
            raise WorkspaceError(f"{ws.root} is not a folder")
        found = ws.discover(max_file_bytes=self.settings.sync.max_file_bytes)
        known = self.indexer.hashes()
        unchanged = written = chunks = 0
        present = set()
        for file in found.files:
            data = ws.read_bytes(ws.resolve(file.path))
            if data is None:
                continue
            present.add(file.path)
            if known.get(file.path) == document_hash(data):
                unchanged += 1
                continue
            with self.db.transaction(f"cannot publish {file.path}") as conn:
                self.indexer.lock_for_append(conn, file.path)
                chunks += self.indexer.put(conn, file.path, data).chunks
            written += 1
        deleted = 0
        if mirror:
            for path in sorted(set(known) - present):
                deleted += int(self.delete_document(path))
        if written or deleted:
            analyze(self.db, self.tenant)
        self.index.forget_counts()
        skipped = tuple(f"{s.path}: {s.reason}" for s in found.skipped)
        return PublishReport(len(present), unchanged, written, deleted, chunks, skipped)

    def export(self, folder: str | os.PathLike[str]) -> int:
        """Write every document to ``folder`` under its path, byte for byte; files already
        there with other names are left alone. Returns how many were written."""
        root = Path(folder).expanduser()
        root.mkdir(parents=True, exist_ok=True)
        rows = self.tenant.rows(f"select path, body from {SCHEMA}.documents "
                                "where workspace = %(ws)s order by path")
        for path, body in rows:
            rel, _ = document_path(str(path))  # a row put there by hand is still gated
            target = root.joinpath(*rel.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.export-tmp")
            tmp.write_bytes(bytes(body))
            os.replace(tmp, target)
        return len(rows)

    # -- status -------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        counts = self.tenant.rows(
            f"select (select count(*) from {SCHEMA}.documents where workspace = %(ws)s), "
            f"count(*), count(embedding) from {SCHEMA}.chunks where workspace = %(ws)s")[0]
        provider = self._provider
        fingerprint = self._fingerprint()
        current = index_fingerprint(self.settings, provider)
        return {
            "backend": "postgres",
            "scope_denied": self.event_counts().get("scope_denied", 0),
            "paths_refused": self.event_counts().get("paths_refused", 0),
            "workspace": self.workspace_name,
            "schema_version": SCHEMA_VERSION,
            "files": int(counts[0]), "chunks": int(counts[1]), "vectors": int(counts[2]),
            "vector_path": self.index.vector_path,
            "provider": provider.id if provider else "none",
            "model": provider.model if provider else None,
            "mode": "hybrid" if provider is not None else "keyword-only",
            "provider_unavailable_reason": self.choice.unavailable_reason,
            "needs_rebuild": fingerprint is not None and fingerprint != current,
            "vectors_missing": self._missing_vectors(),
            **self._flush_status(),
        }
