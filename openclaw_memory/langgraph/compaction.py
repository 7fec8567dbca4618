"""A small compaction step for hand-built graphs, paired with the memory flush.

When the token estimate reaches ``context_window - reserve_tokens_floor`` (the point the flush
threshold sits ``soft_threshold_tokens`` below), the older messages are summarised by a model
into one summary message; the ``keep_messages`` most recent ones stay as they are (moved back
so an assistant tool call never loses its tool results), and ``compaction_count`` goes up by
one, which opens a new flush cycle. Wire it right after the flush::

    flush = MemoryFlush(index, model, context_window=128_000)
    compact = Compaction(model, context_window=128_000)
    graph = StateGraph(MemoryGraphState)
    graph.add_node("flush", flush.as_node())
    graph.add_node("compact", compact.as_node())
    graph.add_edge(START, "flush")
    graph.add_edge("flush", "compact")
    graph.add_edge("compact", "agent")          # and "tools" -> "flush" to loop

Pass ``compaction_due=compact.due`` to ``MemoryFlush`` if the compaction trigger may sit below
the flush threshold. Give the compaction the flush too (``Compaction(model, flush=flush)``):
then a compaction never runs in a cycle whose flush has not run (or given up), whatever the
two count; the flush runs first, in the compaction step, when the flush step did not.
With ``create_agent`` use LangChain's ``SummarizationMiddleware`` instead,
listed after :class:`~openclaw_memory.langgraph.MemoryFlushMiddleware` (see ``flush.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from openclaw_memory.langgraph._common import (
    TokenCounter,
    context_window_of,
    default_token_counter,
    effective_tokens,
    message_text,
    settings_of,
    state_get,
    state_messages,
)
from openclaw_memory.langgraph.flush import DEFAULT_CONTEXT_WINDOW
from openclaw_memory.langgraph.scope import current_context
from openclaw_memory.langgraph.silent import arun_silently, quiet, run_silently
from openclaw_memory.memory_base import Memory

if TYPE_CHECKING:
    from openclaw_memory.langgraph.flush import MemoryFlush

__all__ = ["SUMMARY_PROMPT", "Compaction", "compaction_node", "split_for_compaction"]

logger = logging.getLogger(__name__)

SUMMARY_PROMPT = (
    "You write the running summary of a conversation between a user and an assistant, which "
    "replaces the older messages from now on. Keep what the assistant needs to carry on: the "
    "user's goals, decisions and their reasons, facts, names, dates and numbers, open questions "
    "and todos, and where the work stands. Drop greetings, small talk and repetition. If an "
    "earlier summary is included, fold it in. Write compact bullet points, no preamble."
)
SUMMARY_HEADER = "Summary of the earlier conversation (older messages were compacted):"
_MAX_LINE_CHARS = 2_000
#: An episode note is a summary, not a transcript.
_MAX_EPISODE_CHARS = 4_000


def split_for_compaction(messages: Sequence[BaseMessage],
                         keep: int) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """``(older, kept)``: the last ``keep`` messages are kept, moved back if needed so the
    kept part never starts with a tool result (its assistant tool call stays with it)."""
    cut = max(0, len(messages) - max(0, keep))
    while 0 < cut < len(messages) and isinstance(messages[cut], ToolMessage):
        cut -= 1
    return list(messages[:cut]), list(messages[cut:])


class Compaction:
    """Summarise older messages when the token estimate reaches the trigger.

    ``trigger_tokens`` defaults to ``context_window - reserve_tokens_floor``; ``context_window``
    to the model profile's ``max_input_tokens``, else 200 000. Use the same ``token_counter``
    as the flush. ``summary_role``: ``"human"`` (works with every provider) or ``"system"``.
    ``episodes``: a memory whose daily log receives each summary as a dated note (an episode:
    what the conversation covered, findable later); a failure to save it is logged, never
    raised into the turn.
    """

    def __init__(self, model: BaseChatModel, *, context_window: int | None = None,
                 reserve_tokens_floor: int | None = None, trigger_tokens: int | None = None,
                 keep_messages: int | None = None, token_counter: TokenCounter | None = None,
                 summary_prompt: str | None = None,
                 summary_role: Literal["human", "system"] | None = None,
                 flush: MemoryFlush | None = None, episodes: Memory | None = None) -> None:
        # Arguments left out come from compaction.* (the file, the environment), then defaults.
        settings = flush.settings if flush is not None else settings_of(episodes)
        c = settings.compaction
        self.model = model
        self.flush = flush
        self.episodes = episodes
        window = (context_window or settings.flush.context_window or context_window_of(model)
                  or DEFAULT_CONTEXT_WINDOW)
        floor = c.reserve_tokens_floor if reserve_tokens_floor is None else reserve_tokens_floor
        trigger = c.trigger_tokens if trigger_tokens is None else trigger_tokens
        self.trigger_tokens = trigger if trigger is not None else max(0, window - max(0, floor))
        self.keep_messages = max(0, c.keep_messages if keep_messages is None else keep_messages)
        self.token_counter: TokenCounter = token_counter or default_token_counter
        self.summary_prompt = summary_prompt or SUMMARY_PROMPT
        self.summary_role = c.summary_role if summary_role is None else summary_role

    def due(self, messages: Sequence[BaseMessage], tokens: int | None = None) -> bool:
        """Whether this step would compact ``messages`` (usable as the flush's ``compaction_due``)."""
        if self.trigger_tokens <= 0:
            return False
        count = effective_tokens(messages, self.token_counter) if tokens is None else tokens
        return count >= self.trigger_tokens and bool(split_for_compaction(messages,
                                                                         self.keep_messages)[0])

    def update(self, state: Any, config: RunnableConfig | None = None,
               context: Any = None) -> dict[str, Any]:
        messages = state_messages(state)
        if not self.due(messages):
            return {}
        flushed = self.flush.before_compaction(state, config, context) if self.flush else {}
        older, kept = split_for_compaction(messages, self.keep_messages)
        try:
            reply = run_silently(quiet(self.model).invoke, self._request(older),
                                 "memory_compaction")
        except Exception as exc:  # keep the turn going; the next step tries again
            logger.warning("compaction failed, will retry: %s", exc, exc_info=True)
            return flushed
        self._save_episode(message_text(reply))
        return {**flushed, **self._replace(state, message_text(reply), kept)}

    async def aupdate(self, state: Any, config: RunnableConfig | None = None,
                      context: Any = None) -> dict[str, Any]:
        messages = state_messages(state)
        if not self.due(messages):
            return {}
        flushed = await self.flush.abefore_compaction(state, config, context) if self.flush else {}
        older, kept = split_for_compaction(messages, self.keep_messages)
        try:
            reply = await arun_silently(quiet(self.model).ainvoke, self._request(older),
                                        "memory_compaction")
        except Exception as exc:  # keep the turn going; the next step tries again
            logger.warning("compaction failed, will retry: %s", exc, exc_info=True)
            return flushed
        await asyncio.to_thread(self._save_episode, message_text(reply))
        return {**flushed, **self._replace(state, message_text(reply), kept)}

    def _save_episode(self, summary: str) -> None:
        """The summary as a dated note in today's daily log (``episodes``)."""
        text = summary.strip()
        if self.episodes is None or not text:
            return
        if len(text) > _MAX_EPISODE_CHARS:
            text = text[:_MAX_EPISODE_CHARS].rsplit("\n", 1)[0] + "\n[...]"
        try:
            self.episodes.write(f"Episode (a conversation summarised at compaction):\n{text}")
        except Exception as exc:  # an episode is a bonus: the compaction goes on
            logger.warning("could not save the compaction summary as an episode: %s", exc)

    def as_node(self) -> Runnable[Any, dict[str, Any]]:
        """A LangGraph node (sync and async) running :meth:`update`."""

        def node(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return self.update(state, config, current_context())

        async def anode(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return await self.aupdate(state, config, current_context())

        return RunnableLambda(node, afunc=anode, name="compaction")

    def _request(self, older: Sequence[BaseMessage]) -> list[BaseMessage]:
        transcript = "\n".join(line for m in older if (line := _transcript_line(m)))
        return [SystemMessage(content=self.summary_prompt),
                HumanMessage(content=f"Conversation to summarise:\n\n{transcript}")]

    def _replace(self, state: Any, summary: str, kept: list[BaseMessage]) -> dict[str, Any]:
        text = f"{SUMMARY_HEADER}\n\n{summary.strip() or '(nothing to keep)'}"
        kind = SystemMessage if self.summary_role == "system" else HumanMessage
        marker = kind(content=text, additional_kwargs={"lc_source": "summarization"})
        count = int(state_get(state, "compaction_count", 0) or 0) + 1
        # Remove everything, then re-add summary + kept: the summary must come first, and
        # add_messages would append it at the end if only the older messages were removed.
        # A kept answer's reported usage measured the history before the compaction: left in
        # place it would make the next step look as full as this one (and flush again at once).
        fresh = [m.model_copy(update={"usage_metadata": None})
                 if isinstance(m, AIMessage) and m.usage_metadata else m for m in kept]
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), marker, *fresh],
                "compaction_count": count}


def compaction_node(model: BaseChatModel, **options: Any) -> Runnable[Any, dict[str, Any]]:
    """``Compaction(model, **options).as_node()``."""
    return Compaction(model, **options).as_node()


def _transcript_line(message: BaseMessage) -> str:
    text = message_text(message).strip()
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = "; ".join(f"{c['name']}({json.dumps(c['args'], ensure_ascii=False)})"
                          for c in message.tool_calls)
        text = f"{text} [called {calls}]".strip()
    if not text:
        return ""
    if len(text) > _MAX_LINE_CHARS:
        text = text[:_MAX_LINE_CHARS] + " [...]"
    if message.additional_kwargs.get("lc_source") == "summarization":
        return f"Earlier summary: {text}"
    role = {"human": "User", "ai": "Assistant", "tool": "Tool result", "system": "System"}
    return f"{role.get(message.type, message.type)}: {text}"
