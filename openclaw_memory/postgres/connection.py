"""Connections to PostgreSQL, and its errors turned into the library's own.

psycopg is an optional dependency (``pip install 'langchain-openclaw-memory[postgres]'``): importing
this module without it is fine; opening a connection says what to install.

Every wait is bounded (:class:`Limits`, from ``store.*`` settings): connecting
(``connect_timeout``), each statement (the server's ``statement_timeout``, and a watchdog on
this side for a server that cannot enforce it: stopped, or cut off without a reset), a
transaction left idle (``idle_in_transaction_session_timeout``) and a dead peer (TCP
keepalives). A connection that broke (a server restart, a watchdog's cut) is replaced on
the next call: before its first statement, so a call that fails because the server restarted
meanwhile is retried on the new connection and nothing runs twice.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from openclaw_memory.errors import ConfigError, IndexCorruptError, StoreError, install_hint
from openclaw_memory.redact import dsn_secrets, redact_text, remember_secrets

__all__ = ["ConnectionLost", "Database", "Limits", "QueryCanceled", "ServerTimeout", "pg_errors"]


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(f"the postgres backend needs psycopg: {install_hint('postgres')}") from None
    return psycopg


class QueryCanceled(StoreError):
    """A statement ran past its ``statement_timeout``."""


class ConnectionLost(StoreError):
    """The connection broke during a call; the next call opens a new one."""


class ServerTimeout(StoreError):
    """The server gave no answer within a bound of :class:`Limits`."""


@dataclass(frozen=True, slots=True)
class Limits:
    """How long any wait on the server may last (seconds)."""

    connect_timeout_s: float = 10.0
    statement_timeout_s: float = 60.0
    idle_in_transaction_timeout_s: float = 120.0
    keepalive_idle_s: int = 30
    #: Building the HNSW graph or refreshing statistics of a large workspace: minutes.
    maintenance_timeout_s: float = 3600.0

    def connect_options(self) -> dict[str, Any]:
        """libpq's parameters for these limits (server settings travel in ``options``)."""
        return {
            # libpq reads whole seconds, and at least 2.
            "connect_timeout": max(2, round(self.connect_timeout_s)),
            "keepalives": 1, "keepalives_idle": max(1, self.keepalive_idle_s),
            "keepalives_interval": max(1, self.keepalive_idle_s // 3), "keepalives_count": 3,
            "options": (f"-c statement_timeout={_ms(self.statement_timeout_s)} "
                        f"-c idle_in_transaction_session_timeout="
                        f"{_ms(self.idle_in_transaction_timeout_s)}"),
        }


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


#: How much longer than the server's own bound this side waits before cutting the line.
_GRACE_S = 2.0


@contextlib.contextmanager
def pg_errors(action: str, *, limits: Limits | None = None) -> Iterator[None]:
    """Database errors as :class:`StoreError` with the server's one-line message, never
    carrying a credential (libpq quotes the connection string in its parse errors)."""
    psycopg = _psycopg()
    try:
        yield
    except psycopg.errors.QueryCanceled as exc:
        raise QueryCanceled(f"{action}: stopped by the statement timeout") from exc
    except psycopg.errors.DataCorrupted as exc:
        raise IndexCorruptError(f"{action}: {_first_line(exc)}") from exc
    except psycopg.errors.ConnectionTimeout as exc:
        bound = limits.connect_timeout_s if limits else None
        raise ServerTimeout(f"{action}: PostgreSQL did not accept the connection"
                            + (f" within {bound:g} s (store.connect_timeout_s)" if bound else "")
                            ) from exc
    except psycopg.Error as exc:
        raise StoreError(f"{action}: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return redact_text(text[0]) if text else type(exc).__name__


class _Watchdog:
    """Cuts a connection whose statement has waited past its deadline.

    A stopped server still has its kernel accept and acknowledge, so neither TCP keepalives
    nor the server's own statement timeout end the wait; shutting the socket down does
    (libpq then reports the connection closed, and the next call reconnects)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._sock: int | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        self.fired = False

    def arm(self, sock: int, seconds: float) -> None:
        with self._cond:
            self._deadline, self._sock, self.fired = time.monotonic() + seconds, sock, False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ocm-pg-watchdog",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None

    def stop(self) -> None:
        with self._cond:
            self._stopped, self._deadline = True, None
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._deadline, self.fired = None, True
                _shutdown(self._sock)


def _shutdown(fd: int | None) -> None:
    if fd is None or fd < 0:
        return
    with contextlib.suppress(OSError):
        dup = socket.socket(fileno=os.dup(fd))
        try:
            dup.shutdown(socket.SHUT_RDWR)
        finally:
            dup.close()


class Database:
    """One connection to the server, shared by the threads of one process (a lock orders
    them; psycopg connections are not meant for concurrent statements)."""

    def __init__(self, dsn: str, *, application_name: str = "openclaw-memory",
                 limits: Limits | None = None) -> None:
        # Kept as a SecretStr: vars(), repr() and a debugger's dump show no credential.
        self._dsn = SecretStr(dsn)
        remember_secrets(dsn_secrets(dsn))
        self.limits = limits or Limits()
        self.application_name = application_name
        self.lock = threading.RLock()
        self._watchdog = _Watchdog()
        self._depth = 0
        self._bound_s = self.limits.statement_timeout_s
        self.reconnects = 0
        self.conn = self._connect()

    @property
    def dsn(self) -> str:
        """The connection string (with its credentials: never to be shown)."""
        return self._dsn.get_secret_value()

    def _connect(self) -> Any:
        psycopg = _psycopg()
        try:
            with pg_errors("cannot connect to PostgreSQL", limits=self.limits):
                conn = psycopg.connect(self.dsn, autocommit=True,
                                       application_name=self.application_name,
                                       **self.limits.connect_options())
        except StoreError as exc:
            # libpq's own error quotes the connection string (a password with it when the
            # string does not parse): the redacted line goes on, the chained error does not.
            raise type(exc)(str(exc)) from None
        conn.cursor_factory = _watched_cursor(psycopg, self)
        return conn

    def close(self) -> None:
        self._watchdog.stop()
        with contextlib.suppress(Exception):
            self.conn.close()

    # -- the statement watchdog (called by the cursors of this connection) ----------------
    def statement_started(self) -> None:
        with contextlib.suppress(Exception):
            self._watchdog.arm(self.conn.pgconn.socket, self._bound_s + _GRACE_S)

    def statement_ended(self) -> None:
        self._watchdog.disarm()

    # -- transactions -----------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, action: str, *, timeout_s: float | None = None) -> Iterator[Any]:
        """A transaction on the shared connection; yields the connection.

        ``timeout_s``: this transaction's statements may each take that long (maintenance:
        building an index), instead of ``statement_timeout_s``."""
        with self.lock:
            outer = self._depth == 0
            with contextlib.ExitStack() as stack:
                stack.enter_context(self._translated(action))
                if outer:
                    self._begin(stack, timeout_s)
                else:
                    stack.enter_context(self._watched_transaction())
                self._depth += 1
                stack.callback(self._left)
                yield self.conn

    def _left(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._bound_s = self.limits.statement_timeout_s

    @contextlib.contextmanager
    def _watched_transaction(self) -> Iterator[None]:
        """psycopg's transaction block, its BEGIN and COMMIT (or ROLLBACK) watched like any
        statement: they wait on the server too."""
        tx = self.conn.transaction()
        self._watched(tx.__enter__)
        try:
            yield
        except BaseException as exc:
            failure = exc
            if not self._watched(lambda: tx.__exit__(type(failure), failure,
                                                     failure.__traceback__)):
                raise
        else:
            self._watched(lambda: tx.__exit__(None, None, None))

    def _watched(self, call: Any) -> Any:
        self.statement_started()
        try:
            return call()
        finally:
            self.statement_ended()

    def _begin(self, stack: contextlib.ExitStack, timeout_s: float | None) -> None:
        """BEGIN on a live connection. A connection found broken, or one that breaks on
        BEGIN itself (a server restarted since the last call), is replaced and BEGIN sent
        again: nothing of this transaction has run yet, so that is always safe."""
        psycopg = _psycopg()
        for attempt in range(2):
            if self.conn.closed or self.conn.broken:
                self._reconnect()
            try:
                stack.enter_context(self._watched_transaction())
                break
            except psycopg.OperationalError:
                # A BEGIN the watchdog cut gave no answer in the whole bound: the server is
                # not answering, and a reconnect would only add store.connect_timeout_s to
                # the wait (a stopped server: 60 + 2 + 10 s instead of the bound).
                if attempt or self._watchdog.fired or not (self.conn.closed or self.conn.broken):
                    raise
        if timeout_s is not None:
            self._bound_s = timeout_s
            self.conn.execute(f"set local statement_timeout = {_ms(timeout_s)}")

    def _reconnect(self) -> None:
        with contextlib.suppress(Exception):
            self.conn.close()
        self.conn = self._connect()
        self.reconnects += 1

    @contextlib.contextmanager
    def _translated(self, action: str) -> Iterator[None]:
        psycopg = _psycopg()
        try:
            with pg_errors(action, limits=self.limits):
                yield
        except StoreError as exc:
            if self._watchdog.fired:
                self._watchdog.fired = False
                raise ServerTimeout(
                    f"{action}: PostgreSQL gave no answer within {self._bound_s + _GRACE_S:g} s "
                    f"(store.statement_timeout_s, {self._bound_s:g} s, and {_GRACE_S:g} s for the "
                    "server's own timeout to act); the connection was closed and the next "
                    "call opens a new one") from exc
            cause = exc.__cause__
            if isinstance(cause, psycopg.OperationalError) and (self.conn.closed
                                                                or self.conn.broken):
                raise ConnectionLost(f"{exc}; the connection to PostgreSQL was lost and the "
                                     "next call opens a new one") from exc
            raise


def _watched_cursor(psycopg: Any, db: Database) -> Any:
    """A cursor class whose statements arm ``db``'s watchdog while they wait."""

    class WatchedCursor(psycopg.Cursor):  # type: ignore[misc, name-defined]
        def execute(self, *args: Any, **kwargs: Any) -> Any:
            return db._watched(lambda: super(WatchedCursor, self).execute(*args, **kwargs))

        def executemany(self, *args: Any, **kwargs: Any) -> Any:
            return db._watched(lambda: super(WatchedCursor, self).executemany(*args, **kwargs))

    return WatchedCursor
