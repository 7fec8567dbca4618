"""A deterministic feature-hashing embedder: real vectors, no model, identical in every process.

The crash and concurrency tests need vectors (so the vec0 table and the numpy column are
exercised) from several processes, many times over; the MiniLM model costs ~0.17 CPU-s per
chunk, so it is used only where it matters (the kill-during-embedding test).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")


class HashingEmbedder(EmbeddingProvider):
    """Signed feature hashing of lower-cased words into ``dims`` buckets."""

    id = "hashing"
    max_input_tokens = 1_000_000

    def __init__(self, dims: int = 32) -> None:
        super().__init__(dims=dims)
        self.model = f"hashing-{dims}"
        self.provider_key = f"hashing-{dims}-blake2b"
        self.calls = 0

    def _embed(self, texts: list[str]) -> FloatArray:
        self.calls += 1
        dims = self.dims or 32
        out = np.zeros((len(texts), dims), np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % dims
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            out[row, len(text) % dims] += 1e-3  # never all-zero; a function of the text alone
        return out
