"""State keys the flush and compaction steps share, for hand-built graphs and ``create_agent``."""

from __future__ import annotations

from typing import Any, NotRequired

from langgraph.graph import MessagesState

from openclaw_memory.langgraph._optional import AgentState

__all__ = ["MemoryAgentState", "MemoryGraphState"]


class MemoryGraphState(MessagesState, total=False):
    """``messages`` plus the per-session bookkeeping of the flush/compaction cycle.

    * ``compaction_count``: compactions so far (incremented by the compaction step).
    * ``memory_flush_compaction_count``: the ``compaction_count`` of the cycle whose flush has
      run; equal to ``compaction_count`` means "already flushed in this cycle".
    * ``memory_flush_at``: when the last flush ran (Unix time, seconds).
    * ``memory_flush_failures``, ``memory_flush_failure_cycle``, ``memory_flush_retry_at``:
      failed flush attempts in that cycle and when the next may run (bounded retries).
    * ``memory_consolidation_compaction_count``, ``memory_consolidation_at``: the cycle whose
      consolidation has run, and when.
    * ``memory_capture_last_id``: the last message auto-capture has read.
    """

    compaction_count: int
    memory_flush_compaction_count: int
    memory_flush_at: float
    memory_flush_failures: int
    memory_flush_failure_cycle: int
    memory_flush_retry_at: float
    memory_consolidation_compaction_count: int
    memory_consolidation_at: float
    memory_capture_last_id: str


class MemoryAgentState(AgentState[Any]):
    """The same keys for ``create_agent`` middleware, plus the last summary message seen.

    LangChain's ``SummarizationMiddleware`` does not count compactions; the flush middleware
    notices its new summary message (``compaction_summary_id``) and counts it instead.
    """

    compaction_count: NotRequired[int]
    memory_flush_compaction_count: NotRequired[int]
    memory_flush_at: NotRequired[float]
    memory_flush_failures: NotRequired[int]
    memory_flush_failure_cycle: NotRequired[int]
    memory_flush_retry_at: NotRequired[float]
    memory_consolidation_compaction_count: NotRequired[int]
    memory_consolidation_at: NotRequired[float]
    memory_capture_last_id: NotRequired[str]
    compaction_summary_id: NotRequired[str]
