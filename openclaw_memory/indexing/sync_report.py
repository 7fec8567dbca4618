"""What one sync did: the counters filled while syncing (:class:`SyncPlan`), frozen into a
:class:`~openclaw_memory.types.SyncReport` at the end, and the warnings about files' content
kept in the index's meta for as long as a file is indexed with them (``status``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

from openclaw_memory.store import Store
from openclaw_memory.types import SkippedFile, SyncReport

__all__ = ["FILE_WARNINGS_KEY", "SyncPlan", "count_indexed", "count_unchanged", "file_warnings",
           "keep_file_warnings", "to_report"]

FILE_WARNINGS_KEY = "file_warnings"


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
    sessions_deferred: int = 0
    malformed_lines: int = 0
    vectors_missing: int = 0
    vectors_backfilled: int = 0
    vectors_rejected: int = 0
    vectors_deferred: int = 0
    vectors_pending: int = 0
    reindexed: set[str] = field(default_factory=set)
    file_warnings: dict[str, list[str]] = field(default_factory=dict)

    def warn_file(self, path: str, warning: str) -> None:
        """A warning about one file's content: reported now, and kept (FILE_WARNINGS_KEY) for
        as long as the file is indexed with it, so `status` does not forget it next sync."""
        self.warnings.append(f"{path}: {warning}")
        self.file_warnings.setdefault(path, []).append(warning)


def count_unchanged(plan: SyncPlan) -> None:
    plan.unchanged += 1


def count_indexed(plan: SyncPlan, path: str | None, result: tuple[int, int]) -> None:
    """A file's rows committed: ``path`` is recorded as re-indexed (memory files only)."""
    removed, added = result
    plan.indexed += 1
    plan.chunks_removed += removed
    plan.chunks_added += added
    if path is not None:
        plan.reindexed.add(path)


def keep_file_warnings(store: Store, plan: SyncPlan, present: set[str]) -> None:
    before = file_warnings(store)
    kept = {p: w for p, w in before.items() if p in present and p not in plan.reindexed}
    kept.update({p: w for p, w in plan.file_warnings.items() if p in plan.reindexed})
    if kept != before:  # a write bumps the index generation: only when something changed
        store.set_meta({FILE_WARNINGS_KEY: json.dumps(kept, sort_keys=True)})


def file_warnings(store: Store) -> dict[str, list[str]]:
    """Warnings about the content of files as they are indexed now (``status``)."""
    try:
        value = json.loads(store.meta(FILE_WARNINGS_KEY) or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def to_report(plan: SyncPlan, duration: float, reason: str | None) -> SyncReport:
    # Every counter of the plan is a field of the report under the same name.
    counts = {f.name: getattr(plan, f.name) for f in fields(plan)
              if f.name not in ("reindexed", "file_warnings")}
    counts.update(skipped=tuple(plan.skipped), warnings=tuple(plan.warnings))
    return SyncReport(**counts, full_rebuild=reason is not None, rebuild_reason=reason,
                      duration_s=duration)
