"""The fallback provider's own index, for searches while the primary provider is down.

When ``embedding.fallback`` names a provider and the primary is found unavailable at run time
(its circuit breaker opened on timeouts, refused connections, 5xx, 429), searches are answered
from a second index of the same files embedded by the fallback provider: its own file beside
the primary's (``<index>.fallback-<provider>.sqlite``), so vectors of two models never mix.
It is opened and brought up to date the first time it is needed, synced before each search it
answers (incremental: notes written during the outage are found), and left alone once the
breaker's background probe finds the primary answering again: searches then go back to the
primary, whose next sync embeds what it missed. A sync during the outage syncs the
fallback's index too, so notes written meanwhile get the fallback's vectors at once.
Responses say so: ``fallback`` names the provider that failed and why, and a note says which
index answered.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.embeddings.factory import as_fallback
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.types import SearchResponse, SyncReport

__all__ = ["Standby", "StandbyIndex"]

logger = logging.getLogger(__name__)


class StandbyIndex(Protocol):
    def sync(self, *, full: bool = False) -> SyncReport: ...

    def search(self, query: str, *, max_results: int | None = None,
               min_score: float | None = None, sources: tuple[str, ...] | None = None,
               chat_type: Literal["direct", "group", "channel"] = "direct",
               path_filter: Callable[[str], bool] | None = None,
               path_prefix: str | None = None,
               now: datetime | None = None,
               max_injected_chars: int | None = None) -> SearchResponse: ...

    def close(self) -> None: ...


Opener = Callable[[MemorySettings, Path], StandbyIndex]


class Standby:
    """Opens, syncs and asks the fallback's index while the primary provider is down."""

    def __init__(self, settings: MemorySettings, primary_path: Path, opener: Opener) -> None:
        self.settings = settings
        self.target = settings.embedding.fallback
        self.path = primary_path.with_name(f"{primary_path.stem}.fallback-{self.target}.sqlite")
        self._opener = opener
        self._index: StandbyIndex | None = None
        self._lock = threading.Lock()
        self.answered = 0

    def applies(self, provider: EmbeddingProvider | None) -> bool:
        """Whether searches should go to the fallback's index now."""
        return (provider is not None and self.target != "none" and self.target != provider.id
                and provider.breaker.is_open)

    def search(self, provider: EmbeddingProvider, query: str,
               **options: Any) -> SearchResponse | None:
        """The fallback index's answer, or None when it cannot give one (the primary's
        keyword-only answer stands then)."""
        try:
            index = self._open()
            index.sync()
            response = index.search(query, **options)
        except OpenClawMemoryError as exc:
            logger.warning("the %s fallback index could not answer: %s", self.target, exc)
            return None
        self.answered += 1
        reason = provider.breaker.state().get("reason") or "unavailable"
        note = (f"answered from the {self.target} provider's own index ({self.path.name}) "
                f"while {provider.id} is unavailable")
        return dataclasses.replace(response, fallback={"from": provider.id, "reason": reason},
                                   notes=(*response.notes, note))

    def sync(self, provider: EmbeddingProvider | None) -> SyncReport | None:
        """Bring the fallback's index up to date while the primary is down (a sync then
        embeds the new notes with the fallback instead of leaving them keyword-only); None
        when the primary is up or the fallback's index cannot sync."""
        if not self.applies(provider):
            return None
        try:
            return self._open().sync()
        except OpenClawMemoryError as exc:
            logger.warning("the %s fallback index could not sync: %s", self.target, exc)
            return None

    def _open(self) -> StandbyIndex:
        with self._lock:
            if self._index is None:
                embedding = as_fallback(self.settings.embedding).model_copy(
                    update={"provider": self.target, "fallback": "none"})
                quiet = self.settings.sync.model_copy(update={"watch": False,
                                                              "interval_minutes": 0})
                settings = self.settings.model_copy(update={"embedding": embedding,
                                                            "sync": quiet})
                self._index = self._opener(settings, self.path)
            return self._index

    def status(self, provider: EmbeddingProvider | None) -> dict[str, Any]:
        return {"provider": self.target, "index_path": str(self.path),
                "active": self.applies(provider), "opened": self._index is not None,
                "searches_answered": self.answered}

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None
