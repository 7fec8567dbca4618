"""LangChain surface of openclaw-memory: retriever, VectorStore and agent tools.

Everything here is built on :class:`openclaw_memory.MemoryIndex`; the Markdown files stay the
source of truth.
"""

from openclaw_memory.langchain.retriever import OpenClawMemoryRetriever, format_docs
from openclaw_memory.langchain.scope import MemoryScope, ScopedMemory, ScopeError
from openclaw_memory.langchain.tools import (
    MemoryGetInput,
    MemoryGetTool,
    MemorySearchInput,
    MemorySearchTool,
    MemoryWriteInput,
    MemoryWriteTool,
    memory_tools,
)
from openclaw_memory.langchain.vectorstore import DEFAULT_FOLDER, OpenClawMemoryVectorStore

__all__ = [
    "DEFAULT_FOLDER",
    "MemoryGetInput",
    "MemoryGetTool",
    "MemoryScope",
    "MemorySearchInput",
    "MemorySearchTool",
    "MemoryWriteInput",
    "MemoryWriteTool",
    "OpenClawMemoryRetriever",
    "OpenClawMemoryVectorStore",
    "ScopeError",
    "ScopedMemory",
    "format_docs",
    "memory_tools",
]
