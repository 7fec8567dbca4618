"""Embedding providers: local MiniLM (offline default), OpenAI-compatible HTTP, LangChain.

Build one with :func:`create_provider`; wrap it in :class:`CachedProvider` to skip texts
embedded before.
"""

from __future__ import annotations

from openclaw_memory.embeddings.base import EmbeddingProvider, normalize_rows, provider_key_for
from openclaw_memory.embeddings.cache import (
    CacheBackend,
    CachedProvider,
    MemoryCacheBackend,
    text_hash,
)
from openclaw_memory.embeddings.factory import (
    ProviderChoice,
    activate_fallback,
    build_provider,
    create_provider,
)
from openclaw_memory.embeddings.langchain import LangChainEmbeddingsProvider
from openclaw_memory.embeddings.local import LocalProvider
from openclaw_memory.embeddings.openai import OpenAIProvider
from openclaw_memory.embeddings.retry import parse_retry_after, retry_call

__all__ = [
    "CacheBackend",
    "CachedProvider",
    "EmbeddingProvider",
    "LangChainEmbeddingsProvider",
    "LocalProvider",
    "MemoryCacheBackend",
    "OpenAIProvider",
    "ProviderChoice",
    "activate_fallback",
    "build_provider",
    "create_provider",
    "normalize_rows",
    "parse_retry_after",
    "provider_key_for",
    "retry_call",
    "text_hash",
]
