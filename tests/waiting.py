"""Test helpers for things that happen in the background: polling, and a held write lock."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("begin immediate")
print("locked", flush=True)
sys.stdin.read()
conn.execute("rollback")
"""


def wait_until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll until ``predicate()`` holds; the timeout is generous, never a speed check."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached (generous timeout, not a speed check)")
        time.sleep(0.02)


@contextmanager
def write_lock_held(index_path: Path) -> Iterator[None]:
    """Hold the index's SQLite write lock from another process, as a writing watcher would.

    A separate process, not a second connection here: this process may load a different
    SQLite library (pysqlite3) whose POSIX locks would not see the stdlib module's.
    """
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(index_path)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()  # the holder rolls back and exits on EOF
        holder.wait(30)
