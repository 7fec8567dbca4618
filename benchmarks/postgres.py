"""The PostgreSQL backend beside the SQLite one, on the same real notes scaled up.

    python benchmarks/postgres.py                       # 100k chunks, test server
    python benchmarks/postgres.py --sizes 10000 --budget 3
    python benchmarks/postgres.py --dsn postgresql://...  # your own server (a scratch DB!)

Data and vectors as in ``scale.py`` (real notes copied to N chunks, people renamed, dates
moved; the real questions; one text -> vector table for both backends). Without ``--dsn`` the
scratch PostgreSQL 18 + pgvector 0.8 of the test extra is started
(``openclaw_memory/postgres/scratch.py``).

Per size: loading (SQLite: ``sync`` of the folder; Postgres: ``publish`` of the folder up to
``--publish-max`` chunks, past it the same rows loaded with COPY (publish runs about 500
chunks/s here: an hour per million), then ``sync``, which builds the HNSW index), hybrid search
p50/p95 (wall ms) on both, keyword-only on both, write-to-searchable (a note written, then
found by a search) and 1/2/4 concurrent clients (threads, each its own connection).

Recall of the vector side (HNSW top-6 against exact top-6, over ef_search values) is printed
for up to three sets of vectors, each indexed as the product indexes chunks (same HNSW
parameters, same build memory):

* N real passages embedded by the offline default model (``passages.py``: 1-6 consecutive
  sentences of the installed Python's and packages' documentation), queried by 200 held-out
  sentences: the figure the target is about, on vectors spread as real embeddings are;
* the scaled notes themselves: every note there has N/483 copies whose vectors are its own
  plus noise, so each note is a tight cluster of hundreds of near-identical points, and the
  exact top 6 is which copies the noise put first; a graph index cannot tell them apart (nor
  can it cross between such clusters well), so this figure is a floor, not a forecast;
* with ``--random-recall``, N random vectors in 200 topics (``_common.py``'s construction at
  512 dims: isotropic noise in every dimension, the hardest case for a graph index).

A result counts as found when it is as close to the question as the exact 6th neighbour (the
definition ann-benchmarks uses): 26 of the 200 passage queries have more than six passages at
exactly the 6th distance (up to 238: long passages the model truncates to the same tokens),
any six of which are right; counted by id, recall there tops out near 0.95 whatever the
index does. Both figures are printed.

The scratch server runs with ``--shared-buffers`` (default 4GB: the 1M table's vectors are
2 GB; a deployment sizes it to its data) and the HNSW build gets ``--index-build-mb``
(``store.index_build_mb``). ``--dsn ... --keep`` reuses a workspace an earlier run loaded.
"""

from __future__ import annotations

import argparse
import gc
import signal
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import passages
from _common import machine_report, percentile
from scale import Tabled, build_workspace, load_sources
from search_latency import K, _time_queries

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.errors import StoreError
from openclaw_memory.indexing.chunking import chunk_text
from openclaw_memory.postgres import PostgresMemory
from openclaw_memory.postgres.documents import document_hash
from openclaw_memory.postgres.search_side import HNSW_WITH, hnsw_build_mb
from openclaw_memory.postgres.values import pg_body, vector_literal
from openclaw_memory.search.pipeline import SearchRequest, run_search
from openclaw_memory.store.rows import chunk_id

TARGET_P50_MS = 20.0
TARGET_RECALL = 0.95


def _fmt(cell: Any) -> str:
    return f"{cell[0]:7.1f} {cell[1]:7.1f}"


def _sqlite(scaled: Any, provider: Tabled, tmp: Path, budget: float) -> dict[str, Any]:
    settings = MemorySettings.model_validate({"workspace": scaled.ws, "search": SEARCH})
    started = time.perf_counter()
    with MemoryIndex(settings, index_path=tmp / "bench.sqlite", embedder=provider) as memory:
        memory.sync()
        load = time.perf_counter() - started
        # A serving process answers keywords from postings read in the background (FTS5 until
        # then): timed once they are read, as a long-lived agent meets them.
        memory.store.wait_for_keyword_postings()
        hybrid = _time_queries(lambda q: memory.search(q, max_results=K), scaled.questions, budget)

        def keyword(q: str) -> Any:
            request = SearchRequest(q, K, None, ("memory",), True, datetime.now(UTC))
            return run_search(memory.store, None, request, memory.settings.search)

        kw = _time_queries(keyword, scaled.questions, budget)
    return {"load_s": load, "hybrid": hybrid, "keyword": kw}


def _copy_load(memory: PostgresMemory, scaled: Any, provider: Tabled) -> None:
    """The rows ``publish`` writes, loaded with COPY (documents, then chunks through a
    staging table so that the tsvector is made by the server as on a write)."""
    ws, model = memory.tenant.id, provider.model
    settings = memory.settings.chunking
    with memory.db.transaction("copy") as conn:
        conn.execute("create temp table staging (path text, cid text, s int, e int, h text, "
                     "t text, b text, v text) on commit drop")
        files = sorted(scaled.ws.rglob("*.md"))
        # One COPY at a time on a connection: documents first, then the chunks' staging rows.
        with conn.cursor().copy("copy openclaw_memory.documents (workspace, path, body, hash) "
                                "from stdin") as docs:
            for file in files:
                body = file.read_bytes()
                docs.write_row((ws, file.relative_to(scaled.ws).as_posix(), body,
                                document_hash(body)))
        with conn.cursor().copy("copy staging from stdin") as rows:
            for file in files:
                rel = file.relative_to(scaled.ws).as_posix()
                text = file.read_text(encoding="utf-8")
                for c in chunk_text(text, path=rel, source="memory", settings=settings):
                    rows.write_row((rel, chunk_id(c, model), c.start_line, c.end_line, c.hash,
                                    c.text, pg_body(c.text),
                                    vector_literal(provider.table[c.text.strip()])))
        conn.execute(
            "insert into openclaw_memory.chunks (workspace, path, cid, start_line, end_line, "
            "hash, text, tsv, dims, embedding) select %s, path, cid, s, e, h, t, "
            "to_tsvector(%s::regconfig, b), 512, v::vector from staging",
            (ws, memory.text_config))


def _postgres(scaled: Any, provider: Tabled, dsn: str, args: Any, name: str,
              model: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    budget = args.budget
    started = time.perf_counter()
    with PostgresMemory.open(dsn, workspace=name, embedder=provider, timezone="UTC",
                             store={"index_build_mb": args.index_build_mb},
                             search=SEARCH) as memory:
        if args.keep and int(memory.status()["chunks"]) >= scaled.chunks:
            out["load"] = "kept from an earlier run"
        elif scaled.chunks <= args.publish_max:
            memory.publish(scaled.ws)
            out["load"] = "publish"
        else:
            # A bulk load into a table whose HNSW index exists would insert every vector into
            # the graph one by one (2-3 ms each): drop it, sync builds it again at the end.
            memory.db.conn.execute("drop index if exists openclaw_memory.chunks_hnsw_512")
            _copy_load(memory, scaled, provider)
            out["load"] = "COPY"
        out["publish_s"] = time.perf_counter() - started
        t0 = time.perf_counter()
        memory.sync()  # builds the HNSW index of this width
        out["index_s"] = time.perf_counter() - t0
        out["prewarmed"] = _prewarm(memory)
        out["hybrid"] = _time_queries(lambda q: memory.search(q, max_results=K),
                                      scaled.questions, budget)

        def keyword(q: str) -> Any:
            request = SearchRequest(q, K, None, ("memory",), True, datetime.now(UTC))
            with memory.index.snapshot():
                return run_search(memory.index, None, request, memory.settings.search)

        out["keyword"] = _time_queries(keyword, scaled.questions, budget)
        print(f"  (so far) Postgres hybrid {_fmt(out['hybrid'])}, keyword {_fmt(out['keyword'])}"
              f" ms p50 p95; {out['prewarmed']}", flush=True)
        # Before the recall sets: their tables and index builds evict the chunks' pages.
        out["write_to_search_ms"] = _write_to_search(memory, provider)
        out["clients"] = {n: _clients(dsn, name, provider, scaled.questions, n, budget)
                          for n in (1, 2, 4)}
        if not args.skip_recall:
            out["recall"] = _recall(memory, scaled)
            found = passages.load(args.size, model)  # the size asked: one cached set per size
            out["passages"] = (found.source, _table_recall(memory, found.vectors, found.queries,
                                                           args.index_build_mb))
        if args.random_recall and not args.skip_recall:
            vectors, queries = _random_vectors(scaled.chunks)
            out["random"] = _table_recall(memory, vectors, queries, args.index_build_mb)
    return out


def _prewarm(memory: PostgresMemory) -> str:
    """Caches as a server that has been answering searches holds them (a freshly loaded one,
    on a machine where this client just wrote a million chunks of files, has them on disk,
    and its first searches time the disk): the vector and keyword indexes read into shared
    buffers, the table's rows into the OS cache; pg_prewarm, where the server has it."""
    try:
        with memory.db.transaction("prewarm") as conn:
            conn.execute("create extension if not exists pg_prewarm")
            pages = sum(int(conn.execute("select pg_prewarm(%s)", (f"openclaw_memory.{name}",))
                            .fetchone()[0]) for name in ("chunks_hnsw_512", "chunks_tsv"))
            rows = int(conn.execute("select pg_prewarm('openclaw_memory.chunks', 'read')")
                       .fetchone()[0])
    except StoreError as exc:  # a server without the extension: say so
        return f"not prewarmed ({str(exc).splitlines()[0]})"
    return (f"HNSW and GIN indexes prewarmed into shared buffers ({pages * 8 / 1024:.0f} MB), "
            f"the chunks' rows into the OS cache ({rows * 8 / 1024:.0f} MB)")


def _exact(memory: PostgresMemory, vector: np.ndarray) -> list[Any]:
    with memory.db.transaction("exact") as conn:
        conn.execute("set local enable_indexscan = off")
        return list(memory.tenant.run(
            conn, "select id, path from openclaw_memory.chunks where workspace = %(ws)s and "
            "dims = 512 order by embedding::vector(512) <=> %(q)s::vector(512) limit %(k)s",
            {"q": vector_literal(vector), "k": K}).fetchall())


def _recall(memory: PostgresMemory, scaled: Any) -> tuple[float, float]:
    """(same chunks, same notes: a copy of the note counts) over 100 questions."""
    strict = notes = 0.0
    questions = scaled.questions[:100]
    paths = memory.index.chunks
    for q in questions:
        vector = scaled.table[q]
        got = [i for i, _ in memory.index.vector_search(vector, K, ("memory",))]
        exact = _exact(memory, vector)
        strict += len(set(got) & {int(i) for i, _ in exact}) / K
        note = {_original(str(p)) for _, p in exact}
        found = {_original(r.path) for r in paths(got).values()}
        notes += len(note & found) / len(note)
    return strict / len(questions), notes / len(questions)


def _original(path: str) -> str:
    return path.split("/", 2)[-1]  # memory/c00012/<the original's path>


def _random_vectors(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n random unit vectors in 200 topics (module doc) and 200 queries near some of them."""
    rng = np.random.default_rng(5)
    centroids = rng.standard_normal((200, 512)).astype(np.float32)
    block = centroids[rng.integers(0, 200, n)] + 0.9 * rng.standard_normal(
        (n, 512)).astype(np.float32)
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    queries = block[rng.integers(0, n, 200)] + 0.06 * rng.standard_normal((200, 512))
    return block, (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)


EF_SEARCH = MemorySettings().store.hnsw_ef_search
#: Search settings of every memory the benchmark opens (``--no-translation``).
SEARCH: dict[str, Any] = {}
EF_SWEEP = (40, 100, 200, 400, 800)


def _table_recall(memory: PostgresMemory, vectors: np.ndarray, queries: np.ndarray,
                  build_cap_mb: int) -> dict[int, tuple[float, float, float]]:
    """{ef_search: (recall@6 with ties, strict recall@6, p50 ms)} of an HNSW index built as
    the product builds its own (same parameters and build memory) over ``vectors``, against
    exact search."""
    n, dims = vectors.shape
    with memory.db.transaction("bench vectors") as conn:
        conn.execute("drop table if exists openclaw_memory.bench_vectors")
        conn.execute(f"create table openclaw_memory.bench_vectors "
                     f"(id bigserial primary key, v vector({dims}))")
        with conn.cursor().copy("copy openclaw_memory.bench_vectors (v) from stdin") as cp:
            for row in vectors:
                cp.write_row((vector_literal(row),))
        conn.execute(f"set local maintenance_work_mem = '{hnsw_build_mb(n, dims, build_cap_mb)}MB'")
        conn.execute("create index on openclaw_memory.bench_vectors using hnsw "
                     f"(v vector_cosine_ops) {HNSW_WITH}")
    literals = [vector_literal(q) for q in queries]
    sql = ("select id, v <=> %s::vector as d from openclaw_memory.bench_vectors "
           "order by d limit 6")
    exact = []
    for q in literals:
        with memory.db.transaction("exact") as conn:
            conn.execute("set local enable_indexscan = off")
            # Never prepared: a plan cached under enable_indexscan=off would serve the HNSW
            # loop below too (psycopg prepares a statement run five times).
            exact.append(conn.execute(sql, (q,), prepare=False).fetchall())
    out: dict[int, tuple[float, float, float]] = {}
    for ef in (EF_SWEEP[0], *EF_SWEEP):  # the first pass reads the graph in: not counted
        strict = tied = 0.0
        times = []
        with memory.db.transaction("hnsw") as conn:  # one statement per query is timed
            conn.execute(f"set local hnsw.ef_search = {ef}")
            conn.execute("set local enable_seqscan = off")
            for q, want in zip(literals, exact, strict=True):
                t0 = time.perf_counter()
                got = conn.execute(sql, (q,), prepare=False).fetchall()
                times.append((time.perf_counter() - t0) * 1000)
                strict += len({i for i, _ in got} & {i for i, _ in want}) / K
                # Ties: a result as close as the exact 6th is as right as it (module doc).
                tied += min(K, sum(d <= want[-1][1] + 1e-6 for _, d in got)) / K
        out[ef] = (tied / len(literals), strict / len(literals), percentile(times, 50))
    memory.db.conn.execute("drop table openclaw_memory.bench_vectors")
    return out


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
                                 timezone="UTC", search=SEARCH) as memory:
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


def _kept_chunks(dsn: str, name: str) -> int:
    """Chunks a workspace of an earlier run holds (0 when there is none)."""
    with PostgresMemory.open(dsn, workspace=name, embedding={"provider": "none"}) as memory:
        return int(memory.status()["chunks"])


def run(n: int, dsn: str, model: Any, tmp: Path, args: Any) -> None:
    args.size = n
    # Only a run that loads the workspace (or indexes it in SQLite) needs its files.
    files = not (args.keep and args.skip_sqlite and _kept_chunks(dsn, f"bench{n}") >= n)
    scaled = build_workspace(load_sources(), n, tmp / f"ws-{n}", model, write_files=files)
    # The benchmark's own million-entry text -> vector table is no part of a client's work:
    # kept out of the garbage collector's passes, which would otherwise walk it mid-search.
    gc.freeze()
    provider = _Open(scaled.table, int(scaled.vectors.shape[1]))
    print(f"\n## {scaled.chunks} chunks, {len(scaled.questions)} questions", flush=True)
    lite = None if args.skip_sqlite else _sqlite(scaled, provider, tmp, args.budget)
    pg = _postgres(scaled, provider, dsn, args, f"bench{n}", model)
    if lite:
        print(f"load: SQLite sync {lite['load_s']:.1f} s")
    print(f"load: Postgres {pg['load']} {pg['publish_s']:.1f} s + sync (HNSW index, "
          f"statistics) {pg['index_s']:.1f} s; {pg['prewarmed']}")
    print("                      p50 ms  p95 ms")
    if lite:
        print(f"SQLite   hybrid      {_fmt(lite['hybrid'])}")
    print(f"Postgres hybrid      {_fmt(pg['hybrid'])}   target p50 <= {TARGET_P50_MS:g} (at 1M)")
    if lite:
        print(f"SQLite   keyword     {_fmt(lite['keyword'])}")
    print(f"Postgres keyword     {_fmt(pg['keyword'])}")
    if "recall" in pg:
        strict, notes = pg["recall"]
        print(f"Postgres vector recall@{K} vs exact, scaled notes (near-copy clusters): "
              f"{strict:.3f} same chunks, {notes:.3f} same notes")
        source, sweep = pg["passages"]
        _print_sweep(f"{source} (real embeddings)", sweep)
    if "random" in pg:
        _print_sweep(f"{n} random vectors in 200 topics", pg["random"])
    print(f"write -> searchable (write + first search that finds it): "
          f"{pg['write_to_search_ms']:.1f} ms p50")
    for clients, (qps, p50) in pg["clients"].items():
        print(f"{clients} concurrent client(s): {qps:6.1f} searches/s, p50 {p50:.1f} ms")


def _print_sweep(what: str, sweep: dict[int, tuple[float, float, float]]) -> None:
    print(f"Postgres HNSW ({HNSW_WITH}) recall@{K} vs exact on {what}:")
    for ef, (tied, strict, ms) in sweep.items():
        mark = " (default)" if ef == EF_SEARCH else ""
        print(f"  ef_search {ef:4d}{mark:10s} recall {tied:.3f} (target >= {TARGET_RECALL}; "
              f"{strict:.3f} counting ties by id), {ms:.1f} ms p50")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--budget", type=float, default=8.0)
    ap.add_argument("--dsn", default=None, help="a scratch database (default: start one)")
    ap.add_argument("--keep", action="store_true",
                    help="with --dsn: reuse a workspace an earlier run loaded")
    ap.add_argument("--skip-sqlite", action="store_true")
    ap.add_argument("--skip-recall", action="store_true",
                    help="latency only: no HNSW recall measurements (each builds an index)")
    ap.add_argument("--random-recall", action="store_true",
                    help="also measure HNSW recall on random vectors (another index build)")
    ap.add_argument("--shared-buffers", default="4GB", help="the scratch server's")
    ap.add_argument("--index-build-mb", type=int, default=3072,
                    help="store.index_build_mb for the HNSW builds")
    ap.add_argument("--no-translation", action="store_true",
                    help="search.translate_queries = false (questions searched only as asked)")
    ap.add_argument("--publish-max", type=int, default=200_000,
                    help="largest size loaded through publish; larger ones use COPY")
    args = ap.parse_args()
    if args.no_translation:
        SEARCH["translate_queries"] = False
    print(machine_report())
    with tempfile.TemporaryDirectory(prefix="ocm-pg-") as scratch:
        tmp = Path(scratch)
        with MemoryIndex.open(Path(__file__).resolve().parent.parent / "notebooks" / "data"
                              / "kestrel-team", index_path=tmp / "probe.sqlite") as probe:
            model = probe.provider
            sizes = [int(s) for s in args.sizes.split(",")]
            if args.dsn:
                for n in sizes:
                    run(n, args.dsn, model, tmp, args)
                return
            from openclaw_memory.postgres.scratch import running_postgres

            with running_postgres({"shared_buffers": args.shared_buffers}) as server:
                print(f"scratch server: shared_buffers {args.shared_buffers}")
                for n in sizes:
                    run(n, server.dsn, model, tmp, args)


if __name__ == "__main__":
    np.seterr(all="ignore")
    # A killed run (timeout, kill) stops its scratch server too instead of orphaning it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    main()
