"""The database schema, as numbered migrations applied once each, in order.

Every table lives in the ``openclaw_memory`` schema and every row of the data tables
carries its workspace: one database serves many workspaces (agents, users). Migrations run
under an advisory lock, so replicas starting together apply each exactly once; a database
migrated by a newer version than this one is refused rather than written to.
"""

from __future__ import annotations

from typing import Any

from openclaw_memory.errors import StoreError
from openclaw_memory.postgres.connection import Database

__all__ = ["MIGRATIONS", "SCHEMA", "SCHEMA_VERSION", "migrate", "text_config"]

SCHEMA = "openclaw_memory"
_LOCK_KEY = 0x6F636D  # "ocm": the advisory lock migrations take

MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (1, "workspaces, documents, chunks, keyword configuration", (
        "create extension if not exists vector",
        f"""create table {SCHEMA}.workspaces (
              id bigserial primary key,
              name text not null unique,
              fingerprint text,
              created_at timestamptz not null default now())""",
        f"""create table {SCHEMA}.meta (
              workspace bigint not null references {SCHEMA}.workspaces(id) on delete cascade,
              key text not null,
              value text not null,
              primary key (workspace, key))""",
        f"""create table {SCHEMA}.documents (
              workspace bigint not null references {SCHEMA}.workspaces(id) on delete cascade,
              path text not null,
              body bytea not null,
              hash text not null,
              updated_at timestamptz not null default now(),
              primary key (workspace, path))""",
        f"""create table {SCHEMA}.chunks (
              id bigserial primary key,
              workspace bigint not null,
              path text not null,
              cid text not null,
              start_line integer not null,
              end_line integer not null,
              hash text not null,
              text text not null,
              tsv tsvector not null,
              dims integer,
              embedding vector,
              foreign key (workspace, path)
                references {SCHEMA}.documents(workspace, path) on delete cascade)""",
        # Vectors inline when they fit (512 floats do): out of line, every exact distance
        # read a TOAST chunk chain (18 ms for 5k rows instead of about 3).
        f"alter table {SCHEMA}.chunks alter column embedding set storage main",
        # Statistics on 10 000 lexemes (the default tracks 1 000): term counts estimate every
        # word ANALYZE tracks from them and count only rarer ones (postgres/term_counts.py).
        f"alter table {SCHEMA}.chunks alter column tsv set statistics 1000",
        f"create index chunks_place on {SCHEMA}.chunks (workspace, path, start_line)",
        f"create index chunks_newest on {SCHEMA}.chunks (workspace, id)",
        f"create index chunks_hash on {SCHEMA}.chunks (workspace, hash)",
        # A small pending list (256 kB, not the default 4 MB): writes still go in batches
        # (1.6x faster than without one), and no search scans more than 256 kB of unsorted
        # entries; with 4 MB a query took 4.9 ms instead of 0.07 and the planner, seeing the
        # list, walked past the index.
        f"create index chunks_tsv on {SCHEMA}.chunks using gin (tsv) "
        "with (fastupdate = on, gin_pending_list_limit = 256)",
        # English stems without a stop-word list (FTS5's porter keeps every word too: the
        # query side removes function words itself), every other token as it is.
        f"""create text search dictionary {SCHEMA}.english_stem_all
              (template = snowball, language = english)""",
        f"create text search configuration {SCHEMA}.porter (copy = pg_catalog.simple)",
        f"""alter text search configuration {SCHEMA}.porter alter mapping for
              asciiword, asciihword, hword_asciipart, word, hword, hword_part
              with {SCHEMA}.english_stem_all""",
    )),
    (2, "dated file names indexed", (
        # Questions naming a date read the daily files of that period: found by the name's
        # last 13 characters (YYYY-MM-DD.md, compared bytewise: names of one shape sort as
        # their dates do) instead of reading every dated path of the workspace.
        f"""create index documents_day on {SCHEMA}.documents
              (workspace, (right(path, 13)) collate "C") where path like '%-__-__.md'""",
    )),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def text_config(tokenizer: str) -> str:
    """The text search configuration matching ``store.fts_tokenizer``."""
    return f"{SCHEMA}.porter" if tokenizer == "porter" else "pg_catalog.simple"


def migrate(db: Database) -> int:
    """Bring the schema to :data:`SCHEMA_VERSION`; returns how many migrations ran."""
    with db.transaction("cannot prepare the openclaw_memory schema",
                        timeout_s=db.limits.maintenance_timeout_s) as conn:
        conn.execute("select pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute(f"create schema if not exists {SCHEMA}")
        conn.execute(f"""create table if not exists {SCHEMA}.schema_migrations (
                           version integer primary key,
                           description text not null,
                           applied_at timestamptz not null default now())""")
        done = {int(r[0]) for r in conn.execute(f"select version from {SCHEMA}.schema_migrations")}
        newest = max(done, default=0)
        if newest > SCHEMA_VERSION:
            raise StoreError(
                f"the database's openclaw_memory schema is version {newest}, newer than this "
                f"library's {SCHEMA_VERSION}: upgrade openclaw-memory; nothing was changed")
        ran = 0
        for version, description, statements in MIGRATIONS:
            if version in done:
                continue
            _run(conn, statements)
            conn.execute(f"insert into {SCHEMA}.schema_migrations(version, description) "
                         "values (%s, %s)", (version, description))
            ran += 1
        return ran


def _run(conn: Any, statements: tuple[str, ...]) -> None:
    for statement in statements:
        conn.execute(statement)
