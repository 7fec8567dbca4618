"""One exception tree for the whole package.

Callers catch :class:`OpenClawMemoryError` to handle anything we raise on purpose; the
subclasses say which boundary failed so adapters (CLI, LangChain tools) can translate them.
"""

from __future__ import annotations

__all__ = [
    "DISTRIBUTION",
    "ConfigError",
    "ContentError",
    "EmbeddingError",
    "EvalInputError",
    "IndexCorruptError",
    "OpenClawMemoryError",
    "PathRefusedError",
    "ProviderUnavailableError",
    "StoreError",
    "SyncCancelledError",
    "WatchError",
    "WorkspaceError",
    "install_hint",
]

# The name this library is installed by (the import package is ``openclaw_memory``): every
# install hint is built here, so none can name another project's distribution.
DISTRIBUTION = "langchain-openclaw-memory"


def install_hint(extra: str) -> str:
    """The command that installs an optional extra, for error messages."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


class OpenClawMemoryError(Exception):
    """Base class of every error this package raises deliberately."""


class ConfigError(OpenClawMemoryError, ValueError):
    """Settings that cannot work together (e.g. an unknown provider), or a bad setting value
    (a ``ValueError`` too, as pydantic's validation errors are, so either catch works)."""


class EvalInputError(OpenClawMemoryError, ValueError):
    """An evaluation queries file or suite that cannot be scored (the message names the line)."""


class ContentError(OpenClawMemoryError, ValueError):
    """Text that cannot be stored as a note (empty, NUL bytes, lone surrogates)."""


class WorkspaceError(OpenClawMemoryError):
    """The workspace folder is missing, unreadable or read-only when a write was asked."""


class PathRefusedError(OpenClawMemoryError):
    """A path failed the workspace path-safety gate.

    The message is deliberately the same for every violation so that it reveals nothing
    about the file system (existence of files outside the workspace, symlink targets).
    """

    def __init__(self, message: str = "path refused: only MEMORY.md, memory/**/*.md and "
                 "configured extra paths inside the workspace may be read or written") -> None:
        super().__init__(message)


class StoreError(OpenClawMemoryError):
    """The SQLite index could not be opened, migrated or written."""


class IndexCorruptError(StoreError):
    """The index file is not an SQLite database of ours (corrupt or foreign)."""


class SyncCancelledError(OpenClawMemoryError):
    """A background sync stopped between files because its index is closing (nothing is lost:
    every file is swapped in its own transaction, and the next sync finishes the job)."""


class WatchError(OpenClawMemoryError):
    """The file watcher could not start (e.g. the inotify watch limit is exhausted)."""


class EmbeddingError(OpenClawMemoryError):
    """An embedding provider failed after its retries.

    ``status`` is the HTTP status when there was one; ``retry_after`` the server's advice in
    seconds when it gave one; ``retryable`` whether waiting could help; ``unreachable`` that
    nothing answered at the address (refused, no route, unknown host): retried only briefly.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.retryable = retryable
        self.unreachable = unreachable


class ProviderUnavailableError(EmbeddingError):
    """A provider cannot be built at all (missing key, missing model files, bad config)."""
