"""Whether searching writes the index: with an embedding provider that costs per call (the
OpenAI-compatible client over HTTP) and with the local default, on the same notes.

    python benchmarks/search_writes.py [--rounds 4]

The bundled team workspace (notebooks/data/kestrel-team) is indexed through the ``openai``
provider against an OpenAI-compatible server on 127.0.0.1 that embeds with the bundled local
model (so the vectors are real and the provider is the costly kind: every call an HTTP
request), and once with the local provider itself. Its questions, and the same asked about
the present ("... now?", which compares the hits' lines), are searched ``--rounds`` times
each. Printed per provider: index generation changes and embedding-cache rows written by
the searches (a search must write neither: each write had voided the in-memory postings and
made a search wait for another process's write lock), HTTP requests the searches made, and
the searches' p50.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import EmbeddingsServer, machine_report  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402

TEAM = ROOT / "notebooks" / "data" / "kestrel-team"


def _cache_rows(index: Path) -> int:
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        return int(conn.execute("select count(*) from embedding_cache").fetchone()[0])


def _questions() -> list[str]:
    asked = [json.loads(line)["question"]
             for line in (TEAM / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    now = [q.rstrip("?") + " now?" for q in asked if q.endswith("?")]
    return asked + now


def _run(name: str, ws: Path, index: Path, settings: dict[str, Any], rounds: int,
         server: EmbeddingsServer | None) -> str:
    with MemoryIndex.open(ws, index_path=index, **settings) as memory:
        memory.sync()
        assert memory.provider is not None
        generation, rows = memory.store.generation(), _cache_rows(index)
        before = server.requests if server else 0
        times = []
        questions = _questions()
        for _ in range(rounds):
            for question in questions:
                started = time.perf_counter()
                memory.search(question)
                times.append(time.perf_counter() - started)
        bumps = memory.store.generation() - generation
        written = _cache_rows(index) - rows
        calls = (server.requests - before) if server else 0
        costly = memory.provider.costly
    return (f"{name:34} {costly!s:>6} {len(times):9d} {bumps:17d} {written:17d} "
            f"{calls:14d} {1000 * statistics.median(times):10.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    print(machine_report())
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "team"
        shutil.copytree(TEAM, ws)
        (ws / "queries.jsonl").unlink()
        with MemoryIndex.open(ws, index_path=Path(tmp) / "local.sqlite") as local:
            raw = local.provider_choice().provider
            assert raw is not None
            server = EmbeddingsServer(raw)
            url = server.url
            print(f"{'provider':34} {'costly':>6} {'searches':>9} {'generation bumps':>17} "
                  f"{'cache rows added':>17} {'HTTP requests':>14} {'p50 ms':>10}")
            print(_run("openai (HTTP, local model behind)", ws, Path(tmp) / "api.sqlite",
                       {"embedding": {"provider": "openai", "base_url": url, "api_key": "local",
                                      "model": "local-minilm"}}, args.rounds, server))
            print(_run("local (the default)", ws, Path(tmp) / "local.sqlite", {}, args.rounds,
                       None))
            server.close()
    print(machine_report())


if __name__ == "__main__":
    main()
