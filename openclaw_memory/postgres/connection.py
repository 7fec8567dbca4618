"""Connections to PostgreSQL, and its errors turned into the library's own.

psycopg is an optional dependency (``pip install 'openclaw-memory[postgres]'``): importing
this module without it is fine; opening a connection says what to install.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from openclaw_memory.errors import ConfigError, IndexCorruptError, StoreError

__all__ = ["Database", "QueryCanceled", "pg_errors"]


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError("the postgres backend needs psycopg: "
                          "pip install 'openclaw-memory[postgres]'") from None
    return psycopg


class QueryCanceled(StoreError):
    """A statement ran past its ``statement_timeout``."""


@contextlib.contextmanager
def pg_errors(action: str) -> Iterator[None]:
    """Database errors as :class:`StoreError` with the server's one-line message."""
    psycopg = _psycopg()
    try:
        yield
    except psycopg.errors.QueryCanceled as exc:
        raise QueryCanceled(f"{action}: stopped by the statement timeout") from exc
    except psycopg.errors.DataCorrupted as exc:
        raise IndexCorruptError(f"{action}: {_first_line(exc)}") from exc
    except psycopg.Error as exc:
        raise StoreError(f"{action}: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class Database:
    """One connection to the server, shared by the threads of one process (a lock orders
    them; psycopg connections are not meant for concurrent statements)."""

    def __init__(self, dsn: str, *, application_name: str = "openclaw-memory") -> None:
        psycopg = _psycopg()
        self.dsn = dsn
        self.lock = threading.RLock()
        with pg_errors("cannot connect to PostgreSQL"):
            self.conn = psycopg.connect(dsn, autocommit=True, application_name=application_name)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()

    @contextlib.contextmanager
    def transaction(self, action: str) -> Iterator[Any]:
        """A transaction on the shared connection; yields the connection."""
        with self.lock, pg_errors(action), self.conn.transaction():
            yield self.conn
