"""The PostgreSQL backend beside the SQLite one, on the same real notes scaled up.

    python benchmarks/postgres.py                       # 100k chunks, test server
    python benchmarks/postgres.py --sizes 10000 --budget 3
    python benchmarks/postgres.py --dsn postgresql://...  # your own server (a scratch DB!)

Data and vectors as in ``scale.py`` (real notes copied to N chunks, people renamed, dates
moved; the real questions; one text -> vector table for both backends). Without ``--dsn`` the
tests' own PostgreSQL 18 + pgvector 0.8 is started (tests/postgres_server.py).

Per size: loading (SQLite: ``sync`` of the folder; Postgres: ``publish`` of the folder, then
``sync``, which builds the HNSW index), hybrid search p50/p95 (wall ms) on both, keyword-only
on both, the Postgres vector side's recall@6 against exact search (strict: the same 6 chunks;
within 1e-3: chunks as close as the exact 6th, since the scaled notes hold near-copies),
write-to-searchable (a note written, then found by a search) and 1/2/4 concurrent clients
(threads, each its own connection) searching at once.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import machine_report, percentile
from scale import Tabled, build_workspace, load_sources
from search_latency import K, _time_queries

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.postgres import PostgresMemory
from openclaw_memory.postgres.values import vector_literal
from openclaw_memory.search.pipeline import SearchRequest, run_search

TARGET_P50_MS = 20.0
TARGET_RECALL = 0.95


def _fmt(cell: Any) -> str:
    return f"{cell[0]:7.1f} {cell[1]:7.1f}"


def _sqlite(scaled: Any, provider: Tabled, tmp: Path, budget: float) -> dict[str, Any]:
    settings = MemorySettings.model_validate({"workspace": scaled.ws})
    started = time.perf_counter()
    with MemoryIndex(settings, index_path=tmp / "bench.sqlite", embedder=provider) as memory:
        memory.sync()
        load = time.perf_counter() - started
        hybrid = _time_queries(lambda q: memory.search(q, max_results=K), scaled.questions, budget)

        def keyword(q: str) -> Any:
            request = SearchRequest(q, K, None, ("memory",), True, datetime.now(UTC))
            return run_search(memory.store, None, request, memory.settings.search)

        kw = _time_queries(keyword, scaled.questions, budget)
    return {"load_s": load, "hybrid": hybrid, "keyword": kw}


def _postgres(scaled: Any, provider: Tabled, dsn: str, budget: float, name: str,
              ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    started = time.perf_counter()
    with PostgresMemory.open(dsn, workspace=name, embedder=provider, timezone="UTC") as memory:
        memory.publish(scaled.ws)
        out["publish_s"] = time.perf_counter() - started
        t0 = time.perf_counter()
        memory.sync()  # builds the HNSW index of this width
        out["index_s"] = time.perf_counter() - t0
        out["hybrid"] = _time_queries(lambda q: memory.search(q, max_results=K),
                                      scaled.questions, budget)

        def keyword(q: str) -> Any:
            request = SearchRequest(q, K, None, ("memory",), True, datetime.now(UTC))
            with memory.index.snapshot():
                return run_search(memory.index, None, request, memory.settings.search)

        out["keyword"] = _time_queries(keyword, scaled.questions, budget)
        out["recall"] = _recall(memory, scaled)
        out["write_to_search_ms"] = _write_to_search(memory, provider)
    out["clients"] = {n: _clients(dsn, name, provider, scaled.questions, n, budget)
                      for n in (1, 2, 4)}
    return out


def _recall(memory: PostgresMemory, scaled: Any) -> tuple[float, float]:
    strict = tolerant = 0.0
    questions = scaled.questions[:200]
    for q in questions:
        vector = scaled.table[q]
        got = memory.index.vector_search(vector, K, ("memory",))
        with memory.db.transaction("exact") as conn:
            conn.execute("set local enable_indexscan = off")
            dims = int(vector.shape[0])
            exact = memory.tenant.run(
                conn, f"select id, 1 - (embedding::vector({dims}) <=> %(q)s::vector({dims})) "
                "from openclaw_memory.chunks where workspace = %(ws)s and dims = "
                f"{dims} order by embedding::vector({dims}) <=> %(q)s::vector({dims}) "
                "limit %(k)s", {"q": vector_literal(vector), "k": K}).fetchall()
        want = {int(i) for i, _ in exact}
        floor = min(float(s) for _, s in exact) - 1e-3
        strict += len({i for i, _ in got} & want) / K
        tolerant += sum(1 for _, s in got if s >= floor) / K
    return strict / len(questions), tolerant / len(questions)


class _Open(Tabled):
    """The table, and for text written during the run (new notes) a vector of its own."""

    def _embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            known = self.table.get(text.strip())
            if known is None:
                rng = np.random.default_rng(abs(hash(text)) % (1 << 32))
                known = rng.standard_normal(self.dims).astype(np.float32)
            rows.append(known)
        return np.stack(rows)


def _write_to_search(memory: PostgresMemory, provider: Tabled) -> float:
    times = []
    for i in range(20):
        token = f"freshtoken{i}x{int(time.time())}"
        note = f"A brand new note about {token}."
        t0 = time.perf_counter()
        memory.write(note)
        hits = memory.search(token).results
        times.append((time.perf_counter() - t0) * 1000)
        if not hits:
            raise SystemExit(f"written note {token} not found right after its write")
    return percentile(times, 50)


def _clients(dsn: str, name: str, provider: Tabled, questions: list[str], n: int,
             budget: float) -> tuple[float, float]:
    """(queries per second over all clients, p50 ms per query) with n clients at once."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + budget

    def client(offset: int) -> None:
        with PostgresMemory.open(dsn, workspace=name, embedder=provider,
                                 timezone="UTC") as memory:
            i = offset
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                memory.search(questions[i % len(questions)], max_results=K)
                with lock:
                    latencies.append((time.perf_counter() - t0) * 1000)
                i += 7
    threads = [threading.Thread(target=client, args=(k * 101,)) for k in range(n)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(latencies) / (time.perf_counter() - started), percentile(latencies, 50)


def run(n: int, dsn: str, model: Any, tmp: Path, budget: float) -> None:
    scaled = build_workspace(load_sources(), n, tmp / f"ws-{n}", model)
    provider = _Open(scaled.table, int(scaled.vectors.shape[1]))
    print(f"\n## {scaled.chunks} chunks, {len(scaled.questions)} questions")
    lite = _sqlite(scaled, provider, tmp, budget)
    pg = _postgres(scaled, provider, dsn, budget, f"bench{n}")
    print(f"load: SQLite sync {lite['load_s']:.1f} s; Postgres publish {pg['publish_s']:.1f} s "
          f"+ HNSW index {pg['index_s']:.1f} s")
    print("                      p50 ms  p95 ms")
    print(f"SQLite   hybrid      {_fmt(lite['hybrid'])}")
    print(f"Postgres hybrid      {_fmt(pg['hybrid'])}   target p50 <= {TARGET_P50_MS:g} (at 1M)")
    print(f"SQLite   keyword     {_fmt(lite['keyword'])}")
    print(f"Postgres keyword     {_fmt(pg['keyword'])}")
    strict, tolerant = pg["recall"]
    print(f"Postgres vector recall@{K} vs exact: {strict:.3f} same chunks, {tolerant:.3f} within "
          f"1e-3 of the exact 6th (target >= {TARGET_RECALL})")
    print(f"write -> searchable (write + first search that finds it): "
          f"{pg['write_to_search_ms']:.1f} ms p50")
    for clients, (qps, p50) in pg["clients"].items():
        print(f"{clients} concurrent client(s): {qps:6.1f} searches/s, p50 {p50:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--budget", type=float, default=8.0)
    ap.add_argument("--dsn", default=None, help="a scratch database (default: start one)")
    args = ap.parse_args()
    print(machine_report())
    with tempfile.TemporaryDirectory(prefix="ocm-pg-") as scratch:
        tmp = Path(scratch)
        with MemoryIndex.open(Path(__file__).resolve().parent.parent / "notebooks" / "data"
                              / "kestrel-team", index_path=tmp / "probe.sqlite") as probe:
            model = probe.provider
            if args.dsn:
                for n in (int(s) for s in args.sizes.split(",")):
                    run(n, args.dsn, model, tmp, args.budget)
                return
            from postgres_server import running_postgres

            with running_postgres() as server:
                for n in (int(s) for s in args.sizes.split(",")):
                    run(n, server.dsn, model, tmp, args.budget)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
