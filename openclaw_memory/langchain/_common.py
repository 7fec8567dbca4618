"""Small helpers the LangChain adapters share: citation policy and hit text."""

from __future__ import annotations

from typing import Literal

from openclaw_memory.index import ChatType
from openclaw_memory.search.snippets import citation, with_source_line
from openclaw_memory.types import SearchHit

__all__ = ["CitationMode", "citation_of", "citations_enabled", "hit_snippet", "hit_text"]

CitationMode = Literal["auto", "on", "off"]


def citations_enabled(mode: CitationMode, chat_type: ChatType) -> bool:
    """``auto`` cites in direct chats only; group and channel chats never see paths."""
    return mode == "on" or (mode == "auto" and chat_type == "direct")


def hit_text(hit: SearchHit) -> str:
    """The snippet without the ``Source:`` line the engine appends when citations are on.

    The engine strips the snippet before appending that line, so the text is stripped in
    both cases: a hit reads the same whatever the citation policy was.
    """
    snippet = hit.snippet
    if hit.citation is not None:
        suffix = f"\n\nSource: {hit.citation}"
        if snippet.endswith(suffix):
            snippet = snippet[: -len(suffix)]
    return snippet.strip()


def hit_snippet(hit: SearchHit, cite: bool) -> str:
    """The snippet as the model should see it under the given citation decision."""
    text = hit_text(hit)
    return with_source_line(text, citation_of(hit)) if cite else text


def citation_of(hit: SearchHit) -> str:
    """``path#Lx-Ly`` of a hit, also when the engine left it out (group chats)."""
    return hit.citation or citation(hit.path, hit.start_line, hit.end_line)
