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
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .chunking import blank_front_matter, chunk_text
from .config import MemorySettings
from .embeddings.base import EmbeddingProvider
from .embeddings.cache import CachedProvider
from .errors import OpenClawMemoryError, PathRefusedError
from .sessions import flatten_transcript
from .store import SCHEMA_VERSION, Store
from .tokens import encoding_id
from .types import Chunk, MemoryFile, SkippedFile, SyncReport
from .workspace import Workspace

__all__ = ["Progress", "SyncPlan", "Syncer", "index_fingerprint"]

Progress = Callable[[int, int, str], None]
FINGERPRINT_KEY = "fingerprint"
LAST_SYNC_KEY = "last_sync"


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
    return json.dumps(data, sort_keys=True)


@dataclass
class SyncPlan:
    """Counters filled while syncing; frozen into a :class:`SyncReport` at the end."""

    scanned: int = 0
    unchanged: int = 0
    indexed: int = 0
    deleted: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0
    cache_hits: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _decode(data: bytes, path: str, plan: SyncPlan) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        plan.warnings.append(f"{path}: invalid UTF-8, indexed with replacement characters")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\x00" in text:
        # SQLite text and FTS5 stop at NUL; keep line numbers by replacing, not removing.
        text = text.replace("\x00", "\ufffd")
        plan.warnings.append(f"{path}: NUL bytes replaced for indexing")
    return text


class Syncer:
    """Brings one :class:`Store` in line with the files of one :class:`Workspace`."""

    def __init__(self, settings: MemorySettings, workspace: Workspace,
                 provider: EmbeddingProvider | None) -> None:
        self.settings = settings
        self.workspace = workspace
        self.provider = provider
        self.model = provider.model if provider else "fts-only"

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
    def _chunks(self, file: MemoryFile, data: bytes, plan: SyncPlan) -> tuple[str, list[Chunk]]:
        chunking = self.settings.chunking
        if file.source == "sessions":
            transcript = flatten_transcript(data)
            if transcript.malformed:
                plan.warnings.append(f"{file.path}: {transcript.malformed} malformed lines skipped")
            return transcript.hash, chunk_text(transcript.text, path=file.path, source="sessions",
                                               settings=chunking, line_map=transcript.line_map)
        text = blank_front_matter(_decode(data, file.path, plan))
        file_hash = hashlib.sha256(data).hexdigest()
        return file_hash, chunk_text(text, path=file.path, source="memory", settings=chunking)

    def _embed(self, chunks: Sequence[Chunk], plan: SyncPlan) -> np.ndarray[Any, Any] | None:
        if self.provider is None or not chunks:
            return None
        cached = self.provider if isinstance(self.provider, CachedProvider) else None
        hits, misses = (cached.hits, cached.misses) if cached else (0, 0)
        vectors = self.provider.embed_documents([c.text for c in chunks])
        if cached is not None:
            plan.embedded += cached.misses - misses
            plan.cache_hits += cached.hits - hits
        else:
            plan.embedded += len(chunks)
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
        except FileNotFoundError:
            plan.skipped.append(SkippedFile(file.path, "vanished during sync"))
        except PathRefusedError:
            plan.skipped.append(SkippedFile(file.path, "refused by the path gate (symlink?)"))
        except OSError as exc:
            plan.skipped.append(SkippedFile(file.path, f"unreadable: {exc.strerror or exc}"))
        return None

    def _sync_file(self, store: Store, file: MemoryFile, known: Any, plan: SyncPlan) -> None:
        if known is not None and known.size == file.size and known.mtime_ns == file.mtime_ns:
            plan.unchanged += 1
            return
        data = self._read(file, plan)
        if data is None:
            return
        if len(data) > self.settings.sync.max_file_bytes:
            plan.skipped.append(SkippedFile(file.path, "grew past the size limit during sync"))
            return
        file = replace(file, size=len(data))
        file_hash, chunks = self._chunks(file, data, plan)
        if known is not None and known.hash == file_hash:
            store.touch_file(file)
            plan.unchanged += 1
            return
        vectors = self._embed(chunks, plan)
        removed, added = store.replace_file(file, file_hash, chunks, vectors, self.model)
        plan.indexed += 1
        plan.chunks_removed += removed
        plan.chunks_added += added

    # -- whole passes -----------------------------------------------------------------------
    def sync_into(self, store: Store, plan: SyncPlan, progress: Progress | None = None) -> None:
        files = self._discover(plan)
        known = store.files()
        plan.scanned = len(files)
        for i, file in enumerate(files, 1):
            self._sync_file(store, file, known.get(file.path), plan)
            if progress is not None:
                progress(i, len(files), file.path)
        present = {f.path for f in files}
        # A skipped file keeps its old rows: a transient read error must not erase memory.
        skipped = {s.path for s in plan.skipped}
        gone = [p for p in known if p not in present and p not in skipped]
        plan.chunks_removed += store.delete_files(gone)
        plan.deleted += len(gone)

    def sync(self, store: Store, *, full: bool = False, progress: Progress | None = None,
             ) -> SyncReport:
        """Incremental sync, or a safe rebuild when forced or the fingerprint changed."""
        started = time.perf_counter()
        plan = SyncPlan()
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
            self.sync_into(store, plan, progress)
        else:
            self._rebuild(store, plan, fingerprint, progress)
        report = _report(plan, time.perf_counter() - started, reason)
        store.set_meta({LAST_SYNC_KEY: json.dumps({"at": time.time(), **report.as_dict()})})
        return report

    def pending(self, store: Store) -> int:
        """Files whose stat differs from the index (new, changed or deleted): a dry run."""
        plan = SyncPlan()
        files = self._discover(plan)
        known = store.files()
        changed = sum(1 for f in files if (row := known.get(f.path)) is None
                      or (row.size, row.mtime_ns) != (f.size, f.mtime_ns))
        present = {f.path for f in files}
        return changed + sum(1 for p in known if p not in present)

    def _rebuild(self, store: Store, plan: SyncPlan, fingerprint: str,
                 progress: Progress | None) -> None:
        tmp = store.path.with_name(f"{store.path.name}.rebuild-{uuid.uuid4().hex[:8]}")
        fresh = Store(tmp, vector_backend=self.settings.store.vector_backend,
                      fts_tokenizer=self.settings.store.fts_tokenizer)
        try:
            fresh.copy_cache_from(store.path)
            if isinstance(self.provider, CachedProvider):
                self.provider.backend = fresh  # cache lookups hit the seeded copy
            fresh.set_meta({FINGERPRINT_KEY: fingerprint})
            self.sync_into(fresh, plan, progress)
            if self.settings.embedding.cache_max_entries:
                fresh.prune_cache(self.settings.embedding.cache_max_entries)
            store.replace_with(fresh)
        finally:
            if isinstance(self.provider, CachedProvider):
                self.provider.backend = store
            fresh.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{tmp}{suffix}")


def _diff(old: str, new: str) -> str:
    try:
        a, b = json.loads(old), json.loads(new)
    except ValueError:
        return "unreadable fingerprint"
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return ", ".join(changed) or "fingerprint"


def _report(plan: SyncPlan, duration: float, reason: str | None) -> SyncReport:
    return SyncReport(
        scanned=plan.scanned, unchanged=plan.unchanged, indexed=plan.indexed,
        deleted=plan.deleted, chunks_added=plan.chunks_added,
        chunks_removed=plan.chunks_removed, embedded=plan.embedded, cache_hits=plan.cache_hits,
        full_rebuild=reason is not None, rebuild_reason=reason, duration_s=duration,
        skipped=tuple(plan.skipped), warnings=tuple(plan.warnings))


def ensure_not_inside_memory(index_path: Path, workspace: Path) -> None:
    """Refuse an index path inside ``memory/``: it would be discovered as memory."""
    try:
        index_path.resolve().relative_to((workspace / "memory").resolve())
    except ValueError:
        return
    raise OpenClawMemoryError(f"the index must not live inside {workspace / 'memory'}")
