"""``MemoryIndex.status()``: what is indexed, how search runs now, and why it may not answer.

Built from the index's parts through :class:`StatusSource` (what it reads of the facade), so
this module never imports the facade back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.factory import ProviderChoice, auto_reason
from openclaw_memory.files.workspace import Workspace
from openclaw_memory.freshness.activity import flush_status
from openclaw_memory.freshness.state import Freshness
from openclaw_memory.indexing.standby import Standby
from openclaw_memory.indexing.sync import LAST_SYNC_KEY, Syncer, index_fingerprint
from openclaw_memory.indexing.sync_report import file_warnings
from openclaw_memory.settings_sources import SettingsOrigin
from openclaw_memory.store import Store
from openclaw_memory.store.schema import FINGERPRINT_KEY

__all__ = ["StatusSource", "index_status"]


class StatusSource(Protocol):
    """What a status reads of an open index."""

    settings: MemorySettings
    settings_origin: SettingsOrigin
    workspace: Workspace
    index_path: Path
    store: Store
    freshness: Freshness
    notes: list[str]

    @property
    def provider(self) -> EmbeddingProvider | None: ...

    @property
    def synced_once(self) -> bool: ...

    def provider_choice(self) -> ProviderChoice: ...

    def workspace_is_empty(self) -> bool: ...

    def empty_hint(self) -> str: ...

    def event_counts(self) -> dict[str, int]: ...

    @property
    def standby(self) -> Standby: ...


def index_status(memory: StatusSource) -> dict[str, Any]:
    """Everything a person debugging "why no results?" needs, in one dictionary."""
    choice = memory.provider_choice()
    provider = memory.provider
    driver = memory.store.driver
    raw_last = memory.store.meta(LAST_SYNC_KEY)
    last: dict[str, Any] = json.loads(raw_last) if raw_last else {}
    syncer = Syncer(memory.settings, memory.workspace, provider)
    pending = syncer.pending(memory.store)
    keyword = memory.store.keyword_totals()
    drift = ([f"the keyword index counts {keyword.rows} rows for {keyword.chunks} chunks, "
              "so keyword scores differ from a fresh index's: run `openclaw-memory index "
              "--repair`"] if keyword.drift else [])
    return {
        "backend": "sqlite",  # as PostgresMemory's status says "postgres"
        "fallback_index": memory.standby.status(memory.provider_choice().provider),
        "scope_denied": memory.event_counts().get("scope_denied", 0),
        "paths_refused": memory.event_counts().get("paths_refused", 0),
        "workspace": str(memory.settings.workspace),
        "index_path": str(memory.index_path),
        **memory.store.counts(),
        "dirty": pending > 0 or (memory.freshness.dirty and memory.synced_once),
        "pending_files": pending,
        "last_sync_at": last.get("at"),
        "last_sync_duration_s": last.get("duration_s"),
        "vector_path": memory.store.vector_path,
        "vector_reason": memory.store.vector_reason,
        "keyword_path": memory.store.keyword_path(),
        "keyword_index": keyword.as_dict(),
        "sqlite_driver": driver.name,
        "sqlite_version": driver.sqlite_version,
        "sqlite_vec_version": driver.vec_version,
        "provider": provider.id if provider else "none",
        "model": provider.model if provider else None,
        **_mode(memory, choice),
        "vectors_missing": memory.store.missing_vectors() if provider is not None else 0,
        "provider_unavailable_reason": choice.unavailable_reason,
        "provider_reason": auto_reason(memory.settings.embedding,
                                       choice.provider.id if choice.provider else None),
        "embedding_endpoint": None if provider is None else getattr(
            provider, "provider", provider).breaker.state(),
        "fallback": choice.fallback,
        "skipped": last.get("skipped", []),
        "warnings": [*drift, *_with_file_warnings(last.get("warnings", []),
                                                  file_warnings(memory.store))],
        "notes": [*memory.notes, *([memory.empty_hint()] if memory.workspace_is_empty() and last
                                 else [])],
        **_activity_status(memory, syncer, pending),
        "configuration": memory.settings_origin.describe(memory.settings),
    }

def _mode(memory: StatusSource, choice: ProviderChoice) -> dict[str, Any]:
    """``mode`` as searches get it now (not as configured), and why when not hybrid."""
    provider = memory.provider
    if provider is None:
        return {"mode": "keyword-only",
                "mode_reason": choice.unavailable_reason or "no embedding provider configured"}
    stored = memory.store.meta(FINGERPRINT_KEY)
    if stored is not None and stored != index_fingerprint(memory.settings, provider):
        return {"mode": "keyword-only",
                "mode_reason": "the index was built with other settings; the next sync "
                               "rebuilds it for this provider"}
    counts = memory.store.counts()
    if counts.get("chunks") and not counts.get("vectors"):
        return {"mode": "keyword-only", "mode_reason": "the index holds no vectors yet"}
    return {"mode": "hybrid", "mode_reason": None}

def _activity_status(memory: StatusSource, syncer: Syncer, pending: int) -> dict[str, Any]:
    """Why the index is dirty, background sync and watcher state, transcripts, flushes."""
    extras = memory.freshness.status()
    if pending:
        extras["dirty_reasons"].insert(0, {
            "reason": f"{pending} file(s) on disk differ from the index", "since": None})
    # Lock-free on purpose: status must answer while a background sync holds the lock.
    extras["transcript_deltas"] = [d.as_dict() for d in syncer.pending_sessions(memory.store)]
    return {**extras, **flush_status(memory.store)}


def _with_file_warnings(last: list[str], kept: dict[str, list[str]]) -> list[str]:
    """The last sync's warnings plus those about files still indexed with a problem."""
    out = list(last)
    out += [f"{path}: {w}" for path, ws in sorted(kept.items()) for w in ws
            if f"{path}: {w}" not in out]
    return out
