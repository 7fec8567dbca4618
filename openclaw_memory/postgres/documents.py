"""Memory documents stored in PostgreSQL, and their chunks written in the same transaction.

A document is a Markdown file's bytes under its workspace-relative path. Every change of a
document re-chunks it and swaps its chunk rows in the transaction that changes it, so a note
is searchable the moment its write commits and a killed writer leaves neither a half note
nor chunks of a note that is not there. An append locks the document's row (``for update``):
concurrent appenders to one daily file queue on it, each adding its block after the last.

Vectors of chunks whose text is already indexed in the workspace are copied from those rows
(an append re-embeds only the file's last chunk or two); new text is embedded while the row is
locked, so a slow embedding API slows the writers of that one file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from openclaw_memory.config import MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider, invalid_rows
from openclaw_memory.errors import ContentError, EmbeddingError
from openclaw_memory.files.reading import decode_text
from openclaw_memory.files.workspace import HISTORY_DIR
from openclaw_memory.indexing.chunking import blank_front_matter, chunk_text, editor_lines_text
from openclaw_memory.postgres.schema import SCHEMA
from openclaw_memory.postgres.tenant import Tenant
from openclaw_memory.postgres.values import pg_body, vector_literal
from openclaw_memory.store.rows import chunk_id
from openclaw_memory.types import Chunk

__all__ = ["DocumentIndexer", "IndexedDocument", "document_hash"]


def document_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


@dataclass(frozen=True)
class IndexedDocument:
    path: str
    chunks: int
    embedded: int
    vectors_missing: int


class DocumentIndexer:
    """Writes documents and their chunk rows for one workspace."""

    def __init__(self, tenant: Tenant, settings: MemorySettings,
                 provider: EmbeddingProvider | None, text_config: str) -> None:
        self.tenant = tenant
        self.settings = settings
        self.provider = provider
        self.config = text_config
        self.warnings: list[str] = []

    # -- reading ------------------------------------------------------------------------------
    def body(self, conn: Any, path: str, *, lock: bool = False) -> bytes | None:
        row = self.tenant.run(
            conn, f"select body from {SCHEMA}.documents where workspace = %(ws)s and path = %(p)s"
            + (" for update" if lock else ""), {"p": path}).fetchone()
        return None if row is None else bytes(row[0])

    def any(self) -> bool:
        """Whether the workspace holds a document (a search that found nothing says why
        when it holds none): one index probe, where listing them read a million rows."""
        rows = self.tenant.rows(f"select exists(select 1 from {SCHEMA}.documents "
                                "where workspace = %(ws)s)")
        return bool(rows[0][0])

    def hashes(self) -> dict[str, str]:
        rows = self.tenant.rows(f"select path, hash from {SCHEMA}.documents "
                                "where workspace = %(ws)s")
        return {str(p): str(h) for p, h in rows}

    # -- writing ------------------------------------------------------------------------------
    def lock_for_append(self, conn: Any, path: str) -> bytes:
        """The document's bytes with its row locked until the transaction ends (an empty
        document is created first, so that two first appends also queue on one row)."""
        self.tenant.run(conn, f"insert into {SCHEMA}.documents(workspace, path, body, hash) "
                        "values (%(ws)s, %(p)s, ''::bytea, %(h)s) on conflict do nothing",
                        {"p": path, "h": document_hash(b"")})
        body = self.body(conn, path, lock=True)
        return b"" if body is None else body

    def put(self, conn: Any, path: str, body: bytes, *, reuse_vectors: bool = True,
            ) -> IndexedDocument:
        """Store ``body`` as the document at ``path`` and replace its chunk rows."""
        self.tenant.run(
            conn, f"insert into {SCHEMA}.documents(workspace, path, body, hash) "
            "values (%(ws)s, %(p)s, %(b)s, %(h)s) on conflict (workspace, path) do update "
            "set body = excluded.body, hash = excluded.hash, updated_at = now()",
            {"p": path, "b": body, "h": document_hash(body)})
        return self.reindex(conn, path, body, reuse_vectors=reuse_vectors)

    def delete(self, conn: Any, path: str) -> bool:
        cur = self.tenant.run(conn, f"delete from {SCHEMA}.documents "
                              "where workspace = %(ws)s and path = %(p)s", {"p": path})
        return bool(cur.rowcount)

    def reindex(self, conn: Any, path: str, body: bytes, *, reuse_vectors: bool = True,
                ) -> IndexedDocument:
        """Make the document's chunk rows those of ``body``. Rows of chunks that did not move
        (same lines, same text) stay as they are: an append rewrites only the file's last
        chunk or two, not every row of a long daily file."""
        chunks = self.chunk(path, body)
        old = {(int(s), int(e), str(h)): int(i) for i, s, e, h in self.tenant.run(
            conn, f"select id, start_line, end_line, hash from {SCHEMA}.chunks "
            "where workspace = %(ws)s and path = %(p)s", {"p": path}).fetchall()}
        if not reuse_vectors:
            kept: set[tuple[int, int, str]] = set()
        else:
            kept = {(c.start_line, c.end_line, c.hash) for c in chunks} & set(old)
        added = [c for c in chunks if (c.start_line, c.end_line, c.hash) not in kept]
        known = self._known_hashes(conn, added) if reuse_vectors else set()
        fresh = [c for c in added if c.hash not in known]
        vectors = self._embed(fresh)
        model = self.provider.model if self.provider is not None else "fts-only"
        rows = []
        for chunk in added:
            row: dict[str, Any] = {
                "p": path, "cid": chunk_id(chunk, model), "s": chunk.start_line,
                "e": chunk.end_line, "h": chunk.hash, "t": chunk.text, "b": pg_body(chunk.text),
                "cfg": self.config, "v": None, "d": None}
            vector = vectors.get(chunk.hash)
            if vector is not None:
                row["v"], row["d"] = vector_literal(vector), int(vector.shape[0])
            rows.append(row)
        self.tenant.many(conn, self._insert_sql(), rows)
        gone = [i for key, i in old.items() if key not in kept]
        if gone:
            self.tenant.run(conn, f"delete from {SCHEMA}.chunks where workspace = %(ws)s "
                            "and id = any(%(old)s)", {"old": gone})
        missing = sum(1 for c in fresh if c.hash not in vectors) if self.provider else 0
        return IndexedDocument(path, len(chunks), len(fresh) - missing, missing)

    def _insert_sql(self) -> str:
        # A chunk whose text is indexed already takes that row's vector (%(v)s is null).
        reuse = (f"(select embedding from {SCHEMA}.chunks o where o.workspace = %(ws)s "
                 "and o.hash = %(h)s and o.embedding is not null limit 1)")
        dims = (f"(select dims from {SCHEMA}.chunks o where o.workspace = %(ws)s "
                "and o.hash = %(h)s and o.embedding is not null limit 1)")
        return (f"insert into {SCHEMA}.chunks(workspace, path, cid, start_line, end_line, hash, "
                "text, tsv, dims, embedding) values (%(ws)s, %(p)s, %(cid)s, %(s)s, %(e)s, "
                "%(h)s, %(t)s, to_tsvector(%(cfg)s::regconfig, %(b)s), "
                f"coalesce(%(d)s, {dims}), coalesce(%(v)s::vector, {reuse}))")

    def chunk(self, path: str, body: bytes) -> list[Chunk]:
        if path.startswith(f"{HISTORY_DIR}/"):
            return []  # kept for people and get(), never a hit: a retired fact is history
        text = decode_text(body)  # UTF-8, or UTF-16/32 with a byte-order mark
        if "\x00" in text:
            raise ContentError(f"{path} holds NUL bytes: not a text file")
        return chunk_text(blank_front_matter(editor_lines_text(text)), path=path,
                          source="memory", settings=self.settings.chunking)

    def _known_hashes(self, conn: Any, chunks: Sequence[Chunk]) -> set[str]:
        if not chunks:
            return set()
        rows = self.tenant.run(
            conn, f"select distinct hash from {SCHEMA}.chunks where workspace = %(ws)s "
            "and hash = any(%(hs)s) and embedding is not null",
            {"hs": [c.hash for c in chunks]}).fetchall()
        return {str(r[0]) for r in rows}

    def _embed(self, chunks: Sequence[Chunk]) -> dict[str, np.ndarray[Any, Any]]:
        if self.provider is None or not chunks:
            return {}
        unique = {c.hash: c.text for c in chunks}
        try:
            matrix = np.asarray(self.provider.embed_documents(list(unique.values())),
                                dtype=np.float32)
        except EmbeddingError as exc:
            # The text is indexed anyway (findable by keyword); sync() embeds it later.
            self.warnings.append(f"vectors unavailable ({exc}); text indexed, vectors "
                                 "added by the next sync")
            return {}
        bad = invalid_rows(matrix)
        return {h: matrix[i] for i, h in enumerate(unique) if not bad[i]}

    def backfill(self, conn: Any, limit: int) -> int:
        """Embed up to ``limit`` chunks stored without a vector; how many got one."""
        rows = self.tenant.run(
            conn, f"select id, hash, text from {SCHEMA}.chunks where workspace = %(ws)s "
            "and embedding is null order by id limit %(n)s", {"n": limit}).fetchall()
        if not rows or self.provider is None:
            return 0
        vectors = self._embed([Chunk("", "memory", 0, 0, str(t), str(h)) for _, h, t in rows])
        updates = [{"id": int(i), "v": vector_literal(vectors[str(h)]),
                    "d": int(vectors[str(h)].shape[0])}
                   for i, h, _ in rows if str(h) in vectors]
        self.tenant.many(conn, f"update {SCHEMA}.chunks set embedding = %(v)s::vector, "
                         "dims = %(d)s where workspace = %(ws)s and id = %(id)s", updates)
        return len(updates)
