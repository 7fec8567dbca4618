"""A second connection that reads in a search's own snapshot, while the first goes on.

A search on PostgreSQL is a dozen statements, each a round trip to the server, run in one
repeatable-read snapshot on the memory's connection. The vector side (an HNSW walk, the
largest single statement at a million chunks: about 10 ms) does not depend on the keyword
side's statements, so it runs on a second connection at the same time: the search's
transaction exports its snapshot (``pg_export_snapshot``), and the second connection's
transaction imports it (``SET TRANSACTION SNAPSHOT``), so both sides read exactly the same
rows. The connection is opened on first use and serves one task at a time.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from openclaw_memory.errors import StoreError
from openclaw_memory.postgres.connection import Database
from openclaw_memory.postgres.tenant import Tenant

__all__ = ["SideConnection"]

T = TypeVar("T")
_SNAPSHOT_ID = re.compile(r"[0-9A-Fa-f]+(-[0-9A-Fa-f]+)+")


class SideConnection:
    """Runs work on its own connection inside a snapshot exported by another transaction."""

    def __init__(self, tenant: Tenant) -> None:
        self.tenant = tenant
        self._lock = threading.Lock()
        self._side: Tenant | None = None
        self._pool: ThreadPoolExecutor | None = None

    def _open(self) -> tuple[Tenant, ThreadPoolExecutor]:
        with self._lock:
            if self._side is None or self._pool is None:
                db = Database(self.tenant.db.dsn, application_name="openclaw-memory-side",
                              limits=self.tenant.db.limits)
                self._side = Tenant(db, self.tenant.id, self.tenant.name)
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ocm-side")
            return self._side, self._pool

    def submit(self, conn: Any, work: Callable[[Tenant], T]) -> Future[T]:
        """Run ``work`` on the side connection in the snapshot of ``conn``'s open
        repeatable-read transaction, which must stay open until the result is read."""
        snapshot = str(conn.execute("select pg_export_snapshot()").fetchone()[0])
        if not _SNAPSHOT_ID.fullmatch(snapshot):  # spliced into SET below: never anything else
            raise StoreError(f"unexpected snapshot id {snapshot!r}")
        side, pool = self._open()

        def task() -> T:
            with side.db.transaction("vector search failed") as side_conn:
                side_conn.execute("set transaction isolation level repeatable read, read only")
                side_conn.execute(f"set transaction snapshot '{snapshot}'")
                return work(side)
        return pool.submit(task)

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            if self._side is not None:
                self._side.db.close()
            self._side, self._pool = None, None
