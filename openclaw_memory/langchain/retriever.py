"""``OpenClawMemoryRetriever``: hybrid memory search as a LangChain retriever."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from openclaw_memory.config import MemorySettings
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.frontmatter import front_matter
from openclaw_memory.files.workspace import is_daily
from openclaw_memory.index import MemoryIndex
from openclaw_memory.langchain._common import hit_text
from openclaw_memory.memory_base import ChatType, Memory
from openclaw_memory.scope.availability import decide
from openclaw_memory.scope.filters import compile_filter
from openclaw_memory.types import SearchHit

__all__ = ["OpenClawMemoryRetriever", "format_docs"]

SourceName = Literal["memory", "sessions"]
# Settings sections accepted as plain keyword arguments, e.g. ``embedding={"provider": "none"}``.
_SETTING_KEYS = frozenset(MemorySettings.model_fields) - {"workspace"}
# With a filter the engine still ranks a fixed candidate pool and filters it afterwards, so
# a selective filter would starve the result list; ask for this many times more, then trim.
_FILTER_WIDENING = 4
_MAX_FETCH = 200
_FRONT_MATTER_LINES = 200


class _QueryFields(BaseModel):
    """The search knobs: fields of the retriever, and per-call ``invoke`` keywords."""

    k: int | None = Field(None, ge=1)
    min_score: float | None = Field(None, ge=0.0, le=1.0)
    sources: tuple[SourceName, ...] | None = None
    path_glob: str | None = None
    date_from: date | None = None
    date_to: date | None = None
    chat_type: ChatType = "direct"
    session_key: str | None = None
    """The chat's session key, for the scope rules (``scope.rules``)."""
    filter: dict[str, Any] | None = None
    low_confidence: bool = False
    """Where nothing passes the relevance gate, return the low-confidence hits instead
    (``search.low_confidence_gate``), each with ``metadata["low_confidence"] = True``."""


class _Query(_QueryFields):
    """One call's knobs (retriever fields overridden by invoke kwargs), validated once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @property
    def filtered(self) -> bool:
        return (self.path_glob is not None or self.date_from is not None
                or self.date_to is not None or bool(self.filter))

    def path_filter(self) -> Callable[[str], bool] | None:
        if not self.filtered:
            return None
        return self._accepts

    def _accepts(self, path: str) -> bool:
        if self.path_glob is not None and not fnmatch.fnmatchcase(path, self.path_glob):
            return False
        if self.date_from is None and self.date_to is None:
            return True
        day = is_daily(path)
        if day is None:
            return False  # a date range only ever matches dated (daily) files
        return (self.date_from is None or day >= self.date_from) and (
            self.date_to is None or day <= self.date_to)


class OpenClawMemoryRetriever(BaseRetriever, _QueryFields):
    """Retrieve memory snippets (hybrid keyword + vector search) as ``Document`` objects.

    Build it from an open index, ``OpenClawMemoryRetriever(index=memory)``, or from plain
    keyword arguments: ``OpenClawMemoryRetriever(workspace="~/agent", k=4,
    embedding={"provider": "none"})`` (any :class:`MemorySettings` section is accepted).

    Each ``Document`` holds the hit text (without the ``Source:`` line) and metadata
    ``path``, ``start_line``, ``end_line``, ``score``, ``source``, ``citation`` (only when the
    citation policy allows it for ``chat_type``) and ``explain`` (when ``explain=True``); its
    ``id`` is the chunk id, stable while the chunk is unchanged.

    Filters, settable on the retriever or per call (``retriever.invoke(q, k=2,
    path_glob="memory/2026-*")``):

    - ``k``: number of results (default: the ``search.max_results`` setting);
    - ``min_score``: score threshold (default: the engine's);
    - ``sources``: ``("memory",)``, ``("sessions",)`` or both;
    - ``path_glob``: :func:`fnmatch.fnmatchcase` pattern on the workspace-relative path
      (``*`` also matches ``/``);
    - ``date_from`` / ``date_to``: inclusive range on the date of daily files
      (``memory/YYYY-MM-DD.md``, and an area's ``memory/<namespace>/YYYY-MM-DD.md``).
      **When a date bound is given, undated files (MEMORY.md, topic notes, transcripts) are
      excluded**, because they have no date to compare;
    - ``chat_type``: ``"group"`` and ``"channel"`` never return MEMORY.md;
    - ``filter``: a metadata filter with PGVector's operators (``{"kind": "travel", "year":
      {"$gte": 2025}}``, see :mod:`openclaw_memory.scope.filters`) over the hit's ``path``,
      ``source``, ``start_line``, ``end_line``, ``score`` and ``date`` (daily files, ISO) plus
      the note's front-matter metadata (YAML ``key: value`` lines, or the JSON header the
      VectorStore and the LangGraph store write);
    - ``low_confidence``: where nothing passes the relevance gate, return the hits that still
      reached ``search.low_confidence_gate``, marked ``metadata["low_confidence"] = True``
      (``format_docs`` labels them); off by default, so a chain gets nothing then.
    """

    index: Memory | None = None
    workspace: Path | None = None
    index_path: Path | None = None
    settings: MemorySettings | None = None
    overrides: dict[str, Any] = Field(default_factory=dict)

    explain: bool = False

    _owns_index: bool = PrivateAttr(default=False)

    @model_validator(mode="before")
    @classmethod
    def _collect_setting_overrides(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        sections = {key: data[key] for key in data if key in _SETTING_KEYS}
        if not sections:
            return data
        rest = {key: value for key, value in data.items() if key not in _SETTING_KEYS}
        rest["overrides"] = {**data.get("overrides", {}), **sections}
        return rest

    @model_validator(mode="after")
    def _open_index(self) -> OpenClawMemoryRetriever:
        if self.index is None:
            self.index = MemoryIndex.open(self.workspace, index_path=self.index_path,
                                          settings=self.settings, **self.overrides)
            self._owns_index = True
        elif (self.workspace, self.index_path, self.settings) != (None, None, None) or self.overrides:
            raise ValueError("pass either index= or workspace/settings keywords, not both")
        return self

    @property
    def memory(self) -> Memory:
        """The index this retriever searches."""
        assert self.index is not None  # set by the validator
        return self.index

    def close(self) -> None:
        """Close the index if the retriever opened it (an index passed in stays open)."""
        if self._owns_index:
            self.memory.close()

    # -- retrieval ---------------------------------------------------------------------------
    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        options = self._options(kwargs)
        hits, weak = self._hits(query, options)
        return [self._document(hit, low_confidence=weak) for hit in hits]

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        # The base class would drop the per-call kwargs (k=...) on the async path.
        return await run_in_executor(None, self._get_relevant_documents, query,
                                     run_manager=run_manager.get_sync(), **kwargs)

    def _options(self, kwargs: dict[str, Any]) -> _Query:
        kwargs.pop("verbose", None)  # BaseRetriever.invoke forwards it; it is not a filter
        fields = {name: getattr(self, name) for name in _Query.model_fields}
        return _Query.model_validate({**fields, **kwargs})

    def _hits(self, query: str, options: _Query) -> tuple[Sequence[SearchHit], bool]:
        """The hits, and whether they are low-confidence ones."""
        memory = self.memory
        if not decide(memory.settings.scope, options.chat_type, options.session_key).allowed:
            memory.count_event("scope_denied")  # logged by decide(); nothing is retrieved
            return (), False
        k = options.k or memory.settings.search.max_results
        fetch = min(_MAX_FETCH, k * _FILTER_WIDENING) if options.filtered else k
        keep = compile_filter(options.filter)  # compiled first: a bad filter fails before searching
        response = memory.search(query, max_results=fetch, min_score=options.min_score,
                                 sources=options.sources, chat_type=options.chat_type,
                                 path_filter=options.path_filter())
        hits = response.results
        weak = not hits and options.low_confidence and bool(response.low_confidence_results)
        if weak:
            hits = response.low_confidence_results
        if keep is not None:
            hits = tuple(hit for hit in hits if keep(self._filter_fields(hit, options)))
        return hits[:k], weak

    def _filter_fields(self, hit: SearchHit, options: _Query) -> dict[str, Any]:
        """What a metadata filter sees of a hit: the note's front matter, then the hit's own
        fields (which win: a note cannot claim another path or score)."""
        day = is_daily(hit.path)
        fields: dict[str, Any] = dict(self._front_matter(hit.path, options))
        fields.update(path=hit.path, source=hit.source, start_line=hit.start_line,
                      end_line=hit.end_line, score=hit.score,
                      date=day.isoformat() if day else None)
        return fields

    def _front_matter(self, path: str, options: _Query) -> dict[str, Any]:
        if not path.endswith(".md"):
            return {}  # transcripts have no front matter
        try:
            head = self.memory.get(path, 1, _FRONT_MATTER_LINES, chat_type=options.chat_type).text
        except OpenClawMemoryError:
            return {}
        return front_matter(head + "\n")

    def _document(self, hit: SearchHit, *, low_confidence: bool = False) -> Document:
        metadata: dict[str, Any] = {
            "path": hit.path, "start_line": hit.start_line, "end_line": hit.end_line,
            "score": hit.score, "source": hit.source,
        }
        if low_confidence:
            metadata["low_confidence"] = True
        if hit.citation is not None:
            metadata["citation"] = hit.citation
        if hit.as_of is not None:  # a chain weighs a fact by when it was learned
            metadata["as_of"] = hit.as_of
        if hit.superseded_by is not None:
            metadata["superseded_by"] = hit.superseded_by
        if self.explain:
            metadata["explain"] = hit.explanation.as_dict()
        return Document(id=hit.chunk_id, page_content=hit_text(hit), metadata=metadata)


def format_docs(docs: Sequence[Document]) -> str:
    """Join retrieved documents for a prompt, each followed by its citation when it has one,
    and headed by the day its fact was learned (and, for an older version, the newer note's
    citation) when the notes say.

    Meant for LCEL chains: ``retriever | format_docs | prompt | llm``.
    """
    blocks = []
    for doc in docs:
        cite = doc.metadata.get("citation")
        block = f"{doc.page_content}\nSource: {cite}" if cite else doc.page_content
        if doc.metadata.get("superseded_by"):
            # Older, not hidden: the model reads both and knows which is current.
            block = f"(older: a newer note says otherwise, {doc.metadata['superseded_by']})\n{block}"
        if doc.metadata.get("as_of"):
            block = f"(learned {doc.metadata['as_of']})\n{block}"
        if doc.metadata.get("low_confidence"):
            block = f"(low confidence, possibly unrelated)\n{block}"
        blocks.append(block)
    return "\n\n".join(blocks)
