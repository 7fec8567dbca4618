"""Values as PostgreSQL receives them: the text a tsvector is made of, vectors as literals."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from openclaw_memory.language.textsearch import fts_body

__all__ = ["pg_body", "vector_literal"]

_SEPARATORS = re.compile(r"[\W_]+")


def pg_body(text: str) -> str:
    """Text as the tsvector sees it: CJK characters apart (as in FTS5), and punctuation
    a separator, so ``db.internal`` or ``user@host`` are words as FTS5's tokenizer
    splits them, not one host or e-mail token of PostgreSQL's parser."""
    return _SEPARATORS.sub(" ", fts_body(text))


def vector_literal(vector: np.ndarray[Any, Any]) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"
