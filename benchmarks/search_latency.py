"""Search latency p50/p95 (ms): ours (vec0 and numpy paths) next to LangGraph and LangChain peers.

    python benchmarks/search_latency.py                      # sizes 1k, 10k, 20k, 100k
    python benchmarks/search_latency.py --sizes 1000,10000   # a quick run

Every system gets the same synthetic corpus (see ``benchmarks/_common.py``), the same queries
and the same embedder: a precomputed table mapping each text and query to its stored 384-dim
vector, so no system pays for an embedding model. k = 6 everywhere.

* ours: ``MemoryIndex.search`` (hybrid: FTS5 BM25 + cosine, calibrated fusion, snippets and
  citations included), vector-only is the same call with ``search.hybrid = False``, keyword-only
  is the same query pipeline (``openclaw_memory.search.pipeline.run_search``) without a provider. The
  index is built through the public path (Markdown files + ``MemoryIndex.sync``); the numpy
  path reads the same index file.
* LangGraph ``SqliteStore`` with an ``index`` (dims + embed function, field ``text``) on a
  connection from our connection factory, so sqlite-vec loads; its ``search(query=...)``
  ranks by ``vec_distance_cosine`` over every stored vector. It has no keyword search.
* langchain_core ``InMemoryVectorStore``: ``similarity_search`` (vector only).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    DIMS,
    Corpus,
    PrecomputedProvider,
    machine_report,
    make_corpus,
    peak_rss_mb,
    percentile,
    precomputed_embeddings,
    require_peers,
    write_workspace,
)

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.search.pipeline import SearchRequest, run_search
from openclaw_memory.store.connection import connect, probe_driver

K = 6
Cell = tuple[float, float, float, int] | None  # p50, p95, CPU p50 (ms), queries timed


def _time_queries(run: Callable[[str], Any], queries: list[str], budget_s: float) -> Cell:
    for q in queries[:3]:  # warm-up: caches, statement preparation, the numpy matrix
        run(q)
    times: list[float] = []
    cpu: list[float] = []
    started = time.perf_counter()
    for q in queries:
        t0, c0 = time.perf_counter(), time.process_time()
        run(q)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        if time.perf_counter() - started > budget_s and len(times) >= 10:
            break
    return percentile(times, 50), percentile(times, 95), percentile(cpu, 50), len(times)


def _settings(ws: Path, backend: str, hybrid: bool = True) -> MemorySettings:
    return MemorySettings.model_validate({
        "workspace": ws, "store": {"vector_backend": backend}, "search": {"hybrid": hybrid}})


def _build_ours(ws: Path, index_path: Path, provider: PrecomputedProvider, n: int) -> float:
    started = time.perf_counter()
    with MemoryIndex(_settings(ws, "auto"), index_path=index_path, embedder=provider) as memory:
        report = memory.sync()
        counts = memory.store.counts()
    if counts["chunks"] != n or counts["vectors"] != n:
        sys.exit(f"expected {n} chunks with vectors, got {counts} ({report.warnings[:3]})")
    return time.perf_counter() - started


def _measure_ours(ws: Path, index_path: Path, provider: PrecomputedProvider, backend: str,
                  queries: list[str], budget: float) -> dict[str, Cell]:
    out: dict[str, Cell] = {}
    with MemoryIndex(_settings(ws, backend), index_path=index_path, embedder=provider) as memory:
        memory.sync()  # a no-op: same fingerprint; marks the index as synced
        if backend != "auto" and memory.store.vector_path != backend:
            return {"keyword": None, "vector": None, "hybrid": None}
        out["hybrid"] = _time_queries(lambda q: memory.search(q, max_results=K), queries, budget)

        def keyword(q: str) -> Any:
            request = SearchRequest(q, K, None, ("memory",), True, datetime.now(UTC))
            return run_search(memory.store, None, request, memory.settings.search)

        out["keyword"] = _time_queries(keyword, queries, budget)
    with MemoryIndex(_settings(ws, backend, hybrid=False), index_path=index_path,
                     embedder=provider) as memory:
        memory.sync()
        out["vector"] = _time_queries(lambda q: memory.search(q, max_results=K), queries, budget)
    return out


def _brute_force(corpus: Corpus, table: dict[str, Any], budget: float) -> Cell:
    """The hardware reference: top-k of one matrix-vector product over the same vectors."""
    import numpy as np

    matrix = np.ascontiguousarray(corpus.vectors, dtype=np.float32)

    def top(q: str) -> Any:
        scores = matrix @ table[q]
        return np.argpartition(-scores, K - 1)[:K]
    return _time_queries(top, corpus.queries, budget)


def _sqlite_store(path: Path, texts: list[str], dims: int,
                  embeddings: Any) -> tuple[Any, Any, float]:
    """LangGraph's SqliteStore on a connection that loads sqlite-vec, holding ``texts``."""
    from langgraph.store.base import PutOp
    from langgraph.store.sqlite import SqliteStore

    driver = probe_driver(True)
    if not driver.vec_loadable:
        sys.exit(f"SqliteStore needs a driver that loads sqlite-vec: {driver.reason}")
    conn = connect(path, driver, busy_timeout_ms=10_000, load_vec=True)
    store = SqliteStore(conn, index={"dims": dims, "embed": embeddings, "text_fields": ["text"]})
    started = time.perf_counter()
    store.setup()
    for start in range(0, len(texts), 1000):
        store.batch([PutOp(("notes",), f"c{i}", {"text": texts[i]})
                     for i in range(start, min(start + 1000, len(texts)))])
    return store, conn, time.perf_counter() - started


def _in_memory(corpus: Any, embeddings: Any) -> tuple[Any, float]:
    from langchain_core.vectorstores import InMemoryVectorStore

    started = time.perf_counter()
    store = InMemoryVectorStore(embedding=embeddings)
    for start in range(0, len(corpus.texts), 1000):
        part = corpus.texts[start:start + 1000]
        store.add_texts(part, ids=[f"c{start + i}" for i in range(len(part))])
    return store, time.perf_counter() - started


def run_size(n: int, tmp: Path, budget: float, peers: bool) -> dict[str, dict[str, Any]]:
    corpus = make_corpus(n)
    table = corpus.lookup()
    provider = PrecomputedProvider(table, f"n{n}")
    ws, index_path = tmp / f"ws-{n}", tmp / f"index-{n}.sqlite"
    write_workspace(ws, corpus)
    rows: dict[str, dict[str, Any]] = {}
    build = _build_ours(ws, index_path, provider, len(corpus.texts))
    for backend in ("auto", "vec0", "numpy"):
        cells = _measure_ours(ws, index_path, provider, backend, corpus.queries, budget)
        rows[f"ours-{backend}"] = {**cells, "build_s": build}
    rows["exact numpy brute force (reference)"] = {
        "keyword": None, "hybrid": None, "build_s": 0.0,
        "vector": _brute_force(corpus, table, budget)}
    if peers:
        embeddings = precomputed_embeddings(table)
        store, conn, built = _sqlite_store(tmp / f"langgraph-{n}.sqlite", corpus.texts, DIMS,
                                           embeddings)
        cell = _time_queries(lambda q: store.search(("notes",), query=q, limit=K),
                             corpus.queries, budget)
        rows["langgraph SqliteStore"] = {"keyword": None, "vector": cell, "hybrid": None,
                                         "build_s": built}
        conn.close()
        mem, built = _in_memory(corpus, embeddings)
        cell = _time_queries(lambda q: mem.similarity_search(q, k=K), corpus.queries, budget)
        rows["langchain InMemoryVectorStore"] = {"keyword": None, "vector": cell, "hybrid": None,
                                                 "build_s": built}
        del mem
    shutil.rmtree(ws, ignore_errors=True)
    rows["_files"] = f"{len(corpus.texts):,} chunks in {len(corpus.files):,} daily files"
    return rows


def _fmt(cell: Cell) -> str:
    return "n/a" if cell is None else f"{cell[0]:.2f} / {cell[1]:.2f} ({cell[2]:.2f})"


def print_table(n: int, rows: dict[str, dict[str, Any]]) -> None:
    print(f"\n{n:,} chunks ({rows.pop('_files')}; {DIMS}-dim), k={K}: "
          "wall p50 / p95 (CPU p50) in ms")
    head = f"{'system':30s} {'keyword-only':>24s} {'vector-only':>24s} {'hybrid':>24s} {'build s':>8s}"
    print(head + "\n" + "-" * len(head))
    for name, r in rows.items():
        counts = [str(c[3]) for c in (r["keyword"], r["vector"], r["hybrid"]) if c]
        print(f"{name:30s} {_fmt(r['keyword']):>24s} {_fmt(r['vector']):>24s} "
              f"{_fmt(r['hybrid']):>24s} {r['build_s']:8.1f}  (queries {'/'.join(counts)})")


def print_targets(results: dict[int, dict[str, dict[str, Any]]]) -> None:
    print("\ntargets")
    for n, rows in results.items():
        auto, exact = rows.get("ours-auto", {}).get("vector"), rows.get(
            "exact numpy brute force (reference)", {}).get("vector")
        if auto and exact:
            ratio = auto[0] / exact[0]
            # The whole search (coverage, snippets included), not the vector path alone: the
            # "within 2x of brute force" target is checked on the path by benchmarks/scale.py.
            print(f"  {n:,} chunks: whole vector-only search p50 {auto[0]:.2f} ms vs exact numpy "
                  f"brute force {exact[0]:.2f} ms: {ratio:.1f}x")
    if 100_000 in results:
        for name in ("ours-auto", "ours-vec0", "ours-numpy"):
            cell = results[100_000][name]["hybrid"]
            if cell:
                verdict = "met" if cell[0] < 30 else f"MISSED by {cell[0] - 30:.1f} ms"
                print(f"  hybrid p50 at 100k < 30 ms, {name}: {cell[0]:.2f} ms wall ({verdict}), "
                      f"{cell[2]:.2f} ms CPU")
    if 20_000 in results and "langgraph SqliteStore" in results[20_000]:
        peer = results[20_000]["langgraph SqliteStore"]["vector"]
        for name in ("ours-auto", "ours-vec0", "ours-numpy"):
            cell = results[20_000][name]["hybrid"]
            if cell and peer:
                ratio, cpu_ratio = peer[0] / cell[0], peer[2] / cell[2]
                verdict = "met" if ratio >= 5 else "MISSED"
                print(f"  at 20k, {name} hybrid p50 {cell[0]:.2f} ms vs SqliteStore vector p50 "
                      f"{peer[0]:.2f} ms: {ratio:.1f}x faster (target >= 5x: {verdict}); "
                      f"CPU p50 {cell[2]:.2f} vs {peer[2]:.2f} ms: {cpu_ratio:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,20000,100000",
                    help="comma-separated chunk counts (default: %(default)s)")
    ap.add_argument("--budget", type=float, default=10.0,
                    help="seconds of timed queries per cell, at least 10 queries (default 10)")
    ap.add_argument("--no-peers", action="store_true", help="measure ours only")
    args = ap.parse_args()
    if not args.no_peers:
        require_peers()
    print(machine_report())
    print("embedder: precomputed table (text -> stored vector) for every system: embedding "
          "cost excluded")
    results: dict[int, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="ocm-bench-") as scratch:
        for n in (int(s) for s in args.sizes.split(",")):
            results[n] = run_size(n, Path(scratch), args.budget, not args.no_peers)
            print_table(n, results[n])
            sys.stdout.flush()
    print_targets(results)
    print(f"\npeak RSS of this run: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
