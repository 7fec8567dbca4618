"""Versioned schema. Each migration is applied once, in order, inside one transaction.

The vec0 table is not part of the migrations: its dimension is only known after the first
embedding, and the extension may be missing; :mod:`.vectors` creates it lazily.
"""

from __future__ import annotations

from typing import Any

from openclaw_memory.errors import IndexCorruptError

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


#: First SQLite whose FTS5 can delete rows from a contentless table.
CONTENTLESS_DELETE_SINCE = (3, 43, 0)


def _fts_ddl(tokenizer: str, sqlite_version: str) -> str:
    tok = "porter unicode61 remove_diacritics 2" if tokenizer == "porter" else (
        "unicode61 remove_diacritics 2")
    # rowid = chunks.rowid; the body is the CJK-spaced text (see fts.py), not the raw text.
    # Nothing reads the body back (no snippet()/highlight(): snippets come from chunks.text),
    # so where SQLite allows deleting from a contentless table the body is not stored twice:
    # FTS5's own copy of every chunk's text was 1 KB of the 1.7 KB its index cost per chunk.
    # The option only applies when the table is created; an existing table keeps its kind.
    version = tuple(int(part) for part in sqlite_version.split(".")[:3])
    options = ", content='', contentless_delete=1" if version >= CONTENTLESS_DELETE_SINCE else ""
    return (f"create virtual table if not exists chunks_fts using fts5(body, tokenize='{tok}'"
            f"{options})")


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


def migrate(conn: Any, *, fts_tokenizer: str, sqlite_version: str) -> None:
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
            conn.execute(_fts_ddl(fts_tokenizer, sqlite_version))
            conn.execute("commit")
        except BaseException:
            conn.execute("rollback")
            raise
    else:
        conn.execute(_fts_ddl(fts_tokenizer, sqlite_version))
