"""openclaw-memory: durable, searchable Markdown memory for LangChain and LangGraph agents.

Markdown files are the source of truth; a SQLite index (FTS5 + sqlite-vec, or a numpy
fallback) answers hybrid searches with line-exact citations. Start with :class:`MemoryIndex`.
"""

from openclaw_memory import _platform  # noqa: F401  (first: it refuses unsupported systems)
from openclaw_memory.config import (
    ChunkingSettings,
    EmbeddingSettings,
    MemorySettings,
    SearchSettings,
    SessionSettings,
    StoreSettings,
    SyncSettings,
)
from openclaw_memory.errors import (
    DISTRIBUTION,
    ConfigError,
    ContentError,
    EmbeddingError,
    IndexCorruptError,
    OpenClawMemoryError,
    PathRefusedError,
    ProviderUnavailableError,
    StoreError,
    SyncCancelledError,
    WatchError,
    WorkspaceError,
)
from openclaw_memory.files.notes import NoteText, RelatedLine, WriteResult
from openclaw_memory.files.sample import sample_workspace
from openclaw_memory.freshness.triggers import SyncOutcome
from openclaw_memory.freshness.watch import MemoryWatcher
from openclaw_memory.index import ChatType, MemoryIndex
from openclaw_memory.memory_base import Memory
from openclaw_memory.opening import open_memory
from openclaw_memory.types import (
    Chunk,
    HitExplanation,
    MemoryFile,
    SearchHit,
    SearchResponse,
    SkippedFile,
    SyncReport,
)

try:  # pyproject.toml is the one place the version is written
    from importlib.metadata import version as _version

    __version__ = _version(DISTRIBUTION)
except Exception:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "DISTRIBUTION",
    "ChatType",
    "Chunk",
    "ChunkingSettings",
    "ConfigError",
    "ContentError",
    "EmbeddingError",
    "EmbeddingSettings",
    "HitExplanation",
    "IndexCorruptError",
    "Memory",
    "MemoryFile",
    "MemoryIndex",
    "MemorySettings",
    "MemoryWatcher",
    "NoteText",
    "OpenClawMemoryError",
    "PathRefusedError",
    "ProviderUnavailableError",
    "RelatedLine",
    "SearchHit",
    "SearchResponse",
    "SearchSettings",
    "SessionSettings",
    "SkippedFile",
    "StoreError",
    "StoreSettings",
    "SyncCancelledError",
    "SyncOutcome",
    "SyncReport",
    "SyncSettings",
    "WatchError",
    "WorkspaceError",
    "WriteResult",
    "open_memory",
    "sample_workspace",
]
