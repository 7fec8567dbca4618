"""Versioned schema. Each migration is applied once, in order, inside one transaction.

The vec0 table is not part of the migrations: its dimension is only known after the first
embedding, and the extension may be missing; :mod:`.vectors` creates it lazily.
"""

from __future__ import annotations

from typing import Any

from openclaw_memory.errors import IndexCorruptError
from openclaw_memory.store.fts_table import ddl as fts_ddl
from openclaw_memory.store.fts_table import ensure_current as ensure_fts_current

__all__ = ["APPLICATION_ID", "FINGERPRINT_KEY", "SCHEMA_VERSION", "check_identity", "migrate"]

#: Written to the SQLite header so a foreign database is recognised before we touch it.
APPLICATION_ID = 0x4F434D45  # "OCME"

_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "create table meta(key text primary key, value text not null)",
        """create table files(
               path text primary key, source text not null, hash text not null,
               mtime_ns integer not null, size integer not null,
               chunks integer not null default 0, indexed_at real not null)""",
        """create table chunks(
               rowid integer primary key, id text not null unique, path text not null,
               source text not null, start_line integer not null, end_line integer not null,
               hash text not null, model text not null, text text not null, embedding blob,
               updated_at real not null)""",
        "create index chunks_path on chunks(path)",
        "create index chunks_source on chunks(source)",
        """create table embedding_cache(
               provider text not null, model text not null, provider_key text not null,
               hash text not null, embedding blob not null, dims integer not null,
               updated_at real not null,
               primary key(provider, model, provider_key, hash))""",
        "create index embedding_cache_updated on embedding_cache(updated_at)",
        """create table session_state(
               path text primary key, last_size integer not null default 0,
               pending_bytes integer not null default 0,
               pending_messages integer not null default 0)""",
    ),
    (
        # Schema 1's session_state was never written; it is replaced by what a transcript
        # looked like when it was indexed, so the delta thresholds survive restarts.
        "drop table session_state",
        """create table session_state(
               path text primary key, indexed_bytes integer not null,
               indexed_lines integer not null, malformed integer not null default 0,
               anchor text not null, indexed_at real not null)""",
    ),
    (
        # The cache no longer keeps a copy of every indexed vector (cache_rows.py): lookups
        # find indexed text's vectors in chunks, by hash.
        # The schema is part of the index fingerprint: the next sync rebuilds the index (its
        # vectors served from the old one, copied into the new cache), which leaves the
        # cache holding only vectors of text no longer indexed.
        "create index if not exists chunks_hash on chunks(hash)",
        # Chunks still waiting for a vector (deferred, or a provider outage): counted and
        # found at every sync without reading every row.
        "create index if not exists chunks_without_vector on chunks(rowid) "
        "where embedding is null",
    ),
)

#: meta key of the JSON that says what the rows were built with (indexing/sync.py).
FINGERPRINT_KEY = "fingerprint"

SCHEMA_VERSION = len(_MIGRATIONS)


def check_identity(conn: Any) -> int:
    """The schema version of an index of ours; IndexCorruptError for anything else."""
    # Tables first: each statement reads its own snapshot, and another process may create the
    # index between two of them. Our tables and our application id commit together, so once
    # the tables are seen, the header read after them carries the id.
    tables = {r[0] for r in conn.execute("select name from sqlite_master where type='table'")}
    app_id = conn.execute("pragma application_id").fetchone()[0]
    version = int(conn.execute("pragma user_version").fetchone()[0])
    if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables):
        raise IndexCorruptError("the index file is an SQLite database of another application")
    if version > SCHEMA_VERSION:
        raise IndexCorruptError(
            f"the index was written by a newer openclaw-memory (schema {version} > "
            f"{SCHEMA_VERSION})")
    return version


def migrate(conn: Any, *, fts_tokenizer: str) -> None:
    """Bring the schema to :data:`SCHEMA_VERSION`; refuse databases that are not ours."""
    version = check_identity(conn)
    if version < SCHEMA_VERSION:
        conn.execute("begin immediate")
        try:
            version = check_identity(conn)  # another process may have migrated meanwhile
            for statements in _MIGRATIONS[version:]:
                for sql in statements:
                    conn.execute(sql)
            conn.execute(f"pragma application_id = {APPLICATION_ID}")
            conn.execute(f"pragma user_version = {SCHEMA_VERSION}")
            conn.execute(fts_ddl(fts_tokenizer))
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
    else:
        conn.execute(fts_ddl(fts_tokenizer))
    try:
        ensure_fts_current(conn, fts_tokenizer)
    except Exception as exc:
        # Read-only or locked now: the table keeps its old form (status reports its drift,
        # deletes still work by rowid) and the next writable open converts it.
        if type(exc).__name__ != "OperationalError":
            raise
