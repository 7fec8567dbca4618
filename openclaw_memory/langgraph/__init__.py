"""LangGraph / LangChain-agent layer: pre-compaction flush, consolidation, auto-capture,
compaction, citation policy, scope, the Memory Recall prompt section and session-start context.

The graph nodes need only ``langchain-core`` and ``langgraph``. The ``*Middleware`` classes
are for ``langchain.agents.create_agent`` and need the ``agents`` extra
(``pip install 'langchain-openclaw-memory[agents]'``); without it they raise ``ImportError`` when built.
"""

from openclaw_memory.langgraph.capture import (
    CaptureReport,
    MemoryCapture,
    MemoryCaptureMiddleware,
    memory_capture_node,
)
from openclaw_memory.langgraph.citations import (
    MEMORY_TOOL_NAMES,
    CitationMode,
    CitationPolicy,
    CitationPolicyMiddleware,
    strip_citations,
    with_citation_policy,
)
from openclaw_memory.langgraph.compaction import (
    SUMMARY_PROMPT,
    Compaction,
    compaction_node,
    split_for_compaction,
)
from openclaw_memory.langgraph.consolidation import (
    CONSOLIDATION_PROMPT,
    MemoryConsolidation,
    MemoryConsolidationMiddleware,
    memory_consolidation_node,
)
from openclaw_memory.langgraph.context import LoadedFile, SessionContext, session_start_context
from openclaw_memory.langgraph.demo import DemoChatModel
from openclaw_memory.langgraph.flush import (
    FLUSH_PROMPT,
    FLUSH_SYSTEM_PROMPT,
    NO_REPLY,
    FlushReport,
    MemoryFlush,
    flush_threshold,
    is_silent_reply,
    memory_flush_node,
)
from openclaw_memory.langgraph.flush_middleware import MemoryFlushMiddleware
from openclaw_memory.langgraph.prompt import (
    MemoryRecallPromptMiddleware,
    build_system_prompt,
    memory_recall_section,
)
from openclaw_memory.langgraph.scope import current_context, resolve_chat_type
from openclaw_memory.langgraph.state import MemoryAgentState, MemoryGraphState
from openclaw_memory.langgraph.store import OpenClawMemoryStore

__all__ = [
    "CONSOLIDATION_PROMPT",
    "FLUSH_PROMPT",
    "FLUSH_SYSTEM_PROMPT",
    "MEMORY_TOOL_NAMES",
    "NO_REPLY",
    "SUMMARY_PROMPT",
    "CaptureReport",
    "CitationMode",
    "CitationPolicy",
    "CitationPolicyMiddleware",
    "Compaction",
    "DemoChatModel",
    "FlushReport",
    "LoadedFile",
    "MemoryAgentState",
    "MemoryCapture",
    "MemoryCaptureMiddleware",
    "MemoryConsolidation",
    "MemoryConsolidationMiddleware",
    "MemoryFlush",
    "MemoryFlushMiddleware",
    "MemoryGraphState",
    "MemoryRecallPromptMiddleware",
    "OpenClawMemoryStore",
    "SessionContext",
    "build_system_prompt",
    "compaction_node",
    "current_context",
    "flush_threshold",
    "is_silent_reply",
    "memory_capture_node",
    "memory_consolidation_node",
    "memory_flush_node",
    "memory_recall_section",
    "resolve_chat_type",
    "session_start_context",
    "split_for_compaction",
    "strip_citations",
    "with_citation_policy",
]
