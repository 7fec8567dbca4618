"""After ``memory_write``: the agent's chat model decides what each related line becomes.

``memory_write`` always stores a note that is not already in memory word for word, and
answers with the lines alike in meaning (search/restatements.py), each with its citation and
the day it was learned. Left there, correcting a stale line is up to the model's next step,
and a model that moves on leaves ``MEMORY.md`` saying two things. A :class:`WriteReview`
asks the chat model at once, in one silent turn (as mem0 asks its model to add, update,
delete or do nothing): for each related line of a curated file, ``keep`` it (the note adds a
fact), ``update`` it to the fact as it is now, or ``remove`` it (no longer true, not
replaced). Edits go through the curation path: the file must still hold the line's text, and
the old text goes to the history. The note itself is never undone: no write is lost.

The lines offered are the related ones (alike in meaning) and the curated file's lines that
name whom or what the note names (its capitalised names, or a Chinese note's lead): a change
rarely reads like the line it makes stale ("Maya moved to Lyon" is 0.63 alike to "Maya Chen
lives in Bristol", below what a restatement needs), but it names the same person. Daily logs
are not offered: they are append-only, dated records (a newer note is how they are
corrected). The turn never runs outside direct chats, where ``MEMORY.md`` is private.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, ValidationError

from openclaw_memory.consolidation.answer_tool import answer_tool
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.notes import RelatedLine, WriteResult, today
from openclaw_memory.files.workspace import is_daily
from openclaw_memory.langchain.scope import ScopedMemory
from openclaw_memory.langgraph._common import (
    answer_args,
    bind_answer_tool,
    chat_model_of,
    model_error,
)
from openclaw_memory.langgraph.silent import quiet, run_silently
from openclaw_memory.memory_base import ChatType
from openclaw_memory.search.subject_lines import learned_on, mentions, question_subject

__all__ = ["REVIEW_PROMPT", "REVIEW_RUN_NAME", "REVIEW_SYSTEM_PROMPT", "REVIEW_TOOL",
           "LineDecision", "ReviewedLine", "WriteReview", "parse_decisions"]

logger = logging.getLogger(__name__)

REVIEW_TOOL = "decide_related_lines"
REVIEW_RUN_NAME = "memory_write_review_turn"
REVIEW_SYSTEM_PROMPT = (
    "Silent memory upkeep. A note was just saved to memory. You decide whether older "
    "curated lines about the same thing are still true. The user does not see this turn."
)
REVIEW_PROMPT = (
    "The new note, and curated lines alike in meaning (R1, R2, ...), each with the day it was "
    "learned. Answer with one call of decide_related_lines, one decision per line:\n"
    "- keep: the line is still true (the note adds a fact, or is about something else).\n"
    "- update: the note changes what the line says (a move, a new job, a reversed decision, "
    "a negation). Give the line as it is now, in the line's own style, saying in a few words "
    "what it replaces ('(before: Paris)').\n"
    "- remove: the line is no longer true and the note does not replace it, or the line says "
    "the same as another line.\n"
    "When unsure, keep: the note is saved either way."
)

Decision = Literal["keep", "update", "remove"]


class LineDecision(BaseModel):
    """The model's decision on one related line."""

    line: str = Field(description="The line's label, e.g. 'R1'.")
    action: Decision
    text: str | None = Field(None, description="For update: the line as it is now.")
    reason: str | None = Field(None, description="Why, in a few words (kept in the history).")


class LineDecisions(BaseModel):
    decisions: list[LineDecision] = Field(default_factory=list)


def review_tool_schema() -> dict[str, Any]:
    """The OpenAI-style tool definition the review turn answers with."""
    return answer_tool(REVIEW_TOOL, "Decide, for each related line, whether it stays, is "
                       "updated to the fact as it is now, or is removed.", LineDecisions)


@dataclass(frozen=True, slots=True)
class ReviewedLine:
    """What became of one related line: ``action`` as decided, ``applied`` whether the file
    changed (an update or removal), ``detail`` the history entry or why nothing changed."""

    citation: str
    action: Decision
    applied: bool
    detail: str | None = None
    text: str | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"citation": self.citation, "action": self.action,
                                  "applied": self.applied}
        if self.text is not None:
            out["text"] = self.text
        if self.detail is not None:
            out["detail"] = self.detail
        return out


class WriteReview:
    """One silent chat-model turn per write that has related curated lines.

    ``model``: any LangChain chat model with tool calling, or ``"provider:model"``.
    ``max_lines``: the most related lines offered (the closest first).
    """

    def __init__(self, model: BaseChatModel | str, *, max_lines: int = 5,
                 system_prompt: str | None = None, prompt: str | None = None) -> None:
        self.model = chat_model_of(model)
        self.max_lines = max(1, max_lines)
        self.system_prompt = system_prompt or REVIEW_SYSTEM_PROMPT
        self.prompt = prompt or REVIEW_PROMPT

    def reviewable(self, memory: ScopedMemory, note: str, result: WriteResult
                   ) -> tuple[RelatedLine, ...]:
        """The lines a review may change, at most :attr:`max_lines`: the related lines of
        curated files (not daily logs), then the curated file's lines naming the note's
        subject."""
        related = [r for r in result.related
                   if is_daily(r.path) is None and r.path.endswith(".md")]
        seen = {(r.path, r.line) for r in related}
        named = [r for r in _subject_lines(memory, note) if (r.path, r.line) not in seen]
        return tuple([*related, *named][: self.max_lines])

    def review(self, memory: ScopedMemory, note: str, result: WriteResult, *,
               chat_type: ChatType = "direct",
               now: datetime | None = None) -> tuple[ReviewedLine, ...] | str:
        """Decide and apply; an error string (never raised) when the model fails. Nothing is
        asked outside direct chats, or when no curated line is related."""
        if chat_type != "direct" or not result.written:
            return ()
        lines = self.reviewable(memory, note, result)
        if not lines:
            return ()
        day = today(memory.settings.timezone, now or datetime.now(UTC)).isoformat()
        messages = self._messages(note, day, lines)
        decided = run_silently(lambda m, config: self._decide(m, config), messages,
                               REVIEW_RUN_NAME)
        if isinstance(decided, str):
            logger.warning("memory write review failed: %s", decided)
            return decided
        return tuple(_apply(memory, lines, decided))

    def _messages(self, note: str, day: str, lines: Sequence[RelatedLine]) -> list[BaseMessage]:
        shown = "\n".join(f"R{k}: {r.citation} (learned {r.learned or 'undated'}): "
                          f"{r.text.strip()}" for k, r in enumerate(lines, 1))
        return [SystemMessage(content=self.system_prompt),
                HumanMessage(content=f"{self.prompt}\n\nNew note ({day}): {note.strip()}\n\n"
                                     f"Related lines:\n{shown}")]

    def _decide(self, messages: list[BaseMessage], config: RunnableConfig
                ) -> list[LineDecision] | str:
        bound = bind_answer_tool(quiet(self.model), review_tool_schema(), REVIEW_TOOL)
        try:
            reply = bound.invoke(messages, config)
        except Exception as exc:  # reported, never raised into the user's turn
            return model_error(self.model, exc)
        return parse_decisions(reply)


def _subject_lines(memory: ScopedMemory, note: str) -> list[RelatedLine]:
    """The curated file's list lines that name whom or what ``note`` names."""
    curated = memory.index.curated_name()
    path = curated if memory.area is None else f"{memory.area}/{curated}"
    try:
        text = memory.get(path, None, None, chat_type="direct")
    except OpenClawMemoryError:  # no curated file (yet): nothing to review
        return []
    if text.missing:
        return []
    lines = [(text.start_line + k, line) for k, line in enumerate(text.text.split("\n"))
             if line.strip() and not line.lstrip().startswith("#")]
    subject = question_subject(note, [line for _n, line in lines])
    if not subject:
        return []
    # Any one of the note's names: "Maya moved to Lyon" is about the line "Maya Chen lives in
    # Bristol", and "Chen" alone is not in the note.
    return [RelatedLine(path, number, line, _learned(path, line), 0.0)
            for number, line in lines if any(mentions(line, {term}) for term in subject)]


def _learned(path: str, line: str) -> str | None:
    day = learned_on(path, line)
    return day.isoformat() if day else None


def parse_decisions(reply: BaseMessage) -> list[LineDecision] | str:
    """The decisions in a reply: its ``decide_related_lines`` call, else JSON in its text,
    else none (every line kept) for an empty answer."""
    args = answer_args(reply, REVIEW_TOOL, "decisions")
    if isinstance(args, str):
        return args
    try:
        return LineDecisions.model_validate(args or {}).decisions
    except ValidationError as exc:
        return (f"the model's decisions are not valid: {exc.error_count()} error(s), e.g. "
                f"{exc.errors()[0]['msg']}")


def _apply(memory: ScopedMemory, lines: Sequence[RelatedLine],
           decisions: Sequence[LineDecision]) -> list[ReviewedLine]:
    by_label = {f"R{k}": r for k, r in enumerate(lines, 1)}
    chosen: dict[str, LineDecision] = {}
    for decision in decisions:
        label = decision.line.strip().upper()
        if label in by_label:  # a label the model made up is dropped; the first one counts
            chosen.setdefault(label, decision)
    # Bottom-up within a file: removing a line must not move the next one the model named.
    order = sorted(chosen, key=lambda label: (by_label[label].path, -by_label[label].line))
    done = {label: _applied(memory, by_label[label], chosen[label]) for label in order}
    return [done[label] for label in sorted(done, key=lambda label: int(label[1:]))]


def _applied(memory: ScopedMemory, line: RelatedLine, decision: LineDecision) -> ReviewedLine:
    if decision.action == "keep":
        return ReviewedLine(line.citation, "keep", False)
    replacement = (decision.text or "").strip() or None
    if decision.action == "update" and replacement is None:
        return ReviewedLine(line.citation, "update", False, "no text given: the line is kept")
    try:
        edited = memory.edit(line.citation, line.text, replacement if decision.action ==
                             "update" else None, reason=decision.reason or "a newer note",
                             chat_type="direct")
    except OpenClawMemoryError as exc:  # refused (not curated, area): reported, not raised
        return ReviewedLine(line.citation, decision.action, False, str(exc))
    if not edited.applied:
        return ReviewedLine(line.citation, decision.action, False,
                            "the line changed since it was read: kept as it is now")
    return ReviewedLine(line.citation, decision.action, True, edited.history,
                        replacement if decision.action == "update" else None)
