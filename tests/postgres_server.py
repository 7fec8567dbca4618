"""The tests' PostgreSQL: the package's scratch server (openclaw_memory/postgres/scratch.py)."""

from openclaw_memory.postgres.scratch import PostgresServer, running_postgres

__all__ = ["PostgresServer", "running_postgres"]
