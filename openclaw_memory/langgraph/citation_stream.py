"""Citations filtered out of a model's token stream, not only out of its final message.

In group and channel chats a citation the model writes itself (``As noted in
memory/2026-11-21.md#L3-L5 ...``) must not reach anything a user can stream:
``astream_events``' ``on_chat_model_stream`` tokens and ``on_chat_model_end`` output, a UI's
streaming handler, a handler attached to the model object. Tagging the call ``nostream`` only
keeps it out of LangGraph's ``messages`` stream mode. So the model is wrapped
(:class:`CitationFreeChatModel`): the wrapper calls the model's own generation directly (its
callbacks do not fire) and emits, through its own run, tokens that passed a
:class:`CitationStreamFilter`, and a final message already cleaned.

The filter holds back only what could still become a citation: the word being written (a
path arrives in pieces: ``memory/2026`` ``-11-21.md`` ``#L3``) and the cue words before it
("in", "see", "Source:", "("), so that ``in memory/x.md#L3`` becomes ``in my notes`` as in the
final message; everything before is emitted at once.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableBinding
from pydantic import ConfigDict

__all__ = ["CitationFreeChatModel", "CitationStreamFilter"]

# Words that only introduce a citation: held back with the word after them.
_CUES = frozenset({"in", "from", "at", "to", "per", "see", "cf", "cf.", "source", "sources",
                   "source:", "sources:", "according", "citation", "citations", "ref", "refs",
                   "-", "\u2013", "\u2014", "(", "[", "and", "&", ",", ";"})
_WORD_EDGE = re.compile(r"\s")


class CitationStreamFilter:
    """Feed text as it streams; get back what is safe to show (citations removed)."""

    def __init__(self, strip: Callable[[str], str]) -> None:
        self._strip = strip
        self._held = ""

    def feed(self, text: str) -> str:
        self._held += text
        cut = self._safe_cut(self._held)
        if cut <= 0:
            return ""
        ready, self._held = self._held[:cut], self._held[cut:]
        return self._clean(ready)

    def finish(self) -> str:
        ready, self._held = self._held, ""
        return self._clean(ready, final=True)

    def _clean(self, text: str, *, final: bool = False) -> str:
        if ".md#L" not in text and ".jsonl#L" not in text:
            return text
        # strip() tidies the whole text it is given; keep this piece's outer whitespace.
        core = text.strip()
        lead = text[: len(text) - len(text.lstrip())]
        trail = text[len(text.rstrip()):]
        cleaned = self._strip(core)
        if cleaned:
            return lead + cleaned + trail
        # Only a citation: one separator stays between the words around it, none at the end.
        return "" if final else (lead or trail)

    @staticmethod
    def _safe_cut(text: str) -> int:
        """Where held text may be cut: before the last (unfinished) word and the cue words
        right before it, and never inside a line that holds a citation's start."""
        starts = [m.start() for m in _WORD_EDGE.finditer(text)]
        if not starts:
            return 0
        # The last word may still grow into a path; the space before it waits with it (a
        # citation at the very end takes its leading space along).
        cut = starts[-1]
        while cut > 0 and text[cut - 1].isspace():
            cut -= 1
        words = text[:cut].split()
        # Walk back over cue words: "noted in " waits to see whether a citation follows.
        while words and words[-1].lower().strip("*_`") in _CUES:
            last = words.pop()
            cut = text.rfind(last, 0, cut)
            while cut > 0 and text[cut - 1].isspace():
                cut -= 1
        return cut


class CitationFreeChatModel(BaseChatModel):
    """``inner``'s answers with citations removed, token by token and whole.

    The inner model's generation is called directly, so its own callbacks (constructor
    handlers) do not see the raw tokens; this model's run carries ``inner``'s handlers
    instead, and they see the filtered stream."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    strip: Callable[[str], str]

    @classmethod
    def around(cls, inner: BaseChatModel, strip: Callable[[str], str]) -> CitationFreeChatModel:
        return cls(inner=inner, strip=strip, callbacks=inner.callbacks, tags=inner.tags,
                   metadata=inner.metadata)

    @property
    def _llm_type(self) -> str:
        return f"citation-free-{self.inner._llm_type}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return dict(self.inner._identifying_params)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput,
                                                                           AIMessage]:
        # The inner model formats the tools for its API; this model passes them on.
        bound = self.inner.bind_tools(tools, **kwargs)
        if not isinstance(bound, RunnableBinding):
            return bound  # pragma: no cover - every chat model binds through bind()
        return self.bind(**bound.kwargs)

    def _should_stream(self, *, async_api: bool, run_manager: Any = None,
                       **kwargs: Any) -> bool:
        # As the inner model would decide for this run (its own streaming setting, or a
        # streaming handler of the run): its whole-answer path does not stream.
        return bool(self.inner._should_stream(async_api=async_api, run_manager=run_manager,
                                              **kwargs))

    # -- whole answers ----------------------------------------------------------------------
    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        return self._cleaned(self.inner._generate(messages, stop=stop, **kwargs))

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        return self._cleaned(await self.inner._agenerate(messages, stop=stop, **kwargs))

    def _cleaned(self, result: ChatResult) -> ChatResult:
        generations = []
        for generation in result.generations:
            message = generation.message
            if isinstance(message.content, str) and (".md#L" in message.content
                                                     or ".jsonl#L" in message.content):
                message = message.model_copy(update={"content": self.strip(message.content)})
            generations.append(ChatGeneration(message=message,
                                              generation_info=generation.generation_info))
        return ChatResult(generations=generations, llm_output=result.llm_output)

    # -- token streams ----------------------------------------------------------------------
    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        gate = CitationStreamFilter(self.strip)
        for chunk in self.inner._stream(messages, stop=stop, **kwargs):
            out = self._filtered(chunk, gate)
            if run_manager is not None and out.text:
                run_manager.on_llm_new_token(out.text, chunk=out)
            yield out
        tail = self._tail(gate)
        if tail is not None:
            if run_manager is not None:
                run_manager.on_llm_new_token(tail.text, chunk=tail)
            yield tail

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        gate = CitationStreamFilter(self.strip)
        async for chunk in self.inner._astream(messages, stop=stop, **kwargs):
            out = self._filtered(chunk, gate)
            if run_manager is not None and out.text:
                await run_manager.on_llm_new_token(out.text, chunk=out)
            yield out
        tail = self._tail(gate)
        if tail is not None:
            if run_manager is not None:
                await run_manager.on_llm_new_token(tail.text, chunk=tail)
            yield tail

    @staticmethod
    def _filtered(chunk: ChatGenerationChunk, gate: CitationStreamFilter) -> ChatGenerationChunk:
        message = chunk.message
        if not isinstance(message.content, str) or not message.content:
            return chunk
        shown = gate.feed(message.content)
        return ChatGenerationChunk(message=message.model_copy(update={"content": shown}),
                                   generation_info=chunk.generation_info)

    @staticmethod
    def _tail(gate: CitationStreamFilter) -> ChatGenerationChunk | None:
        rest = gate.finish()
        return ChatGenerationChunk(message=AIMessageChunk(content=rest)) if rest else None
