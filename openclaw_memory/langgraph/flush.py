"""Pre-compaction memory flush: one silent turn that saves durable notes before compaction.

When the session's token estimate reaches ``context_window - reserve_tokens_floor -
soft_threshold_tokens`` (or the compaction step is about to run anyway), and no flush has run
in the current compaction cycle, the model gets one extra turn, with our own system and user
prompt, to store decisions, facts and todos in today's daily log through ``memory_write``
(restricted by the tool to today's daily file; appends only; identical notes are refused by
the engine). It may read memory first. A reply of exactly ``NO_REPLY`` ends the turn.

Nothing of that turn reaches the user: its model and tool calls run with no callbacks and the
``nostream`` tag (so ``stream_mode="messages"`` and UI handlers never see a token), and the
step returns only the bookkeeping keys, never ``messages``.

Two ways to use it:

* a hand-built ``StateGraph``: ``graph.add_node("flush", memory_flush_node(index, model))``
  placed right before the compaction node (``flush -> compact -> agent``);
* ``create_agent``: ``MemoryFlushMiddleware(index, model, summarization=summarizer)`` listed
  **before** LangChain's ``SummarizationMiddleware``::

      summarizer = SummarizationMiddleware(model, trigger=("tokens", 100_000))
      agent = create_agent(model, tools=memory_tools(index), middleware=[
          MemoryFlushMiddleware(index, model, summarization=summarizer), summarizer])

  Given the summarizer, the flush counts tokens with its counter, reads the context window
  from its model profile when none is configured, flushes at the latest in the step where the
  summarizer fires, and counts compactions by noticing its summary messages.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.notes import daily_note_path, today
from openclaw_memory.langchain._common import CitationMode
from openclaw_memory.langchain.scope import MemoryScope, ScopedMemory
from openclaw_memory.langchain.tools import memory_tools
from openclaw_memory.langgraph._common import (
    TokenCounter,
    context_window_of,
    default_token_counter,
    effective_tokens,
    message_text,
    model_error,
    settings_of,
    state_get,
    state_messages,
    without_dangling_tool_calls,
)
from openclaw_memory.langgraph.failures import FailureKind, classify_failure
from openclaw_memory.langgraph.flush_tools import acall_tool, call_tool
from openclaw_memory.langgraph.scope import current_context, resolve_chat_type
from openclaw_memory.langgraph.silent import arun_silently, quiet, run_silently
from openclaw_memory.memory_base import ChatType, Memory

if TYPE_CHECKING:
    pass

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "FLUSH_PROMPT",
    "FLUSH_RUN_NAME",
    "FLUSH_SYSTEM_PROMPT",
    "NO_REPLY",
    "RESERVE_TOKENS_FLOOR",
    "SOFT_THRESHOLD_TOKENS",
    "CompactionDue",
    "FlushReport",
    "MemoryFlush",
    "flush_threshold",
    "is_silent_reply",
    "memory_flush_node",
]

logger = logging.getLogger(__name__)

NO_REPLY = "NO_REPLY"
DEFAULT_CONTEXT_WINDOW = 200_000
RESERVE_TOKENS_FLOOR = 20_000
SOFT_THRESHOLD_TOKENS = 4_000
_OVERFLOW_HALVINGS = 2
# The memory of the run a flush step serves (set around each step: threads and tasks of
# concurrent runs each see their own).
_TARGET: contextvars.ContextVar[ScopedMemory | None] = contextvars.ContextVar(
    "openclaw_memory_flush_target", default=None)
FLUSH_RUN_NAME = "memory_flush_turn"
"""Name of the flush turn's (internal, traced-only) run; the graph step is ``memory_flush``."""
CompactionDue = Callable[[Sequence[BaseMessage], int], bool]
"""``(messages, token_estimate) -> bool``: will the compaction step run on these messages?"""

FLUSH_SYSTEM_PROMPT = (
    "Silent memory checkpoint. This conversation is about to be compacted: its older "
    "messages will be replaced by a short summary, and whatever has not been written to the "
    "memory files will be lost. The user does not see this turn; its only purpose is to "
    "save what should outlive the conversation."
)
FLUSH_PROMPT = (
    "Compaction is near. Go through the conversation above and save what will matter later: "
    "decisions and their reasons, facts about the user, people or the project, preferences, "
    "commitments, deadlines and open todos. Skip small talk and anything already saved.\n"
    "- Save each item with memory_write (target 'daily'): one short, self-contained note per "
    "call, with names, dates and numbers written out. Notes go to today's log, {path}.\n"
    "- Notes are only ever appended: nothing you write replaces or edits an existing note, and "
    "no other file (MEMORY.md included) can be written in this turn. If unsure whether "
    "something is already saved, check with memory_search or memory_get first.\n"
    "- When you are done, or if nothing is worth saving, reply with exactly NO_REPLY and "
    "nothing else."
)
_NO_REPLY_HINT = "When nothing (more) needs saving, reply with exactly NO_REPLY."


def flush_threshold(context_window: int, reserve_tokens_floor: int = RESERVE_TOKENS_FLOOR,
                    soft_threshold_tokens: int = SOFT_THRESHOLD_TOKENS) -> int:
    """Token estimate at which the flush runs; 0 (never) when the window is too small."""
    return max(0, context_window - max(0, reserve_tokens_floor) - max(0, soft_threshold_tokens))


def is_silent_reply(text: str) -> bool:
    """True for a reply that is exactly ``NO_REPLY`` once surrounding whitespace is trimmed."""
    return text.strip() == NO_REPLY


@dataclass(frozen=True, slots=True)
class FlushReport:
    """What one flush turn did (logged; returned by :meth:`MemoryFlush.run`)."""

    rounds: int
    """Model calls made."""
    writes: tuple[Mapping[str, Any], ...]
    """``memory_write`` results: path, start_line, end_line, written, reason."""
    reply: str
    """The model's last text: ``NO_REPLY`` normally; never shown to anyone."""
    error: str | None = None
    """Why the turn failed (a model call raised), or None."""
    failure: FailureKind | None = None
    """``retryable`` (5xx, 429, network), ``context_overflow`` or ``final`` (other 4xx)."""

    @property
    def silent(self) -> bool:
        return is_silent_reply(self.reply)

    @property
    def appended(self) -> int:
        return sum(1 for w in self.writes if w.get("written"))


class MemoryFlush:
    """The flush logic, shared by :func:`memory_flush_node` and :class:`MemoryFlushMiddleware`.

    ``model`` must support ``bind_tools``. ``context_window``: configured value, else the
    model profile's ``max_input_tokens``, else 200 000. ``token_counter`` must be the one the
    compaction step uses (default: LangChain's approximate counter). ``compaction_due`` lets the
    flush also run when the compaction step will fire in this step whatever the threshold
    says (e.g. a message-count trigger), so a compaction never comes unannounced.
    ``read_only=True`` turns the flush off (e.g. a sandbox without write access).
    ``allow_edit=True`` also offers ``memory_edit`` (correct ``MEMORY.md`` lines), in direct
    chats only; by default the flush only appends to today's log.

    A failing turn never fails the user's turn. A passing failure (5xx, 429, network) is
    retried at later steps of the same compaction cycle after ``retry_base_seconds``, doubling,
    ``max_attempts`` times in all; a final one (other 4xx) is not retried; a context-length
    failure is retried at once on the later half of the history. A turn whose notes were
    written before it failed is not redone (its notes would be written again). Failures show
    in ``status`` (``flush_failures``, ``last_flush_error``).
    """

    def __init__(self, index: Memory | MemoryScope, model: BaseChatModel, *,
                 context_window: int | None = None,
                 reserve_tokens_floor: int | None = None,
                 soft_threshold_tokens: int | None = None,
                 token_counter: TokenCounter | None = None, max_tool_rounds: int | None = None,
                 compaction_due: CompactionDue | None = None, enabled: bool | None = None,
                 read_only: bool = False, citations: CitationMode | None = None,
                 system_prompt: str | None = None, prompt: str | None = None,
                 clock: Callable[[], datetime] | None = None, max_attempts: int | None = None,
                 retry_base_seconds: float | None = None, retry_max_seconds: float | None = None,
                 allow_edit: bool | None = None) -> None:
        # Arguments left out come from the settings (flush.* in openclaw-memory.toml or
        # OPENCLAW_MEMORY_FLUSH__*), then the defaults.
        self.settings = settings_of(index)
        f = self.settings.flush
        self.allow_edit = f.allow_edit if allow_edit is None else allow_edit
        # A scope resolves per run (whose memory the notes go to); an index is every run's.
        self.scope = index if isinstance(index, MemoryScope) else None
        self._index = index if isinstance(index, Memory) else None
        self.model = model
        self.context_window = (context_window or f.context_window or context_window_of(model)
                               or DEFAULT_CONTEXT_WINDOW)
        self.threshold = flush_threshold(
            self.context_window,
            f.reserve_tokens_floor if reserve_tokens_floor is None else reserve_tokens_floor,
            f.soft_threshold_tokens if soft_threshold_tokens is None else soft_threshold_tokens)
        self.token_counter: TokenCounter = token_counter or default_token_counter
        self.max_tool_rounds = max(1, f.max_tool_rounds if max_tool_rounds is None
                                   else max_tool_rounds)
        self.compaction_due = compaction_due
        self.enabled = f.enabled if enabled is None else enabled
        self.read_only = read_only
        self.citations = citations
        self.system_prompt = system_prompt or FLUSH_SYSTEM_PROMPT
        self.prompt = _with_no_reply_hint(prompt) if prompt else FLUSH_PROMPT
        self.clock = clock or (lambda: datetime.now(UTC))
        self.max_attempts = max(1, f.max_attempts if max_attempts is None else max_attempts)
        self.retry_base_seconds = max(0.0, f.retry_base_seconds if retry_base_seconds is None
                                      else retry_base_seconds)
        self.retry_max_seconds = max(self.retry_base_seconds, f.retry_max_seconds
                                     if retry_max_seconds is None else retry_max_seconds)

    # -- whose memory -------------------------------------------------------------------------
    @property
    def memory(self) -> ScopedMemory:
        """The memory this flush writes to: the run's (set around each step), else the index's."""
        current = _TARGET.get()
        if current is not None:
            return current
        if self._index is not None:
            return ScopedMemory(self._index)
        assert self.scope is not None
        return self.scope.resolve(None, current_context())

    @property
    def index(self) -> Memory:
        return self.memory.index

    @contextlib.contextmanager
    def _for_run(self, config: RunnableConfig | None, context: Any) -> Iterator[None]:
        target = (self.scope.resolve(config, context) if self.scope is not None
                  else ScopedMemory(self._index) if self._index is not None else None)
        token = _TARGET.set(target)
        try:
            yield
        finally:
            _TARGET.reset(token)

    # -- deciding -----------------------------------------------------------------------------
    def skip_reason(self, state: Any) -> str | None:
        """Why no flush should run now, or None when one is due."""
        if not self.enabled:
            return "disabled"
        cycle = int(state_get(state, "compaction_count", 0) or 0)
        if state_get(state, "memory_flush_compaction_count", None) == cycle:
            return "already flushed in this compaction cycle"
        messages = state_messages(state)
        tokens = effective_tokens(messages, self.token_counter)
        crossed = self.threshold > 0 and tokens >= self.threshold
        if not crossed and not (self.compaction_due and self.compaction_due(messages, tokens)):
            return f"below threshold ({tokens} < {self.threshold} tokens)"
        return self._workspace_problem()

    def _workspace_problem(self) -> str | None:
        if self.read_only:
            return "workspace is read-only (configured)"
        return self.index.write_problem()

    # -- the silent turn ----------------------------------------------------------------------
    def run(self, messages: Sequence[BaseMessage], *, chat_type: ChatType = "direct") -> FlushReport:
        """Run the flush turn on ``messages`` now (no threshold check); never raises for a
        failing model: the report says what failed. A context-length failure is retried at
        once on the later half of the history (twice at most)."""
        tools = self._tools(chat_type)
        history = list(messages)
        for _ in range(_OVERFLOW_HALVINGS + 1):
            report = run_silently(lambda h, config: self._attempt(tools, h, config), history,
                                  FLUSH_RUN_NAME)
            if not self._shorter_retry(report, history):
                return report
            history = history[len(history) // 2:]
        return report

    async def arun(self, messages: Sequence[BaseMessage], *,
                   chat_type: ChatType = "direct") -> FlushReport:
        tools = self._tools(chat_type)
        history = list(messages)
        for _ in range(_OVERFLOW_HALVINGS + 1):
            report = await arun_silently(
                lambda h, config: self._aattempt(tools, h, config), history, FLUSH_RUN_NAME)
            if not self._shorter_retry(report, history):
                return report
            history = history[len(history) // 2:]
        return report

    def _attempt(self, tools: list[BaseTool], history: list[BaseMessage],
                 config: RunnableConfig) -> FlushReport:
        turn = self._turn(history)
        writes: list[Mapping[str, Any]] = []
        model = quiet(self.model).bind_tools(tools)  # no handler of the user's sees it
        for rounds in range(1, self.max_tool_rounds + 2):
            try:
                reply = model.invoke(turn, config)
            except Exception as exc:  # reported, never raised into the user's turn
                return _failed(rounds, writes, exc, self.model)
            if not isinstance(reply, AIMessage) or not reply.tool_calls or rounds > self.max_tool_rounds:
                return FlushReport(rounds, tuple(writes), message_text(reply))
            turn.append(reply)
            turn.extend(call_tool(tools, call, config, writes) for call in reply.tool_calls)
        raise AssertionError("unreachable: the loop always returns")

    async def _aattempt(self, tools: list[BaseTool], history: list[BaseMessage],
                        config: RunnableConfig) -> FlushReport:
        turn = self._turn(history)
        writes: list[Mapping[str, Any]] = []
        model = quiet(self.model).bind_tools(tools)  # no handler of the user's sees it
        for rounds in range(1, self.max_tool_rounds + 2):
            try:
                reply = await model.ainvoke(turn, config)
            except Exception as exc:  # reported, never raised into the user's turn
                return _failed(rounds, writes, exc, self.model)
            if not isinstance(reply, AIMessage) or not reply.tool_calls or rounds > self.max_tool_rounds:
                return FlushReport(rounds, tuple(writes), message_text(reply))
            turn.append(reply)
            for call in reply.tool_calls:
                turn.append(await acall_tool(tools, call, config, writes))
        raise AssertionError("unreachable: the loop always returns")

    @staticmethod
    def _shorter_retry(report: FlushReport, history: list[BaseMessage]) -> bool:
        return report.failure == "context_overflow" and not report.writes and len(history) > 2

    def _tools(self, chat_type: ChatType) -> list[BaseTool]:
        # The write tool itself refuses anything but today's daily log: a prompt is not a fence.
        tools = memory_tools(self.memory, citations=self.citations, chat_type=chat_type,
                             allow_write=True, write_target_restriction="daily")
        if self.allow_edit:  # opted in: the flush may also correct curated lines
            tools += [t for t in memory_tools(self.memory, citations=self.citations,
                                              chat_type=chat_type) if t.name == "memory_edit"]
        return tools

    def _turn(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        history = [m for m in without_dangling_tool_calls(messages)
                   if not isinstance(m, SystemMessage)]
        return [SystemMessage(content=self.system_prompt), *history,
                HumanMessage(content=self._prompt_text())]

    def _prompt_text(self) -> str:
        tz = self.index.settings.timezone
        now = self.clock()
        day = today(tz, now).isoformat()
        path = daily_note_path(tz, now, self.memory.area or "memory")
        text = self.prompt.replace("{path}", path).replace("YYYY-MM-DD", day)
        if "Current time:" not in text:
            local = now.astimezone(ZoneInfo(tz) if tz else None)
            text += f"\nCurrent time: {local:%Y-%m-%d %H:%M} ({tz or local.tzname() or 'local'})."
        return text

    # -- as a graph step ----------------------------------------------------------------------
    def update(self, state: Any, config: RunnableConfig | None = None,
               context: Any = None) -> dict[str, Any]:
        """The state update of a flush step: bookkeeping keys only, ``{}`` when nothing ran."""
        with self._for_run(config, context):
            if self._skipped(state):
                return {}
            report = self.run(state_messages(state), chat_type=resolve_chat_type(config, context))
            return self._outcome(state, report)

    async def aupdate(self, state: Any, config: RunnableConfig | None = None,
                      context: Any = None) -> dict[str, Any]:
        with self._for_run(config, context):
            if self._skipped(state):
                return {}
            report = await self.arun(state_messages(state),
                                     chat_type=resolve_chat_type(config, context))
            return self._outcome(state, report)

    def before_compaction(self, state: Any, config: RunnableConfig | None = None,
                          context: Any = None) -> dict[str, Any]:
        """Flush now, whatever the threshold or a backoff says, unless this cycle's flush ran
        (or gave up): the compaction about to run is the last chance."""
        with self._for_run(config, context):
            if self._last_chance_skip(state):
                return {}
            report = self.run(state_messages(state), chat_type=resolve_chat_type(config, context))
            return self._final_outcome(state, report)

    async def abefore_compaction(self, state: Any, config: RunnableConfig | None = None,
                                 context: Any = None) -> dict[str, Any]:
        with self._for_run(config, context):
            if self._last_chance_skip(state):
                return {}
            report = await self.arun(state_messages(state),
                                     chat_type=resolve_chat_type(config, context))
            return self._final_outcome(state, report)

    def _last_chance_skip(self, state: Any) -> bool:
        if not self.enabled or state_get(state, "memory_flush_compaction_count", None) == _cycle(state):
            return True
        return self._workspace_problem() is not None

    def _final_outcome(self, state: Any, report: FlushReport) -> dict[str, Any]:
        update = self._outcome(state, report)
        # No later step of this cycle will come: a retry would happen after the compaction.
        update["memory_flush_compaction_count"] = _cycle(state)
        return update

    def _skipped(self, state: Any) -> bool:
        reason = self.skip_reason(state) or self._backing_off(state)
        if reason is not None:
            logger.debug("memory flush skipped: %s", reason)
        return reason is not None

    def _backing_off(self, state: Any) -> str | None:
        if state_get(state, "memory_flush_failure_cycle", None) != _cycle(state):
            return None
        retry_at = float(state_get(state, "memory_flush_retry_at", 0) or 0)
        wait = retry_at - self.clock().timestamp()
        return f"backing off after a failed flush ({wait:.1f} s left)" if wait > 0 else None

    def _outcome(self, state: Any, report: FlushReport) -> dict[str, Any]:
        """Done, retried later with backoff, or given up for this cycle; the turn goes on."""
        if report.error is None:
            return self._done(state, report)
        if report.writes:
            # Its notes landed: redoing the turn would write them again (maybe reworded).
            self._record_failure(report, gave_up=False, why="its notes were saved; not redone")
            return self._done(state, report)
        failures = 1 + (int(state_get(state, "memory_flush_failures", 0) or 0)
                        if state_get(state, "memory_flush_failure_cycle", None) == _cycle(state)
                        else 0)
        if report.failure != "retryable" or failures >= self.max_attempts:
            self._record_failure(report, gave_up=True, why=f"gave up after {failures} attempt(s)")
            return {"memory_flush_compaction_count": _cycle(state),
                    "memory_flush_failures": failures, "memory_flush_failure_cycle": _cycle(state)}
        delay = min(self.retry_max_seconds, self.retry_base_seconds * 2 ** (failures - 1))
        self._record_failure(report, gave_up=False, why=f"retry in {delay:.0f} s")
        return {"memory_flush_failures": failures, "memory_flush_failure_cycle": _cycle(state),
                "memory_flush_retry_at": self.clock().timestamp() + delay}

    def _record_failure(self, report: FlushReport, *, gave_up: bool, why: str) -> None:
        logger.warning("memory flush failed (%s): %s; %s", report.failure, report.error, why)
        try:  # for `status`; bookkeeping must never fail the user's turn
            self.index.record_flush_failure(f"{report.error} ({why})", gave_up=gave_up)
        except OpenClawMemoryError as exc:
            logger.warning("could not record the failed memory flush in the index: %s", exc)

    def _done(self, state: Any, report: FlushReport) -> dict[str, Any]:
        logger.info("memory flush: %d note(s) appended, %d model call(s), silent=%s",
                    report.appended, report.rounds, report.silent)
        try:  # for `status`; bookkeeping must never fail the user's turn
            self.index.record_flush(appended=report.appended)
        except OpenClawMemoryError as exc:
            logger.warning("could not record the memory flush in the index: %s", exc)
        return {"memory_flush_at": self.clock().timestamp(),
                "memory_flush_compaction_count": _cycle(state)}

    def as_node(self) -> Runnable[Any, dict[str, Any]]:
        """A LangGraph node (sync and async) running :meth:`update`."""

        def node(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return self.update(state, config, current_context())

        async def anode(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return await self.aupdate(state, config, current_context())

        return RunnableLambda(node, afunc=anode, name="memory_flush")


def memory_flush_node(index: Memory | MemoryScope, model: BaseChatModel,
                      **options: Any) -> Runnable[Any, dict[str, Any]]:
    """``MemoryFlush(index, model, **options).as_node()``: put it right before compaction.

    The graph state needs the keys of :class:`~openclaw_memory.langgraph.MemoryGraphState`.
    """
    return MemoryFlush(index, model, **options).as_node()


def _cycle(state: Any) -> int:
    return int(state_get(state, "compaction_count", 0) or 0)


def _failed(rounds: int, writes: list[Mapping[str, Any]], error: BaseException,
            model: Any) -> FlushReport:
    # Redacted: the report reaches status (last_flush_error) and the WARNING log.
    return FlushReport(rounds, tuple(writes), "", error=model_error(model, error),
                       failure=classify_failure(error))


def _with_no_reply_hint(prompt: str) -> str:
    text = prompt.strip()
    return text if NO_REPLY in text else f"{text}\n\n{_NO_REPLY_HINT}"
