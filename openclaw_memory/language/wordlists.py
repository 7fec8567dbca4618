"""Word lists kept as data files (``openclaw_memory/data/*.json``), read into patterns.

One way to read them everywhere: English entries are whole words in any case (regular
expressions: "li(?:ve|ves)"), Chinese ones are matched as written (no spaces to bound them),
and an empty list matches nothing (an empty pattern would match everywhere).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

__all__ = ["NOTHING", "literal_pattern", "load", "word_pattern"]

#: A pattern that matches nothing.
NOTHING = r"(?!)"


def load(name: str) -> dict[str, Any]:
    """``data/<name>.json`` of the package."""
    text = resources.files("openclaw_memory").joinpath(f"data/{name}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def word_pattern(latin: Iterable[str], written: Iterable[str] = ()) -> re.Pattern[str]:
    """``latin`` forms (regular expressions) as whole words in any case, or a ``written``
    word as written."""
    forms = list(latin)
    parts = [r"(?i:\b(?:" + "|".join(forms) + r")\b)"] if forms else []
    parts.extend(written)
    return re.compile("|".join(parts) or NOTHING)


def literal_pattern(words: Iterable[str]) -> re.Pattern[str]:
    """:func:`word_pattern` of plain words: the Latin ones whole, the others as written."""
    listed = list(words)
    return word_pattern((re.escape(w) for w in listed if w.isascii()),
                        (re.escape(w) for w in listed if not w.isascii()))
