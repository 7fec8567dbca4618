"""Open SQLite connections that can load sqlite-vec when anything on this machine can.

Many Python builds (pyenv, macOS system Python) compile stdlib ``sqlite3`` without extension
loading. We probe, once per process, the stdlib module first and then wheel-shipped drop-ins
(``pysqlite3``, ``sqlean``); the first that loads ``vec0`` and has FTS5 wins. If none can, the
stdlib module is used and vectors are ranked by the numpy path. The outcome and its reason are
kept in :class:`DriverInfo` and reported by ``status`` and every search response.
"""

from __future__ import annotations

import functools
import importlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.store.schema import check_identity

__all__ = ["DISABLE_VEC_ENV", "PAGE_SIZE", "DriverInfo", "connect", "is_corruption", "probe_driver",
           "read_only_index", "read_only_uri"]

#: Set to "1" to force the numpy vector path (used by tests and for debugging).
DISABLE_VEC_ENV = "OPENCLAW_MEMORY_DISABLE_VEC"

_CANDIDATES = ("sqlite3", "pysqlite3.dbapi2", "sqlean")


@dataclass(frozen=True, slots=True)
class DriverInfo:
    """Which DB-API module is live and whether sqlite-vec loads into it."""

    name: str
    module: ModuleType
    sqlite_version: str
    vec_loadable: bool
    vec_version: str | None
    reason: str

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        # The driver raises a bare MemoryError for SQLITE_NOMEM, which a damaged FTS5 page
        # produces when its garbled length field asks for gigabytes (see is_corruption).
        return (self.module.Error, MemoryError)


def _load_vec(conn: Any) -> str:
    import sqlite_vec

    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)
    return str(conn.execute("select vec_version()").fetchone()[0])


def _probe_module(name: str) -> tuple[ModuleType, str | None, str]:
    """Import ``name`` and try sqlite-vec in a scratch connection; never raises."""
    module = importlib.import_module(name)
    conn = module.connect(":memory:")
    try:
        conn.execute("create virtual table t using fts5(x)")
        if not hasattr(conn, "enable_load_extension"):
            return module, None, f"{name}: built without extension loading"
        return module, _load_vec(conn), f"sqlite-vec loaded via {name}"
    except Exception as exc:  # any driver-specific failure means "cannot use vec here"
        return module, None, f"{name}: {type(exc).__name__}: {exc}"
    finally:
        conn.close()


@functools.lru_cache(maxsize=2)
def probe_driver(allow_vec: bool = True) -> DriverInfo:
    """Pick the connection module once per process (cached)."""
    failures: list[str] = []
    fallback: ModuleType | None = None
    if allow_vec and os.environ.get(DISABLE_VEC_ENV) != "1":
        for name in _CANDIDATES:
            try:
                module, version, reason = _probe_module(name)
            except ImportError:
                failures.append(f"{name}: not installed")
                continue
            fallback = fallback or module
            if version is not None:
                return DriverInfo(name, module, module.sqlite_version, True, version, reason)
            failures.append(reason)
        why = "sqlite-vec could not be loaded (" + "; ".join(failures) + ")"
    else:
        why = "sqlite-vec disabled by configuration"
    module = fallback or importlib.import_module("sqlite3")
    return DriverInfo(module.__name__, module, module.sqlite_version, False, None, why)


def _refuse_foreign(conn: Any) -> None:
    try:
        check_identity(conn)
    except IndexCorruptError:
        conn.close()
        raise


#: Page size of a new index. A chunk's row (about 1-2 KB of text and a 2 KB vector) leaves
#: most of a 4 KB page unused, one row per page: 16 KB pages hold four or more and cut the
#: index by 0.3 KB per chunk (benchmarks/footprint.py); mmap keeps a page read cheap.
PAGE_SIZE = 16384
#: Checkpoint every 32 MB of WAL.
_CHECKPOINT_PAGES = 32 * 1024 * 1024 // PAGE_SIZE
_WAL_SIZE_LIMIT = 64 * 1024 * 1024


def _switch_to_wal(conn: Any, driver: DriverInfo, busy_timeout_ms: int) -> None:
    """``journal_mode = wal``, retried while another process holds the lock.

    Changing the journal mode needs an exclusive lock and SQLite does not call the busy
    handler for it: two processes opening a new index at once would see "database is locked"
    at once instead of waiting their turn.
    """
    deadline = time.monotonic() + busy_timeout_ms / 1000
    delay = 0.005
    while True:
        try:
            conn.execute("pragma journal_mode = wal")
            return
        except driver.module.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def read_only_index(path: Path | str) -> bool:
    """Whether ``path`` is an existing index this process may read but not write (the file,
    or the folder SQLite keeps its -wal and -shm files in, is not writable): searched as it
    is, never synced."""
    where = Path(path)
    return (str(path) != ":memory:" and where.is_file()
            and not (os.access(where, os.W_OK) and os.access(where.parent, os.W_OK)))


def read_only_uri(path: Path | str) -> str:
    """An URI opening ``path`` read-only. In a folder this process cannot write, SQLite cannot
    make the -shm file a WAL database needs to be read: there it is opened as immutable (no
    one here can change it), unless a -wal file shows a writer at work."""
    where = Path(path).resolve()
    uri = f"file:{quote(str(where))}?mode=ro"
    if not os.access(where.parent, os.W_OK) and not Path(f"{where}-wal").exists():
        uri += "&immutable=1"
    return uri


def connect(path: Path | str, driver: DriverInfo, *, busy_timeout_ms: int, load_vec: bool,
            page_size: int = PAGE_SIZE, read_only: bool = False) -> Any:
    """Open ``path`` in WAL mode with a busy timeout; load vec0 when asked and possible.

    ``page_size`` applies to a new database only (a rebuild matches the index it replaces:
    SQLite's backup cannot change the page size of a database in WAL mode). ``read_only``
    (:func:`read_only_index`): opened for reading alone, as it is."""
    try:
        conn = driver.module.connect(
            read_only_uri(path) if read_only else str(path), timeout=busy_timeout_ms / 1000,
            check_same_thread=False, uri=read_only,
            isolation_level=None,  # we issue BEGIN IMMEDIATE ourselves
        )
        conn.execute(f"pragma busy_timeout = {int(busy_timeout_ms)}")
        if read_only:
            _refuse_foreign(conn)
            if load_vec and driver.vec_loadable:
                _load_vec(conn)
            return conn
        # Only a new, empty database takes it; an existing index keeps its page size.
        conn.execute(f"pragma page_size = {int(page_size)}")
        if str(path) != ":memory:":
            # Refuse a foreign database *before* switching it to WAL, which rewrites its
            # header: a mistyped --index must not modify another application's file.
            _refuse_foreign(conn)
            _switch_to_wal(conn, driver, busy_timeout_ms)
        conn.execute("pragma synchronous = normal")
        # Checkpoints (copying the WAL into the database, with an fsync) were ~40% of indexing
        # time at SQLite's default of every 1 000 pages, since sync commits once per file.
        # Every 32 MB keeps the WAL bounded and cuts that to a fraction; the
        # size limit truncates the WAL file after a checkpoint instead of leaving it large.
        conn.execute(f"pragma wal_autocheckpoint = {_CHECKPOINT_PAGES}")
        conn.execute(f"pragma journal_size_limit = {_WAL_SIZE_LIMIT}")
        conn.execute("pragma foreign_keys = on")
        if load_vec and driver.vec_loadable:
            _load_vec(conn)
    except driver.module.OperationalError as exc:  # locked, unreadable, no such directory
        raise StoreError(f"cannot open index {path}: {exc}") from exc
    except driver.errors as exc:  # "file is not a database", "disk image is malformed"
        raise IndexCorruptError(f"index {path} is corrupt: {exc}") from exc
    return conn


def is_corruption(exc: BaseException) -> bool:
    """SQLITE_CORRUPT / SQLITE_NOTADB: damage found in pages that opening did not read.

    SQLITE_NOMEM counts too: no statement of ours needs more than a few megabytes, so running
    out inside SQLite means a damaged page asked for an absurd allocation (FTS5 does this on
    garbled doclists about one time in five). Misjudging a real shortage costs a rebuild from
    the Markdown; the old file is set aside, never deleted.
    """
    if isinstance(exc, MemoryError):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (11, 26)
    return "malformed" in str(exc) or "not a database" in str(exc)
