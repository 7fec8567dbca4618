"""Auto-capture (optional, off unless added): after an agent run, one silent model turn saves
durable facts and preferences from the last turns to today's daily log.

The model reads the turns since the last capture (at most ``last_turns`` user turns) and
answers with one ``capture_memories`` call listing short notes. Each goes through
``memory_write``'s path: today's daily log only (appended, never an edit), and skipped only
when memory already says it word for word (search/restatements.py).
The turn is silent like the flush: no callback of the user's, nothing in any stream, only a
bookkeeping key in the state (``memory_capture_last_id``: where the next capture starts). By
default it runs in direct chats only (``chat_types``): what people say in a group is theirs.

* ``create_agent``: ``MemoryCaptureMiddleware(index, model)`` (an ``after_agent`` hook);
* a hand-built graph: ``memory_capture_node(index, model)`` after the agent's last step.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, Field, ValidationError

from openclaw_memory.consolidation.answer_tool import answer_tool
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.langchain.scope import MemoryScope, ScopedMemory
from openclaw_memory.langgraph._common import (
    bind_answer_tool,
    chat_model_of,
    current_run_config,
    message_text,
    model_error,
    settings_of,
    state_get,
    state_messages,
)
from openclaw_memory.langgraph._optional import AgentMiddleware
from openclaw_memory.langgraph.scope import current_context, resolve_chat_type
from openclaw_memory.langgraph.silent import arun_silently, quiet, run_silently
from openclaw_memory.langgraph.state import MemoryAgentState
from openclaw_memory.memory_base import ChatType, Memory

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

__all__ = [
    "CAPTURE_PROMPT",
    "CAPTURE_RUN_NAME",
    "CAPTURE_SYSTEM_PROMPT",
    "CAPTURE_TOOL",
    "CaptureReport",
    "MemoryCapture",
    "MemoryCaptureMiddleware",
    "memory_capture_node",
]

logger = logging.getLogger(__name__)

CAPTURE_TOOL = "capture_memories"
CAPTURE_RUN_NAME = "memory_capture_turn"
CAPTURE_SYSTEM_PROMPT = (
    "Silent memory capture. You read the last turns of a conversation and pick out what is "
    "worth remembering in later conversations. The user does not see this turn."
)
CAPTURE_PROMPT = (
    "From the conversation above, list the durable facts and preferences worth remembering: "
    "about the user, people and projects (preferences, decisions, commitments, deadlines, "
    "changes such as a move or a new job). Skip small talk, questions, one-off requests and "
    "anything the assistant said that the user did not confirm. One short, self-contained note "
    "each, with names, dates and numbers written out. Call capture_memories with the list "
    "(an empty list when nothing is worth keeping)."
)


class CapturedNotes(BaseModel):
    """Durable notes from the last turns; an empty list when there is nothing to keep."""

    notes: list[str] = Field(default_factory=list, description="one short self-contained note each")


def _tool_schema() -> dict[str, Any]:
    return answer_tool(CAPTURE_TOOL, "Save durable facts and preferences from the last turns "
                       "(an empty list when there are none).", CapturedNotes)


@dataclass(frozen=True, slots=True)
class CaptureReport:
    """What one capture did."""

    written: tuple[str, ...] = ()
    """Citations of the notes appended."""
    duplicates: tuple[str, ...] = ()
    """Citations of what memory already said, for notes not written."""
    error: str | None = None


class MemoryCapture:
    """The capture logic, shared by the middleware and the node.

    ``last_turns``: the most user turns one capture reads (those since the last capture).
    ``max_notes``: the most notes one capture writes. ``chat_types``: where it runs.
    """

    def __init__(self, index: Memory | MemoryScope, model: BaseChatModel | str, *,
                 last_turns: int | None = None, max_notes: int | None = None,
                 chat_types: Sequence[ChatType] | None = None, enabled: bool = True,
                 system_prompt: str | None = None, prompt: str | None = None) -> None:
        c = settings_of(index).capture  # capture.* in the file or environment
        self.scope = index if isinstance(index, MemoryScope) else None
        self._index = index if isinstance(index, Memory) else None
        self.model = chat_model_of(model)
        self.last_turns = max(1, c.last_turns if last_turns is None else last_turns)
        self.max_notes = max(1, c.max_notes if max_notes is None else max_notes)
        self.chat_types = tuple(c.chat_types if chat_types is None else chat_types)
        self.enabled = enabled
        self.system_prompt = system_prompt or CAPTURE_SYSTEM_PROMPT
        self.prompt = prompt or CAPTURE_PROMPT

    def memory(self, config: RunnableConfig | None = None, context: Any = None) -> ScopedMemory:
        if self._index is not None:
            return ScopedMemory(self._index)
        assert self.scope is not None
        return self.scope.resolve(config, context)

    def recent(self, messages: Sequence[BaseMessage], last_id: str | None) -> list[BaseMessage]:
        """The turns to read: after ``last_id``, at most ``last_turns`` user turns, no tool
        traffic (search results are memory already, not something the user said)."""
        start = 0
        if last_id is not None:
            start = next((i + 1 for i, m in enumerate(messages) if m.id == last_id), 0)
        tail: list[BaseMessage] = [m for m in messages[start:] if isinstance(m, HumanMessage | AIMessage)
                and message_text(m).strip()]
        humans = [i for i, m in enumerate(tail) if isinstance(m, HumanMessage)]
        if not humans:
            return []
        return tail[humans[-self.last_turns] if len(humans) >= self.last_turns else humans[0]:]

    def run(self, messages: Sequence[BaseMessage], *, target: ScopedMemory | None = None,
            chat_type: ChatType = "direct") -> CaptureReport:
        turns = list(messages)
        if not turns:
            return CaptureReport()
        answer = run_silently(lambda m, config: self._ask(m, config), turns, CAPTURE_RUN_NAME)
        return self._save(target or self.memory(), answer, chat_type)

    async def arun(self, messages: Sequence[BaseMessage], *,
                   target: ScopedMemory | None = None,
                   chat_type: ChatType = "direct") -> CaptureReport:
        turns = list(messages)
        if not turns:
            return CaptureReport()
        answer = await arun_silently(lambda m, config: self._aask(m, config), turns,
                                     CAPTURE_RUN_NAME)
        return self._save(target or self.memory(), answer, chat_type)

    def _prompt(self, turns: list[BaseMessage]) -> list[BaseMessage]:
        lines = [f"{'User' if isinstance(m, HumanMessage) else 'Assistant'}: {message_text(m)}"
                 for m in turns]
        return [SystemMessage(content=self.system_prompt),
                HumanMessage(content="Conversation:\n" + "\n".join(lines) + f"\n\n{self.prompt}")]

    def _bound(self) -> Runnable[Any, BaseMessage]:
        bound: Runnable[Any, BaseMessage] = bind_answer_tool(quiet(self.model), _tool_schema(),
                                                             CAPTURE_TOOL)
        return bound

    def _ask(self, turns: list[BaseMessage], config: RunnableConfig) -> CapturedNotes | str:
        try:
            return _parse(self._bound().invoke(self._prompt(turns), config))
        except Exception as exc:  # reported, never raised into the user's turn
            return model_error(self.model, exc)

    async def _aask(self, turns: list[BaseMessage], config: RunnableConfig) -> CapturedNotes | str:
        try:
            return _parse(await self._bound().ainvoke(self._prompt(turns), config))
        except Exception as exc:  # reported, never raised into the user's turn
            return model_error(self.model, exc)

    def _save(self, target: ScopedMemory, answer: CapturedNotes | str,
              chat_type: ChatType) -> CaptureReport:
        if isinstance(answer, str):
            logger.warning("memory capture failed: %s", answer)
            return CaptureReport(error=answer)
        written: list[str] = []
        duplicates: list[str] = []
        for note in [n.strip() for n in answer.notes if n.strip()][: self.max_notes]:
            body = note if note.startswith(("- ", "* ")) else f"- {note}"
            try:
                # In a group, MEMORY.md neither keeps the note out nor shows in the answer.
                result = target.write(body, target="daily", chat_type=chat_type)
            except OpenClawMemoryError as exc:
                logger.warning("memory capture could not save a note: %s", exc)
                continue
            citation = f"{result.path}#L{result.start_line}"
            (written if result.written else duplicates).append(citation)
        logger.info("memory capture: %d note(s) saved, %d already known", len(written),
                    len(duplicates))
        return CaptureReport(tuple(written), tuple(duplicates))

    # -- as a graph step ----------------------------------------------------------------------
    def _due(self, state: Any, chat_type: ChatType) -> list[BaseMessage]:
        if not self.enabled or chat_type not in self.chat_types:
            return []
        return self.recent(state_messages(state), state_get(state, "memory_capture_last_id"))

    def update(self, state: Any, config: RunnableConfig | None = None,
               context: Any = None) -> dict[str, Any]:
        chat_type = resolve_chat_type(config, context)
        turns = self._due(state, chat_type)
        if not turns:
            return {}
        self.run(turns, target=self.memory(config, context), chat_type=chat_type)
        return _bookkeeping(state)

    async def aupdate(self, state: Any, config: RunnableConfig | None = None,
                      context: Any = None) -> dict[str, Any]:
        chat_type = resolve_chat_type(config, context)
        turns = self._due(state, chat_type)
        if not turns:
            return {}
        await self.arun(turns, target=self.memory(config, context), chat_type=chat_type)
        return _bookkeeping(state)

    def as_node(self) -> Runnable[Any, dict[str, Any]]:
        def node(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return self.update(state, config, current_context())

        async def anode(state: Any, config: RunnableConfig) -> dict[str, Any]:
            return await self.aupdate(state, config, current_context())

        return RunnableLambda(node, afunc=anode, name="memory_capture")


def _bookkeeping(state: Any) -> dict[str, Any]:
    # A failed capture is not retried: the turns it missed are not read again (bounded cost).
    last = state_messages(state)[-1].id
    return {"memory_capture_last_id": last} if last else {}


def _parse(reply: BaseMessage) -> CapturedNotes | str:
    calls = reply.tool_calls if isinstance(reply, AIMessage) else []
    args = next((c["args"] for c in calls if c["name"] == CAPTURE_TOOL), None)
    if args is None:
        return CapturedNotes()  # no call: nothing worth keeping
    try:
        return CapturedNotes.model_validate(args)
    except ValidationError as exc:
        return f"the model's notes are not valid: {exc.errors()[0]['msg']}"


def memory_capture_node(index: Memory | MemoryScope, model: BaseChatModel | str,
                        **options: Any) -> Runnable[Any, dict[str, Any]]:
    """``MemoryCapture(index, model, **options).as_node()``: after the agent's last step."""
    return MemoryCapture(index, model, **options).as_node()


class MemoryCaptureMiddleware(AgentMiddleware[MemoryAgentState, Any, Any]):
    """``create_agent`` middleware capturing durable notes after each agent run."""

    state_schema = MemoryAgentState

    def __init__(self, index: Memory | MemoryScope, model: BaseChatModel | str,
                 **options: Any) -> None:
        super().__init__()
        self.capture = MemoryCapture(index, model, **options)

    def after_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.capture.update(state, current_run_config(), runtime.context) or None

    async def aafter_agent(self, state: MemoryAgentState,
                           runtime: Runtime[Any]) -> dict[str, Any] | None:
        return await self.capture.aupdate(state, current_run_config(), runtime.context) or None
