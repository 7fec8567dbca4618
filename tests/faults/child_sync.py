"""Run one sync in this (child) process and SIGKILL it at a chosen point.

Usage: ``python child_sync.py '<json spec>'``. The spec names the workspace, the index, the
settings overrides, the embedder ("none", "hashing", "local") and where to die:

* ``progress``: after the n-th file of the sync (the sync's progress callback);
* ``embed``: at the start of the n-th embedding call;
* ``sql``: when the n-th statement starting with ``match`` begins (SQLite trace callback),
  i.e. inside the per-file write transaction;
* ``vm``: after n SQLite progress-handler ticks spent inside a write transaction;
* ``backup``: halfway through the rebuild's copy onto the live index (the backup is driven
  in one-page steps so that the kill lands while the copy's write transaction is open);
* ``never``: finish and print the report.

With ``pause`` the child first prints ``PAUSED <json>`` and waits for a line on stdin, so
the parent (a separate process) can read the index while the writer is stopped at that point.
With ``resume`` as well it then carries on instead of dying (a deterministic interleaving for
the concurrency tests). ``status`` prints ``STATUS <json>`` (``MemoryIndex.status()``) after
the sync. ``user`` (a uid, when run as root) drops privileges to it before opening anything.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from faults.embedders import HashingEmbedder
from openclaw_memory import MemoryIndex
from openclaw_memory.embeddings.base import EmbeddingProvider
from openclaw_memory.store import Store, probe_driver


class Killer:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.count = 0

    def tick(self, info: dict[str, Any] | None = None) -> None:
        """Count one event; on the n-th, (pause and) die."""
        self.count += 1
        if self.count == self.spec["n"]:
            self.die(info or {})

    def die(self, info: dict[str, Any]) -> None:
        if self.spec.get("pause"):
            print("PAUSED " + json.dumps(info), flush=True)
            sys.stdin.readline()
        if self.spec.get("resume"):
            return  # only a pause: the concurrency tests let another process act meanwhile
        os.kill(os.getpid(), signal.SIGKILL)


def _embedder(name: str, killer: Killer, at: str) -> EmbeddingProvider | None:
    if name == "none":
        return None
    if name == "hashing":
        base: type[EmbeddingProvider] = HashingEmbedder
    else:
        from openclaw_memory.embeddings.local import LocalProvider

        base = LocalProvider

    class Dying(base):  # type: ignore[misc,valid-type]
        def _embed(self, texts: list[str]) -> Any:
            if at == "embed":
                killer.tick({"texts": len(texts)})
            return super()._embed(texts)

    return Dying()  # type: ignore[no-any-return]


class _SteppedBackup:
    """Delegates to a connection; its ``backup`` copies one page per step and calls back."""

    def __init__(self, conn: Any, killer: Killer, live: Path) -> None:
        self._conn, self._killer, self._live = conn, killer, live

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def backup(self, target: Any, **_: Any) -> None:
        target.execute("pragma cache_size = 2")  # copied pages spill into the WAL uncommitted
        def progress(_status: int, remaining: int, total: int) -> None:
            if remaining <= total // 2:
                wal = Path(f"{self._live}-wal")
                self._killer.die({"copied": total - remaining, "total": total,
                                  "wal_bytes": wal.stat().st_size if wal.exists() else 0})
        self._conn.backup(target, pages=1, progress=progress)


def _arm(memory: MemoryIndex, killer: Killer, spec: dict[str, Any]) -> None:
    at = spec["at"]
    conn = memory.store._conn
    if at == "sql":
        match = spec["match"].lower()
        conn.set_trace_callback(
            lambda sql: killer.tick({"sql": sql[:60]}) if sql.lower().startswith(match) else None)
    elif at == "vm":
        def handler() -> int:
            if conn.in_transaction:
                killer.tick({"vm": killer.count})
            return 0
        conn.set_progress_handler(handler, 50)
    elif at == "backup":
        original = Store.replace_with
        def stepped(self: Store, other: Store) -> None:
            other._conn = _SteppedBackup(other._conn, killer, self.path)
            original(self, other)
        Store.replace_with = stepped  # type: ignore[method-assign]


_HOLD: list[Any] = []


def _keep_vec_loaded() -> None:
    """Hold a connection with sqlite-vec loaded: while the library stays mapped, later
    loads find it by name instead of opening the (now inaccessible) file."""
    driver = probe_driver(True)
    if driver.vec_loadable:
        import sqlite_vec

        conn = driver.module.connect(":memory:")
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        _HOLD.append(conn)


def _drop_privileges(uid: int) -> None:
    """Become ``uid`` (root can read anything, so permission errors need another user).

    The interpreter lives under root's private home, so everything loaded lazily (the
    tokenizer's data, the sqlite-vec extension) is loaded first by a throwaway sync.
    """
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "ws").mkdir()
        (Path(tmp) / "ws" / "MEMORY.md").write_text("warm up\n", encoding="utf-8")
        with MemoryIndex.open(Path(tmp) / "ws", index_path=Path(tmp) / "i.sqlite",
                              embedding={"provider": "none"}) as memory:
            memory.sync()
            memory.search("warm")
    _keep_vec_loaded()
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def main() -> None:
    spec = json.loads(sys.argv[1])
    if spec.get("user") is not None:
        _drop_privileges(int(spec["user"]))
    kill = spec.get("kill", {"at": "never"})
    killer = Killer(kill)
    embedder = _embedder(spec.get("embedder", "none"), killer, kill["at"])
    settings = dict(spec.get("settings", {}))
    if embedder is None:
        settings.setdefault("embedding", {"provider": "none"})
    memory = MemoryIndex.open(spec["workspace"], index_path=spec["index"], embedder=embedder,
                              **settings)
    _arm(memory, killer, kill)
    progress = (lambda i, _n, path: killer.tick({"file": path, "i": i})) if (
        kill["at"] == "progress") else None
    if spec.get("announce"):
        print("STARTED", flush=True)
    report = memory.sync(full=spec.get("full", False), progress=progress)
    if spec.get("status"):
        print("STATUS " + json.dumps(memory.status(), default=str), flush=True)
    memory.close()
    print("DONE " + json.dumps(report.as_dict()), flush=True)


if __name__ == "__main__":
    main()
