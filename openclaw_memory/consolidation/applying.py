"""Applying a consolidation plan through the curation path, and what it did.

Updates and removals go through :meth:`Memory.edit` (the concurrency check against the text
the model read, the history of what was replaced), last lines first so that the line numbers
of the earlier ones still hold; additions are appended through ``write`` (dated, and checked
for notes saying the same in other words). An edit whose lines changed since the snapshot is
a conflict: nothing of it is written, the rest of the plan still applies, and a later run
sees the new text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openclaw_memory.consolidation.proposal import Plan
from openclaw_memory.consolidation.snapshot import Curator
from openclaw_memory.errors import OpenClawMemoryError

__all__ = ["ConsolidationReport", "apply_plan"]


@dataclass(frozen=True, slots=True)
class ConsolidationReport:
    """What one consolidation run proposed and did."""

    plan: Plan | None
    diff: str = ""
    applied: tuple[str, ...] = ()
    """One line per edit written: ``updated MEMORY.md#L5``, ``added MEMORY.md#L40``."""
    skipped: tuple[str, ...] = ()
    """Proposed edits not written, each with why (a conflict, a duplicate, a failed check)."""
    dry_run: bool = False
    error: str | None = None
    """Why the run failed (the model call, a file that cannot be read), or None."""
    history: tuple[str, ...] = field(default=())
    """Where each replaced or removed text was kept (``memory-history/...#L..``)."""

    @property
    def changed(self) -> bool:
        return bool(self.applied)

    @property
    def over_limit(self) -> int:
        """Proposed edits left for a next run by the per-run limit (run again to apply them)."""
        return 0 if self.plan is None else sum(
            1 for _label, why in self.plan.rejected if why.startswith("over the limit"))


def apply_plan(curator: Curator, plan: Plan, *, diff: str = "") -> ConsolidationReport:
    applied: list[str] = []
    skipped = [f"{label}: {why}" for label, why in plan.rejected]
    history: list[str] = []
    edits = sorted((e for e in plan.edits if e.action != "add"), key=lambda e: -e.start)
    for edit in edits:
        citation = edit.citation(plan.path)
        try:
            result = curator.edit(citation, edit.expected, edit.text, reason=edit.reason or None,
                                  chat_type="direct")
        except OpenClawMemoryError as exc:
            skipped.append(f"{edit.action} {citation}: {exc}")
            continue
        if not result.applied:
            skipped.append(f"{edit.action} {citation}: the lines changed since they were read "
                           "(nothing written; the next run sees the new text)")
            continue
        applied.append(f"{'updated' if edit.action == 'update' else 'removed'} {citation}")
        if result.history:
            history.append(result.history)
    for edit in plan.edits:
        if edit.action != "add" or edit.text is None:
            continue
        try:
            written = curator.write(edit.text, target="memory")
        except OpenClawMemoryError as exc:
            skipped.append(f"add {edit.text!r}: {exc}")
            continue
        if written.written:
            applied.append(f"added {written.path}#L{written.start_line}")
        else:
            skipped.append(f"add {edit.text!r}: already said at {written.path}#L{written.start_line}")
    return ConsolidationReport(plan, diff, tuple(applied), tuple(skipped), history=tuple(history))
