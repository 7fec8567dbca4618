"""A writer process for tests/test_postgres_concurrency.py (run as a script).

``append DSN WRITER COUNT``: append COUNT notes to one shared daily document, searching for
each right after its write; prints one JSON line per note (found or not).
``hold DSN``: lock the daily document, append a note inside an open transaction, say
"holding" and wait to be killed (a writer that dies mid-write).
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime

from openclaw_memory.postgres import PostgresMemory

DAY = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PATH = "memory/2026-03-02.md"


def append(dsn: str, writer: int, count: int) -> None:
    with PostgresMemory.open(dsn, workspace="fleet", embedding={"provider": "none"},
                             timezone="UTC") as memory:
        for i in range(count):
            token = f"w{writer}n{i}tok"
            memory.write(f"writer {writer} note {i} {token}", now=DAY)
            hits = memory.search(token).results
            cited = [memory.get(h.path, h.start_line, h.end_line - h.start_line + 1).text
                     for h in hits]
            print(json.dumps({"token": token, "found": any(token in t for t in cited)}),
                  flush=True)


def hold(dsn: str) -> None:
    with PostgresMemory.open(dsn, workspace="fleet", embedding={"provider": "none"},
                             timezone="UTC") as memory, memory.db.transaction("hold") as conn:
        existing = memory.indexer.lock_for_append(conn, PATH)
        memory.indexer.put(conn, PATH, existing + b"\nhalf written by a killed writer\n")
        print("holding", flush=True)
        time.sleep(600)


if __name__ == "__main__":
    if sys.argv[1] == "append":
        append(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        hold(sys.argv[2])
