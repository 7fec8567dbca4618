"""Incremental indexing and the safe full rebuild.

Unchanged files cost one ``stat`` (size + mtime match the ``files`` row); a changed stat costs a
read and a hash; only a changed hash re-chunks, and only chunk texts missing from the embedding
cache are embedded. Each file is swapped in one transaction, so a sync killed at any point
leaves whole files, and the next sync finishes the job. When anything that shapes the index
changes (the fingerprint), the index is rebuilt into a temporary database and copied over the
live one with SQLite's backup API, which replaces it in one step: readers see the old index or
the new one, never a mix, and an interrupted rebuild leaves the old index untouched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider, invalid_rows
from openclaw_memory.embeddings.cache import CachedProvider
from openclaw_memory.errors import EmbeddingError, OpenClawMemoryError, PathRefusedError
from openclaw_memory.files.reading import unicode_encoding
from openclaw_memory.files.workspace import Workspace
from openclaw_memory.indexing.batch import PendingWrite, WriteBatch
from openclaw_memory.indexing.chunking import blank_front_matter, chunk_text
from openclaw_memory.indexing.file_state import (
    is_racy,
    lstat_or_none,
    same_stat,
    stat_unchanged,
    unreadable_reason,
)
from openclaw_memory.indexing.file_text import decode_file, looks_binary
from openclaw_memory.indexing.rebuild_files import rebuild_path, remove_stale_rebuilds
from openclaw_memory.indexing.sync_report import (
    SyncPlan,
    count_indexed,
    count_unchanged,
    keep_file_warnings,
    to_report,
)
from openclaw_memory.indexing.tokens import encoding_id
from openclaw_memory.sessions.delta import SessionDelta, SessionState, anchor_of_bytes, is_due, measure_delta
from openclaw_memory.sessions.transcripts import flatten_transcript, indexable_prefix
from openclaw_memory.store import SCHEMA_VERSION, Store
from openclaw_memory.store.schema import FINGERPRINT_KEY
from openclaw_memory.types import Chunk, MemoryFile, SkippedFile, SyncReport

#: Why a file that is not text is not indexed.
BINARY = "binary content, not text"

__all__ = ["Progress", "SyncPlan", "Syncer", "index_fingerprint"]

Progress = Callable[[int, int, str], None]
LAST_SYNC_KEY = "last_sync"
#: Reads of one file per sync when it keeps changing between its read and its commit.
READ_ATTEMPTS = 3


def index_fingerprint(settings: MemorySettings, provider: EmbeddingProvider | None) -> str:
    """JSON of everything whose change makes existing rows wrong (never secrets)."""
    data = {
        "schema": SCHEMA_VERSION,
        "provider": provider.id if provider else "none",
        "model": provider.model if provider else "fts-only",
        "provider_key": provider.provider_key if provider else "none",
        "chunk_tokens": settings.chunking.tokens,
        "chunk_overlap": settings.chunking.overlap,
        "tokenizer": encoding_id(settings.chunking.encoding),
        "fts_tokenizer": settings.store.fts_tokenizer + "+cjk-split",
        "sources": sorted(["memory", "sessions"] if settings.sessions.enabled else ["memory"]),
        "extra_paths": sorted(str(p) for p in settings.extra_paths),
    }
    if settings.sessions.enabled:
        # Another agent's transcripts share index paths (sessions/<basename>) with this one's:
        # switching folders must rebuild, never leave one agent's rows under the other's name.
        data["sessions_dir"] = os.path.abspath(
            settings.sessions.resolved_directory(settings.workspace))
    return json.dumps(data, sort_keys=True)


#: Texts one Batch API job takes at most during a backfill (the service's limit is 50 000
#: requests per file; ours are requests of several texts each).
_BATCH_JOB_INPUTS = 50_000


class Syncer:
    """Brings one :class:`Store` in line with the files of one :class:`Workspace`."""

    def __init__(self, settings: MemorySettings, workspace: Workspace,
                 provider: EmbeddingProvider | None, *, defer_vectors: bool = False,
                 backfill_s: float | None = None,
                 vector_progress: Progress | None = None) -> None:
        """``defer_vectors``: index text and keywords only; the vectors are left missing
        and filled by later syncs (a very large workspace is searchable by keyword in
        minutes, its vectors follow). ``backfill_s``: time a sync may spend embedding
        missing vectors (at least one batch; None: all of them), reported to
        ``vector_progress`` as (done, total, "")."""
        self.settings = settings
        self.workspace = workspace
        self.provider = provider
        self.model = provider.model if provider else "fts-only"
        self.defer_vectors = defer_vectors
        # With the Batch API on, files are indexed text first and their vectors come from
        # one batch job for the whole backfill (backfill_vectors), not a request per file.
        self.batching = (provider is not None and settings.embedding.batch.enabled
                         and provider.id == "openai")
        self.backfill_s = backfill_s
        self.vector_progress = vector_progress

    # -- discovery --------------------------------------------------------------------------
    def _discover(self, plan: SyncPlan) -> list[MemoryFile]:
        limit = self.settings.sync.max_file_bytes
        found = self.workspace.discover(max_file_bytes=limit)
        files = list(found.files)
        plan.skipped.extend(found.skipped)
        if self.settings.sessions.enabled:
            sessions = self.workspace.discover_sessions(max_file_bytes=limit)
            files.extend(sessions.files)
            plan.skipped.extend(sessions.skipped)
        return files

    # -- one file ---------------------------------------------------------------------------
    def _chunks(self, file: MemoryFile, data: bytes, plan: SyncPlan) -> list[Chunk]:
        text = blank_front_matter(decode_file(data, file.path, plan))
        return chunk_text(text, path=file.path, source="memory", settings=self.settings.chunking)

    def _embed(self, chunks: Sequence[Chunk], plan: SyncPlan) -> np.ndarray[Any, Any] | None:
        if self.provider is None or not chunks:
            return None
        if self.defer_vectors or self.batching:
            plan.vectors_deferred += len(chunks)
            return None
        cached = self.provider if isinstance(self.provider, CachedProvider) else None
        hits, misses = (cached.hits, cached.misses) if cached else (0, 0)
        try:
            vectors = self.provider.embed_documents([c.text for c in chunks])
        except EmbeddingError as exc:
            # The text and keywords are indexed anyway: a note must be findable during an
            # outage. Its vectors are backfilled by a later sync (backfill_vectors).
            plan.vectors_missing += len(chunks)
            if not any(w.startswith("vectors unavailable") for w in plan.warnings):
                plan.warnings.append(f"vectors unavailable ({exc}); text indexed, vectors "
                                     "backfilled when the provider answers")
            return None
        if cached is not None:
            plan.embedded += cached.misses - misses
            plan.cache_hits += cached.hits - hits
        else:
            plan.embedded += len(chunks)
        rejected = int(invalid_rows(vectors).sum())
        if rejected:
            plan.vectors_rejected += rejected
            plan.vectors_missing += rejected
            plan.warnings.append(f"{rejected} vector(s) from {self.provider.id} were invalid (NaN, "
                                 "infinite or zero) and not stored; their text is indexed and "
                                 "they are asked for again at the next sync")
        return vectors

    def _read(self, file: MemoryFile, plan: SyncPlan) -> bytes | None:
        try:
            if file.source == "memory":
                # The same gate as memory_get: a symlink swapped in after discovery is refused.
                data = self.workspace.read_bytes(self.workspace.resolve(file.path))
                if data is None:
                    raise FileNotFoundError(file.path)
                return data
            fd = os.open(file.abs_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as handle:
                return handle.read(self.settings.sync.max_file_bytes + 1)
        except PathRefusedError:
            plan.skipped.append(SkippedFile(file.path, "refused by the path gate (symlink?)"))
        except OSError as exc:
            plan.skipped.append(SkippedFile(file.path, unreadable_reason(exc)))
        return None

    def _sync_file(self, store: Store, file: MemoryFile, known: Any, plan: SyncPlan,
                   states: dict[str, SessionState], batch: WriteBatch,
                   force_sessions: bool = False) -> None:
        if stat_unchanged(file, known, states) and not is_racy(file, known):
            plan.unchanged += 1
            return
        if file.source == "sessions":
            self._sync_transcript(store, file, known, plan, states.get(file.path), batch,
                                  force=force_sessions)
            return
        self._index_memory_file(store, file, known, plan, batch)

    def _index_memory_file(self, store: Store, file: MemoryFile, known: Any,
                           plan: SyncPlan, batch: WriteBatch, attempt: int = 1) -> None:
        """Read, chunk and embed one memory file, and queue its swap in ``batch``.

        The stat taken just before the read is recorded (never a later one: it could
        describe bytes newer than those indexed), and checked again once the write lock is
        held. If another process changed the file and indexed it meanwhile, the bytes read
        here are older than the rows in the index: nothing is written, and the file is read
        again (up to :data:`READ_ATTEMPTS` times).
        """
        try:
            before = os.lstat(file.abs_path)
        except OSError as exc:
            plan.skipped.append(SkippedFile(file.path, unreadable_reason(exc)))
            return
        read_at = time.time()  # before the read: see _racy
        data = self._read_checked(file, plan)
        if data is None:
            return
        file = replace(file, size=len(data), mtime_ns=before.st_mtime_ns)
        if looks_binary(data) and unicode_encoding(data[:4]) == "utf-8":
            plan.skipped.append(SkippedFile(file.path, BINARY))
            return
        file_hash = hashlib.sha256(data).hexdigest()
        if known is not None and known.hash == file_hash:  # a touched file: no re-chunking
            batch.add(PendingWrite(
                write=lambda conn: store.touch_file_rows(conn, file, read_at=read_at),
                done=lambda _: count_unchanged(plan), stale=lambda: None))
            return
        chunks = self._chunks(file, data, plan)
        vectors = self._embed(chunks, plan)

        def retry() -> None:
            if attempt >= READ_ATTEMPTS:
                plan.skipped.append(SkippedFile(file.path, "kept changing during sync"))
            else:
                self._index_memory_file(store, file, known, plan, batch, attempt + 1)

        batch.add(PendingWrite(
            write=lambda conn: store.replace_file_rows(
                conn, file, file_hash, chunks, vectors, self.model, read_at=read_at,
                guard=lambda: same_stat(lstat_or_none(file), before)),
            done=lambda result: count_indexed(plan, file.path, result),
            stale=retry, chunks=len(chunks)))

    def _read_checked(self, file: MemoryFile, plan: SyncPlan) -> bytes | None:
        data = self._read(file, plan)
        if data is not None and len(data) > self.settings.sync.max_file_bytes:
            plan.skipped.append(SkippedFile(file.path, "grew past the size limit during sync"))
            return None
        return data

    # -- session transcripts ----------------------------------------------------------------
    def _transcript_delta(self, file: MemoryFile, state: SessionState) -> SessionDelta:
        cfg = self.settings.sessions
        try:
            delta = measure_delta(file.abs_path, file.path, state)
        except OSError:
            # Due, so that the read that follows reports why the file cannot be read.
            return SessionDelta(file.path, 0, 0, due=True)
        return replace(delta, due=is_due(delta, delta_bytes=cfg.delta_bytes,
                                         delta_lines=cfg.delta_lines))

    def _sync_transcript(self, store: Store, file: MemoryFile, known: Any, plan: SyncPlan,
                         state: SessionState | None, batch: WriteBatch, *, force: bool) -> None:
        """Re-index a transcript when new, rewritten, forced or past a delta threshold."""
        if known is not None and state is not None and not force:
            delta = self._transcript_delta(file, state)
            if not delta.due:
                # No new bytes: only the mtime moved. The stat is not recorded, so that a
                # forced sync still re-reads it (a same-size edit the anchors cannot see).
                if delta.pending_bytes:
                    plan.sessions_deferred += 1
                else:
                    plan.unchanged += 1
                return
        data = self._read_checked(file, plan)
        if data is None:
            return
        file = replace(file, size=len(data))
        indexed = indexable_prefix(data)
        transcript = flatten_transcript(indexed)
        plan.malformed_lines += transcript.malformed
        if transcript.malformed:
            plan.warnings.append(f"{file.path}: {transcript.malformed} malformed lines skipped")
        session = SessionState(file.path, len(indexed), indexed.count(b"\n"),
                               transcript.malformed, anchor_of_bytes(indexed))
        if known is not None and known.hash == transcript.hash:
            batch.add(PendingWrite(write=lambda conn: store.touch_file_rows(conn, file, session),
                                   done=lambda _: count_unchanged(plan), stale=lambda: None))
            return
        chunks = chunk_text(transcript.text, path=file.path, source="sessions",
                            settings=self.settings.chunking, line_map=transcript.line_map)
        vectors = self._embed(chunks, plan)
        batch.add(PendingWrite(
            write=lambda conn: store.replace_file_rows(conn, file, transcript.hash, chunks,
                                                       vectors, self.model, session),
            done=lambda result: count_indexed(plan, None, result), stale=lambda: None,
            chunks=len(chunks)))

    def pending_sessions(self, store: Store) -> list[SessionDelta]:
        """Every transcript's delta since it was indexed, and whether the next sync takes it.

        For ``status``: ``[d.as_dict() for d in syncer.pending_sessions(store)]`` gives
        ``path, pending_bytes, pending_lines, new, rewritten, due, indexed_bytes,
        indexed_lines, malformed`` per transcript (empty when sessions are disabled).
        """
        if not self.settings.sessions.enabled:
            return []
        cfg = self.settings.sessions
        found = self.workspace.discover_sessions(max_file_bytes=self.settings.sync.max_file_bytes)
        known = store.files("sessions")
        states = store.session_states()
        out = []
        for file in found.files:
            state = states.get(file.path) if file.path in known else None
            try:
                delta = measure_delta(file.abs_path, file.path, state)
            except OSError:
                continue  # vanished or unreadable: the sync reports it as skipped
            out.append(replace(delta, due=is_due(delta, delta_bytes=cfg.delta_bytes,
                                                 delta_lines=cfg.delta_lines)))
        return out

    # -- whole passes -----------------------------------------------------------------------
    def sync_into(self, store: Store, plan: SyncPlan, progress: Progress | None = None, *,
                  force_sessions: bool = False) -> None:
        files = self._discover(plan)
        known = store.files()
        states = store.session_states()
        plan.scanned = len(files)
        batch = WriteBatch(store)
        for i, file in enumerate(files, 1):
            self._sync_file(store, file, known.get(file.path), plan, states, batch,
                            force_sessions)
            if progress is not None:
                progress(i, len(files), file.path)
        batch.finish()
        present = {f.path for f in files}
        keep_file_warnings(store, plan, present)
        # A skipped file keeps its old rows: a transient read error must not erase memory. A
        # file that became binary is no note any more: it leaves the index, as a fresh build
        # would not hold it.
        binary = {s.path for s in plan.skipped if s.reason == BINARY}
        skipped = {s.path for s in plan.skipped} - binary
        gone = [p for p in known if (p not in present and p not in skipped) or p in binary]
        plan.chunks_removed += store.delete_files(gone)
        plan.deleted += len(gone)
        self.backfill_vectors(store, plan)
        plan.vectors_pending = store.missing_vectors() if self.provider is not None else 0
        if self.settings.embedding.cache_max_entries:
            store.prune_cache(self.settings.embedding.cache_max_entries)
        store.settle_vector_index()

    def backfill_vectors(self, store: Store, plan: SyncPlan, batch: int = 256) -> None:
        """Embed chunks whose vectors are missing (deferred, or a provider outage), until
        none are left, the provider fails or ``backfill_s`` has passed. Each batch commits
        on its own, so an interrupted backfill resumes where it stopped."""
        if self.provider is None or plan.vectors_missing or self.defer_vectors:
            return  # keyword-only, the provider failed in this very pass, or asked to wait
        started = time.monotonic()
        total = store.missing_vectors()
        while True:
            if self.backfill_s is not None and plan.vectors_backfilled and \
                    time.monotonic() - started >= self.backfill_s:
                return
            rows = store.chunks_without_vectors(_BATCH_JOB_INPUTS if self.batching else batch)
            if not rows:
                return
            try:
                vectors = self.provider.embed_documents([text for _, text in rows])
            except EmbeddingError as exc:
                plan.warnings.append(f"vectors still unavailable ({exc}); "
                                     f"{store.missing_vectors()} chunk(s) keyword-only for now")
                return
            good = ~invalid_rows(vectors)
            done = store.set_vectors([r for (r, _), ok in zip(rows, good, strict=True) if ok],
                                     vectors[good])
            plan.vectors_backfilled += done
            if self.vector_progress is not None:
                self.vector_progress(min(plan.vectors_backfilled, total), total, "")
            if done < len(rows):
                return  # invalid vectors, or rows changed under us: the next sync goes on

    def sync(self, store: Store, *, full: bool = False, progress: Progress | None = None,
             force_sessions: bool = False) -> SyncReport:
        """Incremental sync, or a safe rebuild when forced or the fingerprint changed.

        Transcripts already indexed wait for their delta thresholds unless ``force_sessions``
        (every changed transcript is re-read; unchanged content is still not re-embedded). A
        rebuild, hence ``full`` and the first sync, indexes every transcript (backfill).
        """
        started = time.perf_counter()
        plan = SyncPlan()
        store.check_keyword_index()  # damage that only shows on use: found here, not by users
        # A killed rebuild's copy of the index is removed by whatever sync runs next, not only
        # by the next rebuild (which may never come).
        self._remove_leftovers(store, plan)
        fingerprint = index_fingerprint(self.settings, self.provider)
        stored = store.meta(FINGERPRINT_KEY)
        empty = not store.files()
        reason = None
        if full:
            reason = "full reindex requested"
        elif stored is None and not empty:
            reason = "index has no fingerprint"
        elif stored is not None and stored != fingerprint:
            reason = "index settings changed: " + _diff(stored, fingerprint)
        if reason is None:
            if stored is None:
                store.set_meta({FINGERPRINT_KEY: fingerprint})
            self.sync_into(store, plan, progress, force_sessions=force_sessions)
        else:
            self._rebuild(store, plan, fingerprint, progress)
        report = to_report(plan, time.perf_counter() - started, reason)
        # Not a change of the index: a sync that found nothing to do must not void the
        # postings, term counts and vectors every reader keeps for the generation.
        store.set_meta({LAST_SYNC_KEY: json.dumps({"at": time.time(), **report.as_dict()})},
                       bump=False)
        return report

    def pending(self, store: Store) -> int:
        """Files whose stat differs from the index (new, changed or deleted): a dry run."""
        plan = SyncPlan()
        files = self._discover(plan)
        known = store.files()
        states = store.session_states()
        changed = sum(1 for f in files if not stat_unchanged(f, known.get(f.path), states)
                      and not self._deferred(f, known.get(f.path), states))
        present = {f.path for f in files}
        return changed + sum(1 for p in known if p not in present)

    @staticmethod
    def _remove_leftovers(store: Store, plan: SyncPlan) -> None:
        leftovers = remove_stale_rebuilds(store.path)
        if leftovers:
            plan.warnings.append(f"removed {len(leftovers)} leftover file(s) of an interrupted "
                                 f"rebuild: {', '.join(sorted(leftovers))}")

    def _rebuild(self, store: Store, plan: SyncPlan, fingerprint: str,
                 progress: Progress | None) -> None:
        tmp = rebuild_path(store.path)
        # The same page size as the live index: the backup that swaps the rebuilt index in
        # cannot change it while the live one is in WAL mode (indexes from before 16 KB pages).
        fresh = Store(tmp, vector_backend=self.settings.store.vector_backend,
                      fts_tokenizer=self.settings.store.fts_tokenizer,
                      page_size=store.page_size(), keyword_backend="fts5")
        try:
            fresh.copy_cache_from(store.path)
            if isinstance(self.provider, CachedProvider):
                self.provider.backend = fresh  # cache lookups hit the seeded copy
            fresh.set_meta({FINGERPRINT_KEY: fingerprint})
            self.sync_into(fresh, plan, progress)  # prunes the seeded cache too
            store.replace_with(fresh)
        finally:
            if isinstance(self.provider, CachedProvider):
                self.provider.backend = store
            fresh.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{tmp}{suffix}")


    def _deferred(self, file: MemoryFile, known: Any, states: dict[str, SessionState]) -> bool:
        """A changed transcript that the next sync leaves alone (below its thresholds)."""
        state = states.get(file.path)
        if file.source != "sessions" or known is None or state is None:
            return False
        return not self._transcript_delta(file, state).due


def _diff(old: str, new: str) -> str:
    try:
        a, b = json.loads(old), json.loads(new)
    except ValueError:
        return "unreadable fingerprint"
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return ", ".join(changed) or "fingerprint"


def ensure_not_inside_memory(index_path: Path, workspace: Path,
                             extra_paths: Sequence[Path] = ()) -> None:
    """Refuse an index path among the memory sources (``MEMORY.md``, ``memory.md``,
    ``memory/``, extra paths): it would overwrite a note, or be indexed as one."""
    target = index_path.resolve()
    root = workspace.resolve()
    sources = [root / "memory", *(Path(p).expanduser().resolve() for p in extra_paths)]
    if target in (root / "MEMORY.md", root / "memory.md") or target.suffix == ".md":
        raise OpenClawMemoryError(f"refusing {index_path} as the index: it is (or would be) a "
                                  "memory file; choose a path outside the memory sources")
    for source in sources:
        if target == source or source in target.parents:
            raise OpenClawMemoryError(f"the index must not live inside {source}")
