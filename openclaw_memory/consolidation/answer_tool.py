"""The tool an internal chat turn answers with (consolidation's proposal, a write's review,
capture's notes): one OpenAI-style function whose parameters are a pydantic model's schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["answer_tool"]


def answer_tool(name: str, description: str, parameters: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI-style tool definition ``name``, answered with ``parameters``' fields."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": parameters.model_json_schema()}}
