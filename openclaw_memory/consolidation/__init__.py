"""Consolidation: what a chat model reads to keep ``MEMORY.md`` current, and how its proposal
becomes edits.

The model call itself lives with the other silent turns in
:mod:`openclaw_memory.langgraph.consolidation`; this package is model-free: the bounded
snapshot of the curated file and recent daily logs (:mod:`.snapshot`), the proposal's form,
its checks and its diff (:mod:`.proposal`), and applying it through the curation path
(concurrency check, history) of :mod:`openclaw_memory.files.curation` (:mod:`.applying`).
"""

from openclaw_memory.consolidation.applying import ConsolidationReport, apply_plan
from openclaw_memory.consolidation.proposal import (
    PROPOSAL_TOOL,
    Plan,
    PlannedEdit,
    ProposedEdit,
    ProposedEdits,
    plan_edits,
    proposal_tool_schema,
)
from openclaw_memory.consolidation.snapshot import Curator, Snapshot, take_snapshot

__all__ = [
    "PROPOSAL_TOOL",
    "ConsolidationReport",
    "Curator",
    "Plan",
    "PlannedEdit",
    "ProposedEdit",
    "ProposedEdits",
    "Snapshot",
    "apply_plan",
    "plan_edits",
    "proposal_tool_schema",
    "take_snapshot",
]
