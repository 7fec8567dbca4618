"""The memory tools an agent calls: ``memory_search``, ``memory_get``, ``memory_write``.

Each tool answers with ``(content, artifact)``: ``content`` is compact JSON for the model,
``artifact`` the same result as a plain dict (JSON-ready, so LangGraph checkpointers can
store it) with more detail (score explanations). Failures the model can do something about
become :class:`ToolException` messages (``handle_tool_error=True``), never a crashed turn.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field, ValidationError, model_validator

from openclaw_memory.errors import (
    ContentError,
    OpenClawMemoryError,
    PathRefusedError,
    StoreError,
    WorkspaceError,
)
from openclaw_memory.files.notes import NoteText, WriteResult
from openclaw_memory.langchain._common import CitationMode, citation_of, citations_enabled, hit_snippet
from openclaw_memory.langchain.scope import (
    MemoryScope,
    ScopedMemory,
    current_context,
    resolve_chat_type,
    stricter,
)
from openclaw_memory.memory_base import ChatType, Memory
from openclaw_memory.scope.availability import decide
from openclaw_memory.search.snippets import citation
from openclaw_memory.types import SearchHit, SearchResponse

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from openclaw_memory.langgraph.write_review import WriteReview

__all__ = [
    "MemoryEditInput",
    "MemoryEditTool",
    "MemoryGetInput",
    "MemoryGetTool",
    "MemorySearchInput",
    "MemorySearchTool",
    "MemoryWriteInput",
    "MemoryWriteTool",
    "memory_tools",
]

WriteTarget = Literal["daily", "memory"]
# LangChain passes the run's config to ``_run`` only when the parameter is annotated exactly
# ``RunnableConfig`` (not Optional); a direct ``_run`` call without one gets this empty config.
_NO_CONFIG: RunnableConfig = {}
_MAX_RESULTS_CAP = 50


# ---------------------------------------------------------------------- argument schemas


class MemorySearchInput(BaseModel):
    query: str = Field(description="What to look for, in natural language or keywords.")
    max_results: int | None = Field(
        None, description="How many snippets to return (default 6, at most 50).")
    min_score: float | None = Field(
        None, description="Relevance threshold between 0 and 1; lower it to see weaker matches.")


class MemoryGetInput(BaseModel):
    path: str = Field(description="File path exactly as memory_search returned it, "
                                  "e.g. 'memory/2026-01-10.md' or 'MEMORY.md'; a citation such "
                                  "as 'memory/2026-01-10.md#L3-L5' reads those lines.")
    from_line: int | None = Field(None, description="First line to read (1-based).")
    lines: int | None = Field(None, description="How many lines to read from from_line.")


class SharedChatGetInput(MemoryGetInput):
    """``memory_get`` arguments offered in group and channel chats (no MEMORY.md)."""

    path: str = Field(description="File path exactly as memory_search returned it, "
                                  "e.g. 'memory/2026-01-10.md'.")


class MemoryWriteInput(BaseModel):
    content: str = Field(description="The note to store: self-contained Markdown, one fact, "
                                     "decision or todo per note, with names and dates spelled out.")
    target: WriteTarget = Field(
        "daily", description="'daily' appends to today's log (events, decisions, progress); "
                             "'memory' appends to the curated MEMORY.md (lasting facts, "
                             "preferences).")


class DailyWriteInput(BaseModel):
    """``memory_write`` arguments where only today's log may be written (groups, the flush)."""

    content: str = Field(description=MemoryWriteInput.model_fields["content"].description)
    target: Literal["daily"] = Field("daily", description="Always 'daily': today's log.")


# ---------------------------------------------------------------------- shared behaviour

_SHARED_SEARCH_DESCRIPTION = (
    "Search the long-term memory (the daily logs in memory/ and other notes) before answering "
    "anything about earlier work, decisions, dates, people, preferences or open todos. "
    "Returns the best-matching snippets with their file path; memory_get reads a file. If "
    "nothing relevant is found, say that you checked memory."
)
_WRITE_DESCRIPTION = (
    "Store a note in long-term memory so it can be found in later conversations. Use it "
    "for decisions, facts about the user or the project, preferences and todos worth "
    "keeping. Notes are appended (nothing is overwritten) and an identical note is not "
    "stored twice."
)


def _validation_message(error: ValidationError) -> str:
    problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                         for e in error.errors())
    return f"Invalid arguments ({problems}). Fix them and call the tool again."


def _compact(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@contextlib.contextmanager
def _as_tool_errors() -> Iterator[None]:
    """Translate engine errors into messages that tell the model what to do next."""
    try:
        yield
    except PathRefusedError:
        raise ToolException(
            "Path refused: only MEMORY.md and Markdown files under memory/ (plus configured "
            "extra paths) can be read. Use a path exactly as memory_search returned it."
        ) from None
    except ContentError as exc:
        raise ToolException(f"Nothing was written: {exc}. Rewrite the note and try again.") from None
    except (WorkspaceError, StoreError) as exc:
        raise ToolException(f"Memory is unavailable right now: {exc}. Continue without memory "
                            "and tell the user if it matters.") from None
    except OpenClawMemoryError as exc:
        raise ToolException(f"{exc}.") from None


@dataclass(frozen=True)
class _Call:
    """What one tool call acts on: the memory (index and area) and the chat it is for."""

    memory: ScopedMemory
    chat_type: ChatType
    citations: CitationMode

    @property
    def cite(self) -> bool:
        return citations_enabled(self.citations, self.chat_type)


class _MemoryTool(BaseTool):
    """Fields every memory tool shares: where memory is and the citation/scope policy.

    Exactly one of ``index`` (one workspace for every call), ``scope`` (resolved from each
    run: per-user namespaces or workspaces, see :class:`MemoryScope`) or ``bound`` (already
    resolved, e.g. inside a flush turn) is set. The chat type of a call is the run's when the
    run states one, and never less private than the tool's own ``chat_type``.
    """

    index: Memory | None = Field(None, exclude=True)
    scope: MemoryScope | None = Field(None, exclude=True)
    bound: ScopedMemory | None = Field(None, exclude=True)
    citations: CitationMode | None = None
    """None: the index's ``search.citations`` setting."""
    chat_type: ChatType = "direct"
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool | str | Callable[[ToolException], str] | None = True
    # Any: BaseTool also passes pydantic.v1 errors, which have the same ``errors()``.
    handle_validation_error: bool | str | Callable[[Any], str] | None = _validation_message

    @model_validator(mode="after")
    def _one_target(self) -> _MemoryTool:
        given = [name for name in ("index", "scope", "bound") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("a memory tool takes exactly one of index=, scope= or bound=")
        return self

    def scoped(self, chat_type: ChatType, citations: CitationMode | None = None) -> _MemoryTool:
        """This tool for a chat of ``chat_type``: its description and argument schema offer
        only what that chat allows (no MEMORY.md outside direct chats)."""
        update: dict[str, Any] = {"chat_type": chat_type, "citations": citations or self.citations}
        update.update(self._offer(chat_type))
        return self.model_copy(update=update)

    def _offer(self, chat_type: ChatType) -> dict[str, Any]:
        return {}

    def _call(self, config: RunnableConfig | None) -> _Call:
        """Resolve this call's memory and chat type from the run."""
        context = current_context()
        with _as_tool_errors():
            if self.bound is not None:
                memory = self.bound
            elif self.scope is not None:
                memory = self.scope.resolve(config, context)
            else:
                assert self.index is not None  # the validator guarantees one target
                memory = ScopedMemory(self.index)
            try:
                run_chat = resolve_chat_type(config, context, default=self.chat_type)
            except ValueError as exc:
                raise ToolException(f"{exc}.") from None
        chat_type = stricter(run_chat, self.chat_type)
        return _Call(memory, chat_type, self.citations or memory.settings.search.citations)

    def _available(self, call: _Call, config: RunnableConfig | None) -> None:
        """Refuse the call where the scope rules deny memory (counted in ``status``)."""
        key = ((config or {}).get("configurable") or {}).get("session_key")
        decision = decide(call.memory.settings.scope, call.chat_type,
                          key if isinstance(key, str) else None)
        if not decision.allowed:
            call.memory.index.count_event("scope_denied")
            raise ToolException(f"Memory is not available in this chat ({decision.reason}). "
                                "Continue without memory.")


# ---------------------------------------------------------------------- memory_search


class MemorySearchTool(_MemoryTool):
    name: str = "memory_search"
    description: str = (
        "Search the long-term memory (MEMORY.md, the daily logs in memory/ and other notes) "
        "before answering anything about earlier work, decisions, dates, people, preferences "
        "or open todos. Returns the best-matching snippets with their file path and line "
        "range; then use memory_get to read only the lines you need. If nothing relevant is "
        "found, say that you checked memory."
    )
    args_schema: type[BaseModel] = MemorySearchInput

    def _offer(self, chat_type: ChatType) -> dict[str, Any]:
        if chat_type == "direct":
            return {"description": type(self).model_fields["description"].default}
        return {"description": _SHARED_SEARCH_DESCRIPTION}

    def _run(self, query: str, max_results: int | None = None, min_score: float | None = None,
             config: RunnableConfig = _NO_CONFIG) -> tuple[str, dict[str, Any]]:
        limit = None if max_results is None else max(1, min(max_results, _MAX_RESULTS_CAP))
        threshold = None if min_score is None else max(0.0, min(min_score, 1.0))
        call = self._call(config)
        self._available(call, config)
        with _as_tool_errors():
            response = call.memory.search(query, max_results=limit, min_score=threshold,
                                          chat_type=call.chat_type)
        _raise_if_empty(response)
        return (_compact(self._payload(call, response, explain=False)),
                self._payload(call, response, explain=True))

    def _payload(self, call: _Call, response: SearchResponse, *, explain: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"results": _items(call, response.results, explain)}
        if not response.results and response.low_confidence_results:
            out.update(no_relevant_memory=True, note=_LOW_CONFIDENCE_NOTE,
                       low_confidence=_items(call, response.low_confidence_results, explain))
        out.update(provider=response.provider, model=response.model, mode=response.mode,
                   citations=call.citations)
        for key in ("fallback", "warning", "action"):
            value = getattr(response, key)
            if value:
                out[key] = value
        if explain:
            out.update(vector_path=response.vector_path, notes=list(response.notes))
        return out


_LOW_CONFIDENCE_NOTE = (
    "No relevant memory: nothing matched this query with confidence. The notes under "
    "low_confidence are only possibly related (a paraphrase or another language can score "
    "low): use one only if it plainly answers the question; otherwise tell the user you "
    "checked memory and found nothing.")


def _items(call: _Call, hits: Sequence[SearchHit], explain: bool) -> list[dict[str, Any]]:
    cite = call.cite
    results = []
    for hit in hits:
        item: dict[str, Any] = {"path": hit.path, "score": round(hit.score, 4),
                                "snippet": hit_snippet(hit, cite), "source": hit.source}
        if cite:  # line numbers are citations too: not handed out where they are hidden
            item.update(start_line=hit.start_line, end_line=hit.end_line,
                        citation=citation_of(hit))
        if hit.as_of is not None:  # the model weighs a fact by when it was learned
            item["as_of"] = hit.as_of
        if hit.superseded_by is not None:
            # Where citations are hidden, only the fact that a newer note exists is said.
            item["superseded"] = hit.superseded_by if cite else True
        if explain:
            item["explain"] = hit.explanation.as_dict()
        results.append(item)
    return results


def _raise_if_empty(response: SearchResponse) -> None:
    if response.disabled:
        raise ToolException(f"Memory search is unavailable: {response.error or response.warning}. "
                            f"{response.action or 'Continue without memory.'}")
    if response.results or response.low_confidence_results:
        return
    reasons = [n for n in response.notes if n.startswith("nothing relevant")]
    detail = f" ({reasons[0]})" if reasons else ""
    hint = f" {response.warning} {response.action}" if response.warning else ""
    raise ToolException(
        f"No memory matched this query{detail}.{hint} Try other words (names, dates, "
        "synonyms) or a lower min_score; if it still finds nothing, tell the user you "
        "checked memory and found nothing.")


# ---------------------------------------------------------------------- memory_get


class MemoryGetTool(_MemoryTool):
    name: str = "memory_get"
    description: str = (
        "Read lines of a memory file, usually one found by memory_search: give the path as "
        "returned and, to keep the answer short, from_line and lines. A file that does not "
        "exist reads as empty text."
    )
    args_schema: type[BaseModel] = MemoryGetInput

    def _offer(self, chat_type: ChatType) -> dict[str, Any]:
        return {"args_schema": MemoryGetInput if chat_type == "direct" else SharedChatGetInput}

    def _run(self, path: str, from_line: int | None = None, lines: int | None = None,
             config: RunnableConfig = _NO_CONFIG) -> tuple[str, dict[str, Any]]:
        call = self._call(config)
        self._available(call, config)
        with _as_tool_errors():
            note = call.memory.get(path, from_line, lines, chat_type=call.chat_type)
        payload = self._payload(call, note)
        return _compact(payload), payload

    def _payload(self, call: _Call, note: NoteText) -> dict[str, Any]:
        out: dict[str, Any] = {"path": note.path, "text": note.text}
        if note.missing:
            out["missing"] = True
        if note.truncated:  # the model must know what it was not shown, and how to get it
            out.update(truncated=note.marker(), next_from_line=note.next_line)
        if call.cite:
            out.update(from_line=note.start_line, end_line=note.end_line,
                       total_lines=note.total_lines)
            if note.end_line >= note.start_line:
                out["citation"] = citation(note.path, note.start_line, note.end_line)
        return out


# ---------------------------------------------------------------------- memory_write


class MemoryWriteTool(_MemoryTool):
    name: str = "memory_write"
    description: str = _WRITE_DESCRIPTION
    args_schema: type[BaseModel] = MemoryWriteInput
    write_target_restriction: WriteTarget | None = None
    """When set, the only target this tool accepts (e.g. 'daily' for the flush turn)."""
    review: Any = None
    """A :class:`~openclaw_memory.langgraph.write_review.WriteReview`: the chat model decides
    at once what each related curated line becomes (direct chats only)."""

    def _offer(self, chat_type: ChatType) -> dict[str, Any]:
        if chat_type == "direct" and self.write_target_restriction in (None, "memory"):
            return {"description": _WRITE_DESCRIPTION, "args_schema": MemoryWriteInput}
        return {"description": f"{_WRITE_DESCRIPTION} Notes go to today's log.",
                "args_schema": DailyWriteInput}

    def _run(self, content: str, target: WriteTarget = "daily",
             config: RunnableConfig = _NO_CONFIG) -> tuple[str, dict[str, Any]]:
        call = self._call(config)
        restriction = self.write_target_restriction
        if restriction is not None and target != restriction:
            raise ToolException(f"Writing to {target!r} is not allowed here; call memory_write "
                                f"again with target={restriction!r}.")
        if target == "memory" and call.chat_type != "direct":
            # MEMORY.md is private: a group must not edit it, nor probe it through the
            # "duplicate" answer (which would confirm that a note is already there).
            raise ToolException("MEMORY.md is private and cannot be written from a group chat; "
                                "use target='daily' instead.")
        with _as_tool_errors():
            result = call.memory.write(content, target=target, chat_type=call.chat_type)
        payload = self._payload(call, result)
        if self.review is not None and call.chat_type == "direct" and result.written:
            self._reviewed(call, content, result, payload)
        return _compact(payload), payload

    def _reviewed(self, call: _Call, content: str, result: WriteResult,
                  payload: dict[str, Any]) -> None:
        """The chat model's decisions on the related curated lines, applied (the note stays
        saved whatever they are)."""
        reviewed = self.review.review(call.memory, content, result, chat_type=call.chat_type)
        if isinstance(reviewed, str):
            payload["review_error"] = reviewed
            return
        if reviewed:
            payload["reviewed"] = [r.as_dict() for r in reviewed]
            payload["hint"] = ("Saved. The related curated lines were reviewed (see "
                               "'reviewed'); daily-log lines stay as dated records.")

    def _payload(self, call: _Call, result: WriteResult) -> dict[str, Any]:
        out: dict[str, Any] = {"path": result.path, "written": result.written,
                               "reason": result.reason}
        if result.warning:
            out["warning"] = result.warning
        if result.existing is not None and call.chat_type == "direct":
            # Direct chats only: a group must not read MEMORY.md through a duplicate.
            out["existing"] = result.existing
            out["hint"] = "Memory already says this, word for word."
        if result.related and call.chat_type == "direct":
            # The note is saved; these lines may be what it makes stale. The model decides:
            # correct one with memory_edit, or leave both when the note adds a fact.
            out["related"] = [r.as_dict() for r in result.related]
            out["hint"] = ("Saved. Memory also holds the related lines above (with the day "
                           "each was learned): if the note changes one of them, correct it "
                           "with memory_edit; if it adds a fact, leave them.")
        if call.cite:
            out.update(start_line=result.start_line, end_line=result.end_line,
                       citation=citation(result.path, result.start_line, result.end_line))
        return out


# ---------------------------------------------------------------------- memory_edit


class MemoryEditInput(BaseModel):
    citation: str = Field(description="The lines to change, as memory_search or memory_get "
                                      "cited them, e.g. 'MEMORY.md#L5-L6'.")
    expected: str = Field(description="The exact text now on those lines (as memory_get showed "
                                      "it); if the file changed, nothing is written and the "
                                      "answer shows the current text.")
    replacement: str | None = Field(None, description="The corrected text; omit (or leave "
                                                      "empty) to remove the lines.")
    reason: str | None = Field(None, description="Why, in a few words (kept in the history).")


class MemoryEditTool(_MemoryTool):
    name: str = "memory_edit"
    description: str = (
        "Correct or remove a fact in MEMORY.md or another undated memory note (never a daily "
        "log: add a correcting note there instead). Read the lines first, then give their "
        "citation, their exact current text and the replacement. The old text is kept in the "
        "memory history. Use it when the user says a remembered fact changed or was wrong.")
    args_schema: type[BaseModel] = MemoryEditInput

    def _run(self, citation: str, expected: str, replacement: str | None = None,
             reason: str | None = None,
             config: RunnableConfig = _NO_CONFIG) -> tuple[str, dict[str, Any]]:
        call = self._call(config)
        if call.chat_type != "direct":
            raise ToolException("memory_edit is not available in group or channel chats.")
        with _as_tool_errors():
            result = call.memory.edit(citation, expected, replacement or None, reason=reason,
                                      chat_type=call.chat_type)
        payload: dict[str, Any] = {"path": result.path, "applied": result.applied,
                                   "action": result.action}
        if result.applied:
            payload["citation"] = result.citation
            payload["history"] = result.history
        else:
            payload["current"] = result.current
            if result.moved_to is not None:
                start, end = result.moved_to
                payload["expected_now_at"] = f"{result.path}#L{start}-L{end}"
            payload["hint"] = ("the lines changed since they were read: read them again and "
                               "retry with their current text")
        return _compact(payload), payload


# ---------------------------------------------------------------------- factory


def memory_tools(memory: Memory | MemoryScope | ScopedMemory, *,
                 citations: CitationMode | None = None,
                 chat_type: ChatType = "direct", allow_write: bool = True,
                 write_target_restriction: WriteTarget | None = None,
                 allow_edit: bool = True,
                 review_writes: BaseChatModel | str | WriteReview | None = None) -> list[BaseTool]:
    """The memory tool set, with its citation and scope policy applied.

    ``memory``: an index (one workspace for every call), a :class:`MemoryScope` (each call
    finds its user's namespace or workspace in the run's config or context, so one graph
    serves many users) or an already resolved :class:`ScopedMemory`.

    ``citations``: ``"on"``, ``"off"`` or ``"auto"`` (cite in direct chats only); ``None``
    uses the index's ``search.citations`` setting. In ``group``/``channel`` chats (given here
    or by the run) MEMORY.md is never returned or read. ``allow_write=False`` leaves out
    ``memory_write``; ``write_target_restriction="daily"`` lets it append to today's log only.
    ``memory_edit`` (correct or remove curated lines) comes with writing, in direct chats, unless
    ``allow_edit=False`` or writes are restricted to the daily log.

    ``review_writes``: a chat model (or a ready
    :class:`~openclaw_memory.langgraph.write_review.WriteReview`) that, after each write with
    related curated lines, decides in one silent turn whether each is kept, updated or removed
    (as mem0 does), applied through the edit path with its history; the note is saved either
    way. Direct chats only.
    """
    target = ("index" if isinstance(memory, Memory)
              else "scope" if isinstance(memory, MemoryScope) else "bound")
    common: dict[str, Any] = {target: memory, "citations": citations}
    tools: list[_MemoryTool] = [MemorySearchTool(**common), MemoryGetTool(**common)]
    if allow_write:
        tools.append(MemoryWriteTool(**common, write_target_restriction=write_target_restriction,
                                     review=_write_review(review_writes)))
        if allow_edit and write_target_restriction is None and chat_type == "direct":
            tools.append(MemoryEditTool(**common))
    return [tool.scoped(chat_type) for tool in tools]


def _write_review(review: Any) -> Any:
    if review is None:
        return None
    from openclaw_memory.langgraph.write_review import WriteReview

    return review if isinstance(review, WriteReview) else WriteReview(review)
