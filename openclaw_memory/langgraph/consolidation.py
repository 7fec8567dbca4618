"""Consolidation: one silent model turn that keeps ``MEMORY.md`` current.

The chat model reads the curated file (with line numbers) and the daily logs of the last few
days (:mod:`openclaw_memory.consolidation.snapshot`, bounded in tokens) and answers with one
``propose_memory_edits`` call: durable facts to add, stale lines to update, duplicates to
drop. The proposal is checked against the lines the model read and applied through the
curation path (concurrency check, history of every replaced line); ``dry_run`` returns it as
a diff instead. A second run over the same files changes nothing: updates to the same words
and additions already present are dropped before anything is written.

Like the flush, the turn is silent (no callback of the user's, nothing in any stream, no
``messages`` in the state update) and never runs in group or channel chats. Three ways to
run it:

* on demand or on a schedule: ``MemoryConsolidation(index, model).run()`` (or
  ``openclaw-memory consolidate``);
* in a hand-built graph, right after the flush: ``flush -> consolidate -> compact``, with
  ``memory_consolidation_node(index, model)``; it runs once per compaction cycle, after that
  cycle's flush ran;
* with ``create_agent``: ``MemoryConsolidationMiddleware(index, model)`` listed after
  ``MemoryFlushMiddleware`` and before ``SummarizationMiddleware``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import ValidationError

from openclaw_memory.consolidation import (
    PROPOSAL_TOOL,
    ConsolidationReport,
    ProposedEdits,
    Snapshot,
    apply_plan,
    plan_edits,
    proposal_tool_schema,
    take_snapshot,
)
from openclaw_memory.errors import OpenClawMemoryError, StoreError
from openclaw_memory.files.notes import today
from openclaw_memory.langchain.scope import MemoryScope, ScopedMemory
from openclaw_memory.langgraph._common import (
    answer_args,
    bind_answer_tool,
    chat_model_of,
    current_run_config,
    model_error,
    settings_of,
    state_get,
)
from openclaw_memory.langgraph._optional import AgentMiddleware
from openclaw_memory.langgraph.scope import current_context, resolve_chat_type
from openclaw_memory.langgraph.silent import arun_silently, quiet, run_silently
from openclaw_memory.langgraph.state import MemoryAgentState
from openclaw_memory.memory_base import ChatType, Memory

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

__all__ = [
    "CONSOLIDATION_PROMPT",
    "CONSOLIDATION_RUN_NAME",
    "CONSOLIDATION_SYSTEM_PROMPT",
    "MemoryConsolidation",
    "MemoryConsolidationMiddleware",
    "memory_consolidation_node",
]

logger = logging.getLogger(__name__)

CONSOLIDATION_RUN_NAME = "memory_consolidation_turn"
CONSOLIDATION_SYSTEM_PROMPT = (
    "Silent memory consolidation. You keep the curated long-term memory file current: it "
    "holds durable facts, decisions and preferences, one per line, each dated '(as of "
    "YYYY-MM-DD)'. The user does not see this turn."
)
CONSOLIDATION_PROMPT = (
    "Below are the curated memory file, its lines numbered, and the recent daily logs. Answer "
    "with one call of propose_memory_edits:\n"
    "- update: a line a newer daily note contradicts (the person moved, changed jobs, a "
    "deadline moved, a decision was reversed). Give the lines ('L5') and the fact as it is "
    "now, saying in a few words what it replaces ('(before: Paris)'), ending with (as of "
    "<date of the note it comes from>).\n"
    "- add: a durable fact, decision or preference from the logs that the file lacks (not "
    "small talk, not one day's events).\n"
    "- remove: a line another line already says (keep the newer), or one no longer true and "
    "not replaced.\n"
    "Never edit a line the logs do not contradict; never drop a fact without a reason. If the "
    "file is already current, call propose_memory_edits with an empty list."
)


class MemoryConsolidation:
    """The consolidation logic, shared by the node, the middleware, the API and the CLI.

    ``days``: how many days of daily logs the model reads (today's included).
    ``max_input_tokens``: the most the snapshot may take (the oldest logs are left out
    first). ``max_edits``: the most edits one run applies. ``enabled=False`` turns the graph
    step off (``run`` still works).
    """

    def __init__(self, index: Memory | MemoryScope, model: BaseChatModel | str, *,
                 days: int | None = None, max_input_tokens: int | None = None,
                 max_edits: int | None = None, enabled: bool = True,
                 system_prompt: str | None = None, prompt: str | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        c = settings_of(index).consolidation  # consolidation.* in the file or environment
        self.scope = index if isinstance(index, MemoryScope) else None
        self._index = index if isinstance(index, Memory) else None
        self.model = chat_model_of(model)
        self.days = max(1, c.days if days is None else days)
        self.max_input_tokens = max(500, c.max_input_tokens if max_input_tokens is None
                                    else max_input_tokens)
        self.max_edits = max(1, c.max_edits if max_edits is None else max_edits)
        self.enabled = enabled
        self.system_prompt = system_prompt or CONSOLIDATION_SYSTEM_PROMPT
        self.prompt = prompt or CONSOLIDATION_PROMPT
        self.clock = clock or (lambda: datetime.now(UTC))

    def memory(self, config: RunnableConfig | None = None, context: Any = None) -> ScopedMemory:
        if self._index is not None:
            return ScopedMemory(self._index)
        assert self.scope is not None
        return self.scope.resolve(config, context)

    # -- one run ------------------------------------------------------------------------------
    def snapshot(self, target: ScopedMemory | None = None) -> Snapshot:
        """What the model would read now."""
        target = target or self.memory()
        with_sync(target)
        day = today(target.settings.timezone, self.clock())
        return take_snapshot(target, today=day, days=self.days, max_tokens=self.max_input_tokens)

    def run(self, *, dry_run: bool = False, chat_type: ChatType = "direct",
            target: ScopedMemory | None = None) -> ConsolidationReport:
        """Propose and (unless ``dry_run``) apply; a failing model call is reported in the
        result, never raised. Raises :class:`OpenClawMemoryError` outside direct chats."""
        target = self._checked(target, chat_type)
        snapshot = self.snapshot(target)
        if not snapshot.curated_lines and not snapshot.notes:
            return ConsolidationReport(None, dry_run=dry_run)
        proposal = run_silently(lambda s, config: self._propose(s, config), snapshot,
                                CONSOLIDATION_RUN_NAME)
        return self._finish(target, snapshot, proposal, dry_run)

    async def arun(self, *, dry_run: bool = False, chat_type: ChatType = "direct",
                   target: ScopedMemory | None = None) -> ConsolidationReport:
        target = self._checked(target, chat_type)
        snapshot = self.snapshot(target)
        if not snapshot.curated_lines and not snapshot.notes:
            return ConsolidationReport(None, dry_run=dry_run)
        proposal = await arun_silently(lambda s, config: self._apropose(s, config), snapshot,
                                       CONSOLIDATION_RUN_NAME)
        return self._finish(target, snapshot, proposal, dry_run)

    def _checked(self, target: ScopedMemory | None, chat_type: ChatType) -> ScopedMemory:
        if chat_type != "direct":
            raise OpenClawMemoryError("consolidation edits curated memory: it runs in direct "
                                      "chats only")
        return target or self.memory()

    def _messages(self, snapshot: Snapshot) -> list[BaseMessage]:
        return [SystemMessage(content=self.system_prompt),
                HumanMessage(content=f"{self.prompt}\n\n{snapshot.render()}")]

    def _bound(self) -> Runnable[Any, BaseMessage]:
        # quiet(): no handler of the user's sees the turn.
        bound: Runnable[Any, BaseMessage] = bind_answer_tool(
            quiet(self.model), proposal_tool_schema(), PROPOSAL_TOOL)
        return bound

    def _propose(self, snapshot: Snapshot, config: RunnableConfig) -> ProposedEdits | str:
        try:
            reply = self._bound().invoke(self._messages(snapshot), config)
        except Exception as exc:  # reported, never raised into the user's turn
            return model_error(self.model, exc)
        return parse_proposal(reply)

    async def _apropose(self, snapshot: Snapshot, config: RunnableConfig) -> ProposedEdits | str:
        try:
            reply = await self._bound().ainvoke(self._messages(snapshot), config)
        except Exception as exc:  # reported, never raised into the user's turn
            return model_error(self.model, exc)
        return parse_proposal(reply)

    def _finish(self, target: ScopedMemory, snapshot: Snapshot, proposal: ProposedEdits | str,
                dry_run: bool) -> ConsolidationReport:
        if isinstance(proposal, str):
            logger.warning("memory consolidation failed: %s", proposal)
            return ConsolidationReport(None, dry_run=dry_run, error=proposal)
        try:
            plan = plan_edits(snapshot, proposal, max_edits=self.max_edits)
            diff = plan.diff(snapshot)
            if dry_run:
                return ConsolidationReport(plan, diff, skipped=tuple(
                    f"{label}: {why}" for label, why in plan.rejected), dry_run=True)
            report = apply_plan(target, plan, diff=diff)
        except OpenClawMemoryError as exc:  # reported, never raised into the user's graph
            logger.warning("memory consolidation failed: %s", exc)
            return ConsolidationReport(None, dry_run=dry_run, error=str(exc))
        logger.info("memory consolidation: %d edit(s) applied, %d skipped",
                    len(report.applied), len(report.skipped))
        return report

    # -- as a graph step ----------------------------------------------------------------------
    def skip_reason(self, state: Any, chat_type: ChatType) -> str | None:
        if not self.enabled:
            return "disabled"
        if chat_type != "direct":
            return f"not in {chat_type} chats"
        cycle = int(state_get(state, "compaction_count", 0) or 0)
        if state_get(state, "memory_flush_compaction_count", None) != cycle:
            return "the flush has not run in this compaction cycle"
        if state_get(state, "memory_consolidation_compaction_count", None) == cycle:
            return "already consolidated in this compaction cycle"
        return None

    def update(self, state: Any, config: RunnableConfig | None = None,
               context: Any = None) -> dict[str, Any]:
        target = self._due(state, config, context)
        if target is None:
            return {}
        return self._bookkeeping(state, self.run(target=target))

    async def aupdate(self, state: Any, config: RunnableConfig | None = None,
                      context: Any = None) -> dict[str, Any]:
        target = self._due(state, config, context)
        if target is None:
            return {}
        return self._bookkeeping(state, await self.arun(target=target))

    def _due(self, state: Any, config: RunnableConfig | None, context: Any) -> ScopedMemory | None:
        """The run's memory when a consolidation is due in this step, else None."""
        reason = self.skip_reason(state, resolve_chat_type(config, context))
        if reason is not None:
            logger.debug("memory consolidation skipped: %s", reason)
            return None
        return self.memory(config, context)

    def _bookkeeping(self, state: Any, report: ConsolidationReport) -> dict[str, Any]:
        # A failed run is not retried in this cycle: the next cycle (or the CLI) tries again.
        return {"memory_consolidation_compaction_count": int(state_get(state, "compaction_count", 0) or 0),
                "memory_consolidation_at": self.clock().timestamp()}

    def as_node(self) -> Runnable[Any, dict[str, Any]]:
        """A LangGraph node (sync and async) running :meth:`update`."""

        def node(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return self.update(state, config, current_context())

        async def anode(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return await self.aupdate(state, config, current_context())

        return RunnableLambda(node, afunc=anode, name="memory_consolidation")


def with_sync(target: ScopedMemory) -> None:
    """Index what was written since the last sync, so today's logs are listed."""
    try:
        target.index.sync()
    except StoreError as exc:  # the files are the truth: the snapshot lists what is indexed
        logger.warning("memory consolidation: index not synced (%s)", exc)


def parse_proposal(reply: BaseMessage) -> ProposedEdits | str:
    """The proposal in a reply: its ``propose_memory_edits`` call, else JSON in its text (a
    model that ignored the tool), else no edits for an empty or ``NO_REPLY`` answer."""
    args = answer_args(reply, PROPOSAL_TOOL, "a proposal")
    if isinstance(args, str):
        return args
    try:
        return ProposedEdits.model_validate(args or {})
    except ValidationError as exc:
        return f"the model's proposal is not valid: {exc.error_count()} error(s), e.g. " \
               f"{exc.errors()[0]['msg']}"


def memory_consolidation_node(index: Memory | MemoryScope, model: BaseChatModel | str,
                              **options: Any) -> Runnable[Any, dict[str, Any]]:
    """``MemoryConsolidation(index, model, **options).as_node()``: put it right after the
    flush node (``flush -> consolidate -> compact``)."""
    return MemoryConsolidation(index, model, **options).as_node()


class MemoryConsolidationMiddleware(AgentMiddleware[MemoryAgentState, Any, Any]):
    """``create_agent`` middleware consolidating once per compaction cycle, right after the
    flush: list it after :class:`MemoryFlushMiddleware` (and before the summarizer)."""

    state_schema = MemoryAgentState

    def __init__(self, index: Memory | MemoryScope, model: BaseChatModel | str,
                 **options: Any) -> None:
        super().__init__()
        self.consolidation = MemoryConsolidation(index, model, **options)

    def before_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.consolidation.update(state, current_run_config(), runtime.context) or None

    async def abefore_model(self, state: MemoryAgentState,
                            runtime: Runtime[Any]) -> dict[str, Any] | None:
        return await self.consolidation.aupdate(state, current_run_config(),
                                                runtime.context) or None
