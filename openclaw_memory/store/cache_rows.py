"""The embedding cache's rows, with every vector stored once.

While a chunk is indexed its vector lives in ``chunks.embedding`` and nowhere else; the
``embedding_cache`` table holds only the vectors of text that is no longer indexed (a line
edited away, a deleted file, the old index during a rebuild), so that re-indexing text seen
before costs no embedding. Before, every vector was also kept in the cache: 4.1 of the 12.5 KB
an index took per chunk.

A lookup therefore reads the cache and then the chunks (by text hash, through
``chunks_hash``), the latter only when the asking provider is the one whose vectors the index
holds: the identity recorded in the index fingerprint by sync.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from typing import Any

from openclaw_memory.store.schema import FINGERPRINT_KEY
from openclaw_memory.store.vectors import placeholders

__all__ = ["Identity", "claim", "copy_attached", "identity_of", "lookup", "retire"]

#: (provider id, model, provider key): whose vectors a cache row or an index holds.
Identity = tuple[str, str, str]

_BATCH = 500


def identity_of(fingerprint: str | None) -> Identity | None:
    """The provider identity an index fingerprint records; None without vectors."""
    if not fingerprint:
        return None
    try:
        data = json.loads(fingerprint)
        identity = (str(data["provider"]), str(data["model"]), str(data["provider_key"]))
    except (ValueError, KeyError, TypeError):
        return None
    return None if identity[0] == "none" else identity


def lookup(conn: Any, asked: Identity, indexed: Identity | None,
           hashes: Sequence[str]) -> dict[str, bytes]:
    """Stored vectors (raw float32 bytes) of the text hashes found, cache rows first."""
    out: dict[str, bytes] = {}
    for start in range(0, len(hashes), _BATCH):
        part = list(hashes[start:start + _BATCH])
        rows = conn.execute(
            f"select hash, embedding from embedding_cache where provider = ? and model = ? "
            f"and provider_key = ? and hash in ({placeholders(len(part))})", (*asked, *part))
        out.update({str(h): bytes(b) for h, b in rows})
    if asked != indexed:
        return out
    missing = [h for h in hashes if h not in out]
    for start in range(0, len(missing), _BATCH):
        part = missing[start:start + _BATCH]
        rows = conn.execute(
            f"select hash, embedding from chunks where hash in ({placeholders(len(part))}) "
            f"and embedding is not null", part)
        out.update({str(h): bytes(b) for h, b in rows})
    return out


def retire(conn: Any, identity: Identity | None, path: str, keep: Collection[str]) -> None:
    """Move the vectors of ``path``'s rows, about to be deleted, into the cache.

    ``keep`` are the hashes the same transaction stores again in ``chunks`` (the file's
    unchanged chunks): they are not written to the cache only to be removed from it.
    """
    if identity is None:
        return
    rows = conn.execute("select hash, embedding from chunks where path = ? and "
                        "embedding is not null", (path,)).fetchall()
    now = time.time()
    conn.executemany(
        "insert into embedding_cache(provider, model, provider_key, hash, embedding, dims, "
        "updated_at) values (?,?,?,?,?,?,?) on conflict do update set "
        "updated_at = excluded.updated_at",
        [(*identity, h, b, len(b) // 4, now) for h, b in rows if h not in keep])


def claim(conn: Any, identity: Identity | None, hashes: Collection[str]) -> None:
    """Drop the cache rows of vectors that ``chunks`` now holds."""
    if identity is None or not hashes:
        return
    listed = list(hashes)
    for start in range(0, len(listed), _BATCH):
        part = listed[start:start + _BATCH]
        conn.execute(
            f"delete from embedding_cache where provider = ? and model = ? and provider_key = ? "
            f"and hash in ({placeholders(len(part))})", (*identity, *part))


def copy_attached(conn: Any) -> int:
    """Seed this index's cache from the database attached as ``old``: its cache rows and the
    vectors of its chunks (under the provider identity its fingerprint records)."""
    copied = int(conn.execute(
        "insert or ignore into embedding_cache select * from old.embedding_cache").rowcount)
    row = conn.execute("select value from old.meta where key = ?", (FINGERPRINT_KEY,)).fetchone()
    identity = identity_of(row[0] if row else None)
    if identity is not None:
        copied += int(conn.execute(
            "insert or ignore into embedding_cache(provider, model, provider_key, hash, "
            "embedding, dims, updated_at) select ?, ?, ?, hash, embedding, "
            "length(embedding) / 4, ? from old.chunks where embedding is not null",
            (*identity, time.time())).rowcount)
    return copied
