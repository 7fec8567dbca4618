"""A search outcome as the caller gets it: mode, provider, notes, and a warning with an action
when vector search is unavailable (the same wording OpenClaw's tools pass on to the model)."""

from __future__ import annotations

from typing import Literal

from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.factory import ProviderChoice
from openclaw_memory.errors import EmbeddingError
from openclaw_memory.search.pipeline import SearchOutcome
from openclaw_memory.types import SearchResponse

CitationMode = Literal["auto", "on", "off"]

__all__ = ["build_response"]


def build_response(outcome: SearchOutcome, choice: ProviderChoice,
                   provider: EmbeddingProvider | None, *, vector_path: str,
                   citations: CitationMode, stale: bool, empty_hint: str | None) -> SearchResponse:
    """``empty_hint``: set when nothing is indexed at all; it replaces "nothing relevant"."""
    notes = list(outcome.notes)
    if empty_hint is not None:
        notes = [note for note in notes if not note.startswith("nothing relevant")] + [empty_hint]
    if choice.unavailable_reason:
        notes.append(f"keyword-only: {choice.unavailable_reason}")
    warning, action = _warning(choice, outcome.embedding_error)
    error = outcome.embedding_error
    return SearchResponse(
        results=outcome.hits, provider=provider.id if provider else "none",
        model=provider.model if provider else None, mode=outcome.mode,
        citations=citations, vector_path=vector_path,
        fallback=choice.fallback, stale=stale,
        error=str(error) if error else None, warning=warning, action=action,
        notes=tuple(notes), low_confidence_results=outcome.low_confidence)


def _warning(choice: ProviderChoice, error: EmbeddingError | None) -> tuple[str | None, str | None]:
    if error is not None:
        if _quota_exhausted(error):
            return ("Vector search is unavailable: the embedding provider quota is exhausted.",
                    "Top up or switch the embedding provider; keyword results are shown.")
        return ("Vector search is unavailable due to an embedding provider error.",
                "Check the embedding provider configuration; keyword results are shown.")
    if choice.unavailable_reason and choice.requested != "none":
        return (f"Vector search is unavailable: {choice.unavailable_reason}",
                "Check the embedding provider settings (key, base_url, model); "
                "keyword results are shown.")
    return None, None


def _quota_exhausted(error: EmbeddingError) -> bool:
    text = str(error).lower()
    return "quota" in text or error.status == 429
