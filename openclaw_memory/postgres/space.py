"""The database's documents as a :class:`~openclaw_memory.files.space.DocumentSpace`: the
VectorStore's and the LangGraph store's items as rows, each indexed as it is written."""

from __future__ import annotations

from typing import Literal, Protocol

from openclaw_memory.errors import PathRefusedError
from openclaw_memory.files.docpaths import document_path
from openclaw_memory.files.space import DocumentSpace
from openclaw_memory.postgres.schema import SCHEMA
from openclaw_memory.postgres.tenant import Tenant
from openclaw_memory.store.paths import prefix_range

__all__ = ["DatabaseSpace"]


class _Documents(Protocol):
    """What this space uses of :class:`~openclaw_memory.postgres.PostgresMemory`."""

    tenant: Tenant

    def documents_bytes(self, path: str) -> bytes | None: ...

    def put_document(self, path: str, body: bytes) -> None: ...

    def delete_document(self, path: str) -> bool: ...


class DatabaseSpace(DocumentSpace):
    def __init__(self, memory: _Documents) -> None:
        self.memory = memory

    def check(self, rel_path: str, *, purpose: Literal["read", "write"] = "read") -> str:
        return document_path(rel_path)[0]  # the same allowlist for reading and writing

    def read(self, rel_path: str) -> bytes | None:
        try:
            return self.memory.documents_bytes(rel_path)
        except PathRefusedError:
            return None

    def write(self, rel_path: str, data: bytes) -> bool:
        if self.memory.documents_bytes(rel_path) == data:
            return False
        self.memory.put_document(rel_path, data)
        return True

    def remove(self, rel_path: str) -> bool:
        return self.memory.delete_document(rel_path)

    def paths(self, folder: str) -> list[str]:
        low, high = prefix_range(folder.strip("/") + "/")
        rows = self.memory.tenant.rows(
            f"select path from {SCHEMA}.documents where workspace = %(ws)s and path >= %(lo)s "
            "and path < %(hi)s order by path", {"lo": low, "hi": high})
        return [str(r[0]) for r in rows]

    def settle(self, reason: str) -> None:
        return None  # every write was indexed in its own transaction
