"""One workspace's view of the shared database: every statement is scoped to it.

Statements are written with a ``%(ws)s`` parameter that this module fills with the
workspace's id; a statement without it is refused before it reaches the server, so no query
of the backend can be written that reads or writes across workspaces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_memory.postgres.connection import Database, pg_errors
from openclaw_memory.postgres.schema import SCHEMA

__all__ = ["Tenant", "open_tenant"]


class Tenant:
    def __init__(self, db: Database, workspace_id: int, name: str) -> None:
        self.db = db
        self.id = workspace_id
        self.name = name

    def _params(self, sql: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        if "%(ws)s" not in sql:
            raise AssertionError(f"statement not scoped to a workspace: {sql[:80]}")
        return {**(params or {}), "ws": self.id}

    def rows(self, sql: str, params: Mapping[str, Any] | None = None, *,
             action: str = "database query failed") -> list[Any]:
        """Run one scoped statement in its own transaction; its rows (none for a write)."""
        with self.db.transaction(action) as conn:
            cur = self.run(conn, sql, params)
            return [] if cur.description is None else list(cur.fetchall())

    def run(self, conn: Any, sql: str, params: Mapping[str, Any] | None = None) -> Any:
        """One scoped statement inside a transaction the caller holds; its cursor."""
        return conn.execute(sql, self._params(sql, params))

    def many(self, conn: Any, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """One scoped statement for each of ``rows`` (a pipelined batch)."""
        if rows:
            with conn.cursor() as cur:
                cur.executemany(sql, [self._params(sql, r) for r in rows])


def open_tenant(db: Database, name: str) -> Tenant:
    """The workspace called ``name``, created on first use."""
    with pg_errors("cannot open the workspace"), db.transaction("cannot open the workspace") as c:
        c.execute(f"insert into {SCHEMA}.workspaces(name) values (%s) "
                  "on conflict (name) do nothing", (name,))
        row = c.execute(f"select id from {SCHEMA}.workspaces where name = %s", (name,)).fetchone()
    return Tenant(db, int(row[0]), name)
