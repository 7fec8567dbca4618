"""The base of every settings model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["FrozenSettings"]


class FrozenSettings(BaseModel):
    """Frozen (settings are shared between threads and fingerprinted) and strict: an unknown
    key is an error, so a misspelt setting in a file or the environment is never ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid")
