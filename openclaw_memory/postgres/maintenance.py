"""Keeping a workspace's tables fast to search: the planner's statistics after a bulk change,
and the HNSW index of the workspace's vector width."""

from __future__ import annotations

from typing import Any

from openclaw_memory.postgres.connection import Database
from openclaw_memory.postgres.meta import set_meta
from openclaw_memory.postgres.schema import SCHEMA
from openclaw_memory.postgres.search_side import HNSW_WITH, hnsw_build_mb
from openclaw_memory.postgres.tenant import Tenant

__all__ = ["analyze", "ensure_vector_index", "statistics_stale"]

_ANALYZED_KEY = "chunks_at_last_analyze"


def statistics_stale(tenant: Tenant) -> bool:
    """The workspace grew or shrank by more than a tenth since this library last
    refreshed the statistics (autovacuum does too, on its own schedule)."""
    rows = tenant.rows(
        f"select (select count(*) from {SCHEMA}.chunks where workspace = %(ws)s), "
        f"(select value from {SCHEMA}.meta where workspace = %(ws)s and key = %(k)s)",
        {"k": _ANALYZED_KEY})
    now, then = int(rows[0][0]), int(rows[0][1] or 0)
    return abs(now - then) > 0.1 * then


def analyze(db: Database, tenant: Tenant) -> None:
    """Refresh the planner's statistics after a bulk change: right after a large publish
    they still describe the old table, and the planner then sorts every row of a
    workspace instead of walking the HNSW or GIN index (30 ms instead of 1 at 5k rows).
    Autovacuum does the same later; a sync or publish should not leave searches slow
    until it does."""
    with db.transaction("cannot refresh planner statistics",
                        timeout_s=db.limits.maintenance_timeout_s) as conn:
        conn.execute(f"analyze {SCHEMA}.chunks")
        conn.execute(f"analyze {SCHEMA}.documents")
        count = tenant.run(conn, f"select count(*) from {SCHEMA}.chunks "
                           "where workspace = %(ws)s").fetchone()[0]
        set_meta(tenant, conn, _ANALYZED_KEY, str(int(count)))


def ensure_vector_index(db: Database, tenant: Tenant, build_mb: int) -> bool:
    """Create the HNSW index of this workspace's vector width if none exists; whether it
    was created (one width per workspace: the fingerprint rebuilds on a model change)."""
    rows = tenant.rows(f"select dims from {SCHEMA}.chunks where workspace = %(ws)s "
                       "and dims is not null limit 1")
    if not rows:
        return False
    dims = int(rows[0][0])
    name = f"chunks_hnsw_{dims}"
    with db.transaction("cannot create the vector index",
                        timeout_s=db.limits.maintenance_timeout_s) as conn:
        if conn.execute("select to_regclass(%s)", (f"{SCHEMA}.{name}",)).fetchone()[0]:
            return False
        # A graph that does not fit maintenance_work_mem (64 MB by default) is built
        # several times slower; what it needs is asked for, up to the setting, and held
        # only while it builds.
        conn.execute(f"set local maintenance_work_mem = '{_build_mb(conn, dims, build_mb)}MB'")
        conn.execute(f"create index if not exists {name} on {SCHEMA}.chunks using hnsw "
                     f"((embedding::vector({dims})) vector_cosine_ops) {HNSW_WITH} "
                     f"where dims = {dims}")
    return True


def _build_mb(conn: Any, dims: int, setting: int) -> int:
    # Counted over every workspace (a count, no rows read out): the index of a width is
    # shared by all of them.
    count = int(conn.execute(f"select count(*) from {SCHEMA}.chunks "
                             f"where dims = {dims}").fetchone()[0])
    return hnsw_build_mb(count, dims, setting)
