"""The pre-compaction flush as ``create_agent`` middleware, and the summarizer's trigger.

List :class:`MemoryFlushMiddleware` **before** LangChain's ``SummarizationMiddleware``
(``before_model`` hooks run in list order, so the flush sees the history the summary is about
to replace). Given the summarizer, the flush counts tokens with its counter, reads the context
window from its model profile when none is configured, flushes at the latest in the step where
the summarizer fires (asking the summarizer itself when it can answer), and counts compactions
by noticing its summary messages. The flush logic is :class:`~openclaw_memory.langgraph.flush.
MemoryFlush`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from openclaw_memory.langchain.scope import MemoryScope
from openclaw_memory.langgraph._common import chat_model_of, context_window_of, current_run_config
from openclaw_memory.langgraph._optional import AgentMiddleware
from openclaw_memory.langgraph.flush import CompactionDue, MemoryFlush
from openclaw_memory.langgraph.state import MemoryAgentState
from openclaw_memory.memory_base import Memory

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

__all__ = ["MemoryFlushMiddleware"]

logger = logging.getLogger(__name__)


class MemoryFlushMiddleware(AgentMiddleware[MemoryAgentState, Any, Any]):
    """``create_agent`` middleware running the flush in ``before_model``.

    List it **before** ``SummarizationMiddleware`` (``before_model`` hooks run in list order,
    so the flush sees the history the summary is about to replace). The hook returns only the
    bookkeeping keys of :class:`~openclaw_memory.langgraph.MemoryAgentState`, never messages.
    ``model`` may be a chat model or a ``"provider:model"`` string. ``summarization``: the
    ``SummarizationMiddleware`` instance it precedes (see the module docstring).
    """

    state_schema = MemoryAgentState

    def __init__(self, index: Memory | MemoryScope, model: BaseChatModel | str, *,
                 summarization: Any = None, **options: Any) -> None:
        super().__init__()
        chat_model = chat_model_of(model)
        if summarization is not None:
            options.setdefault("token_counter", getattr(summarization, "token_counter", None))
            options.setdefault("context_window", context_window_of(getattr(summarization, "model", None)))
            options.setdefault("compaction_due", _summarization_due(summarization, chat_model))
        self.flush = MemoryFlush(index, chat_model, **options)

    def before_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        seen = _new_summary_update(state)
        update = self.flush.update({**state, **seen}, current_run_config(), runtime.context)
        return {**seen, **update} or None

    async def abefore_model(self, state: MemoryAgentState,
                            runtime: Runtime[Any]) -> dict[str, Any] | None:
        seen = _new_summary_update(state)
        update = await self.flush.aupdate({**state, **seen}, current_run_config(), runtime.context)
        return {**seen, **update} or None


def _new_summary_update(state: Mapping[str, Any]) -> dict[str, Any]:
    """Count a compaction done by ``SummarizationMiddleware`` (it keeps no counter itself).

    It puts one summary message (``lc_source == "summarization"``) first; a first message
    of that kind not seen before means a compaction happened since the last model call.
    """
    messages = state.get("messages") or []
    first = messages[0] if messages else None
    if first is None or first.additional_kwargs.get("lc_source") != "summarization" or not first.id:
        return {}
    if first.id == state.get("compaction_summary_id"):
        return {}
    return {"compaction_summary_id": first.id,
            "compaction_count": int(state.get("compaction_count", 0) or 0) + 1}


def _summarization_due(summarization: Any, model: BaseChatModel) -> CompactionDue | None:
    """Will ``SummarizationMiddleware`` compact these messages in this step?

    Asked of the summarizer itself when it can answer (its own trigger test, with its own
    counter, reported usage and model profile, and its cut-off: a trigger with nothing to cut
    compacts nothing), so the flush can never fall behind a summarizer that counts
    differently. Otherwise its public ``trigger`` is evaluated here the same way.
    """
    should = getattr(summarization, "_should_summarize", None)
    counter = getattr(summarization, "token_counter", None)
    cutoff = getattr(summarization, "_determine_cutoff_index", None)
    if callable(should) and callable(counter):

        def asked(messages: Sequence[BaseMessage], tokens: int) -> bool:
            try:
                if not should(list(messages), counter(messages)):
                    return False
                return not callable(cutoff) or cutoff(list(messages)) > 0
            except Exception:  # a changed private API: fall back to the public trigger
                logger.debug("summarizer's own trigger test failed", exc_info=True)
                return bool(mirrored and mirrored(messages, tokens))

        mirrored = _mirrored_trigger(summarization, model)
        return asked
    return _mirrored_trigger(summarization, model)


def _mirrored_trigger(summarization: Any, model: BaseChatModel) -> CompactionDue | None:
    """The summarizer's public ``trigger`` evaluated here (tokens: estimate or reported usage)."""
    clauses = _trigger_clauses(getattr(summarization, "trigger", None))
    if not clauses:
        return None
    window = context_window_of(getattr(summarization, "model", None)) or context_window_of(model)

    def due(messages: Sequence[BaseMessage], tokens: int) -> bool:
        return any(all(_clause_met(kind, value, messages, tokens, window)
                       for kind, value in clause.items()) for clause in clauses)

    return due


def _trigger_clauses(trigger: Any) -> list[dict[str, float]]:
    if trigger is None:
        return []
    if isinstance(trigger, Mapping):
        return [dict(trigger)]
    if isinstance(trigger, tuple) and len(trigger) == 2 and isinstance(trigger[0], str):
        return [{trigger[0]: trigger[1]}]
    if isinstance(trigger, list):
        return [c for item in trigger for c in _trigger_clauses(item)]
    return []


def _clause_met(kind: str, value: float, messages: Sequence[BaseMessage], tokens: int,
                window: int | None) -> bool:
    if kind == "messages":
        return len(messages) >= value
    if kind == "tokens":
        return tokens >= value
    if kind == "fraction":
        return window is not None and tokens >= max(1, int(window * value))
    return False
