"""A workspace's own counters and values in the shared ``meta`` table (flush bookkeeping,
the chunk count at the last ANALYZE)."""

from __future__ import annotations

from typing import Any

from openclaw_memory.postgres.schema import SCHEMA
from openclaw_memory.postgres.tenant import Tenant

__all__ = ["bump_meta", "read_meta", "set_meta"]


def bump_meta(tenant: Tenant, conn: Any, key: str) -> None:
    """Add one to the counter ``key`` (created at 1)."""
    tenant.run(conn, f"insert into {SCHEMA}.meta(workspace, key, value) values "
               "(%(ws)s, %(k)s, '1') on conflict (workspace, key) do update set "
               "value = (meta.value::bigint + 1)::text", {"k": key})


def set_meta(tenant: Tenant, conn: Any, key: str, value: str) -> None:
    tenant.run(conn, f"insert into {SCHEMA}.meta(workspace, key, value) values "
               "(%(ws)s, %(k)s, %(v)s) on conflict (workspace, key) do update set "
               "value = excluded.value", {"k": key, "v": value})


def read_meta(tenant: Tenant) -> dict[str, str]:
    return {str(k): str(v) for k, v in tenant.rows(
        f"select key, value from {SCHEMA}.meta where workspace = %(ws)s")}
