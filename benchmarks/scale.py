"""Latency at 10k, 100k and 300k chunks of real notes asked real questions, next to the
hardware limit and to LangGraph's and LangChain's stores on the same data.

    python benchmarks/scale.py                          # 10k, 100k, 300k chunks
    python benchmarks/scale.py --sizes 10000 --budget 3 # quick

The workspace is real notes scaled up: every workspace this repository ships with its
questions (``notebooks/data``), plus the development sets when they are present
(``../shared/bench``: LoCoMo conversation logs, MADial Chinese and English notes), copied
until the index holds N chunks. Each copy renames the people (names drawn from a pool of
2 000, so some recur in thousands of chunks and most in few) and moves the dates, so the
words have the frequencies of a real, large memory: names and common words on many lines.

The questions are the real questions of those workspaces, in their own words (English and
Chinese). Vectors come from the offline default model: the original chunks and every
question are embedded once; a copy's vector is its original's plus small noise (cosine about
0.97), so a question's nearest chunks are the copies of the notes it is about, as they would
be. Every system gets the same text -> vector table (no embedding cost is timed).

Per size: ours (hybrid, vector-only, keyword-only; the default ``auto`` path and the vec0
fallback), the hardware reference: exact numpy brute force over the same matrix (a BLAS
matrix-vector product on both cores, with the rate at which it reads the vectors) and one
core reading the matrix once, LangGraph ``SqliteStore`` (vector only) and
LangChain ``InMemoryVectorStore`` (vector only; skipped where it would hold more than
``--max-inmemory`` chunks as Python floats). Wall p50 / p95 and CPU p50 in ms.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import itertools
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

# Imported with the module: numpy loads its random package on first use (~10 ms), which
# the benchmark's embedder would otherwise charge to one of the library's first searches.
import numpy.random

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_report, peak_rss_mb, precomputed_embeddings, require_peers
from search_latency import Cell, K, _fmt, _in_memory, _sqlite_store, _time_queries

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.embeddings.base import EmbeddingProvider, provider_key_for
from openclaw_memory.indexing.chunking import chunk_text
from openclaw_memory.search.pipeline import SearchRequest, run_search
from openclaw_memory.search.querylines import query_lines
from openclaw_memory.store import Store

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "notebooks" / "data"
DEV = ROOT.parent / "shared" / "bench"
NOISE = 0.25  # per-dimension noise of a copy's vector, relative to 1/sqrt(dims)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


@dataclass
class Source:
    files: dict[str, str]  # path -> text
    questions: list[str]


def _workspaces() -> list[Path]:
    found = [p.parent for p in sorted(SHIPPED.glob("*/queries.jsonl"))]
    found += [p.parent for p in sorted(DEV.glob("locomo-dev/*/queries.jsonl"))]
    found += [p.parent for p in sorted(DEV.glob("madial-dev/*-context/queries.jsonl"))]
    return found


def load_sources() -> list[Source]:
    out = []
    for ws in _workspaces():
        files = {str(p.relative_to(ws)): p.read_text(encoding="utf-8")
                 for p in sorted(ws.rglob("*.md"))}
        questions = [json.loads(line)["question"] for line in
                     (ws / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
        out.append(Source(files, questions))
    return out


def _name_pool(rng: np.random.Generator, size: int = 2000) -> list[str]:
    syllables = ["ka", "ri", "lo", "me", "an", "so", "vi", "ta", "el", "no", "du", "ra", "mi",
                 "be", "or", "sa", "te", "li", "go", "ne"]
    names: set[str] = set()
    while len(names) < size:
        n = int(rng.integers(2, 4))
        names.add("".join(rng.choice(syllables, n)).capitalize())
    return sorted(names)


def _people(sources: list[Source]) -> list[str]:
    """Capitalised words that recur across a workspace's notes: its people and places."""
    counts: dict[str, int] = {}
    for source in sources:
        for text in source.files.values():
            for word in re.findall(r"\b[A-Z][a-z]{2,}\b", text):
                counts[word] = counts.get(word, 0) + 1
    common = {"The", "What", "When", "Where", "Which", "Who", "How", "And", "But", "She", "They",
              "His", "Her", "Our", "Yes", "That", "This", "Did", "Was", "For", "With"}
    return [w for w, c in sorted(counts.items(), key=lambda kv: -kv[1]) if c >= 5
            and w not in common][:60]


def _shift_dates(text: str, days: int) -> str:
    def move(m: re.Match[str]) -> str:
        try:
            d = date(int(m[1]), int(m[2]), int(m[3])) + timedelta(days=days)
        except ValueError:
            return m[0]
        return d.isoformat()
    return _DATE.sub(move, text)


def _with_identifiers(text: str, copy: int, numbers: Iterator[int]) -> str:
    """Each text line ends in ``ref<copy>x<n>``, ``n`` counting on across the copy's files:
    a token no other line holds."""
    return "\n".join(f"{line} ref{copy}x{next(numbers)}"
                     if line.strip() and not line.startswith("#") else line
                     for line in text.split("\n"))


class Tabled(EmbeddingProvider):
    """Our provider interface over the text -> vector table."""

    id = "scaled"
    model = "scaled-real-notes"
    max_input_tokens = 1 << 20
    costly = False

    def __init__(self, table: dict[str, np.ndarray], dims: int) -> None:
        super().__init__(dims=dims)
        self.table = table
        self.width = dims
        self.provider_key = provider_key_for(self.id)

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(t.strip()) for t in texts])

    def _vector(self, text: str) -> np.ndarray:
        found = self.table.get(text)
        if found is not None:
            return found
        # A note written during the run (not in the table): a fixed vector of its own.
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(self.width).astype(np.float32)
        return vector / np.linalg.norm(vector)


@dataclass
class Scaled:
    ws: Path
    texts: list[str]
    vectors: np.ndarray
    questions: list[str]
    table: dict[str, np.ndarray]
    chunks: int


def build_workspace(sources: list[Source], n_chunks: int, root: Path, model: EmbeddingProvider,
                    seed: int = 11, write_files: bool = True,
                    identifiers: bool = False) -> Scaled:
    """``write_files`` False: the texts, vectors and questions only (a benchmark that reuses
    a workspace an earlier run loaded does not need the files, a few GB at 1M).
    ``identifiers``: every text line of a copy ends in a reference token of its own
    (``ref12x7``, as ticket ids, hashes and file names do in real notes), so most of the
    keyword vocabulary occurs once."""
    rng = np.random.default_rng(seed)
    settings = MemorySettings.model_validate({"workspace": root}).chunking
    # Each workspace under its own folder: their paths overlap (MEMORY.md, the same dates).
    originals: list[tuple[str, str]] = [(f"s{k}/{p}", t) for k, s in enumerate(sources)
                                        for p, t in s.files.items()]
    by_line = {p: {c.start_line: c.text for c in chunk_text(t, path=p, source="memory",
                                                            settings=settings)}
               for p, t in originals}
    base_texts = sorted({text for lines in by_line.values() for text in lines.values()})
    base_vectors = model.embed_documents(base_texts)
    base = dict(zip(base_texts, base_vectors, strict=True))
    questions = sorted({q for s in sources for q in s.questions})
    # A question of several lines (a dialogue) is searched with each of its lines too.
    asked = sorted(set(questions) | {line for q in questions for line in query_lines(q)})
    table: dict[str, np.ndarray] = dict(zip(asked, model.embed_documents(asked), strict=True))
    people, pool = _people(sources), _name_pool(rng)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, people)) + r")\b") if people else None
    texts: list[str] = []
    vectors: list[np.ndarray] = []
    dims = base_vectors.shape[1]
    copy, chunks = 0, 0
    while chunks < n_chunks:
        names = {p: str(pool[min(int(rng.zipf(1.3)) - 1, len(pool) - 1)]) for p in people}
        numbers = itertools.count()
        for path, text in originals:
            body = _shift_dates(text, copy * 7)
            if copy and pattern is not None:
                body = pattern.sub(lambda m, names=names: names[m[1]], body)
            if identifiers:
                body = _with_identifiers(body, copy, numbers)
            rel = f"memory/c{copy:05d}/{path}"
            if write_files:
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(body, encoding="utf-8")
            orig = by_line[path]
            for chunk in chunk_text(body, path=rel, source="memory", settings=settings):
                chunks += 1
                if chunk.text in table:
                    continue
                # The original chunk this one starts in (identifiers shift chunk boundaries).
                starts = sorted(orig)
                at = bisect.bisect_right(starts, chunk.start_line) - 1
                near = base.get(orig.get(chunk.start_line, orig[starts[at]] if at >= 0 else ""))
                if near is None:
                    near = base_vectors[int(rng.integers(0, len(base_vectors)))]
                v = near + rng.standard_normal(dims).astype(np.float32) * NOISE / np.sqrt(dims)
                v = (v / np.linalg.norm(v)).astype(np.float32)
                table[chunk.text] = v
                texts.append(chunk.text)
                vectors.append(v)
        copy += 1
    # Timed in a fixed random order: a time budget cut off the sorted list at its first
    # (mostly English whole-dialogue) questions.
    order = np.random.default_rng(seed + 1).permutation(len(questions))
    return Scaled(root, texts, np.stack(vectors), [questions[i] for i in order], table, chunks)


def bandwidth_gbs() -> float:
    """Memory read bandwidth of this machine: summing a 512 MB array, best of three."""
    data = np.ones(128 * 1024 * 1024, np.float32)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        data.sum()
        best = min(best, time.perf_counter() - started)
    return data.nbytes / best / 1e9


def _settings(ws: Path, backend: str, hybrid: bool = True,
              matrix_mb: int | None = None) -> MemorySettings:
    store: dict[str, Any] = {"vector_backend": backend}
    if matrix_mb is not None:
        store["max_matrix_mb"] = matrix_mb
    return MemorySettings.model_validate({
        "workspace": ws, "store": store, "search": {"hybrid": hybrid}})


def measure_ours(scaled: Scaled, index_path: Path, provider: Tabled, backend: str,
                 budget: float, matrix_mb: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    started = time.perf_counter()
    with MemoryIndex(_settings(scaled.ws, backend, matrix_mb=matrix_mb), index_path=index_path,
                     embedder=provider) as memory:
        memory.sync()  # the first index (auto), or building the vec0 table from it (vec0)
        out["build_s"] = time.perf_counter() - started
        # A long-lived process answers keywords from postings read in the background once
        # they are read (the first searches of a process are answered by FTS5 meanwhile).
        waited = time.perf_counter()
        memory.store.wait_for_keyword_postings()
        out["postings"] = (f"{memory.store.keyword_path()}; read in "
                           f"{time.perf_counter() - waited:.1f} s")
        out["hybrid"] = _time_queries(lambda q: memory.search(q, max_results=K),
                                      scaled.questions, budget)

        def keyword(q: str) -> Any:
            request = SearchRequest(q, K, None, ("memory",), True, datetime.now(UTC))
            return run_search(memory.store, None, request, memory.settings.search)

        out["keyword"] = _time_queries(keyword, scaled.questions, budget)
        out["path"] = memory.store.vector_path
        # An agent writes a note: the postings are brought up to date from the changed chunks.
        memory.write("The quarterly zeppelin inspection moved to Thursday.")
        memory.sync()
        waited = time.perf_counter()
        if memory.store.wait_for_keyword_postings():
            out["postings"] += (f"; after a note is written: {memory.store.keyword_path()} "
                                f"in {time.perf_counter() - waited:.2f} s")
        chunks = memory.store.counts()["chunks"]
    # After close: the WAL is checkpointed into the file.
    out["kb_per_chunk"] = index_path.stat().st_size / chunks / 1024
    with MemoryIndex(_settings(scaled.ws, backend, hybrid=False, matrix_mb=matrix_mb),
                     index_path=index_path,
                     embedder=provider) as memory:
        memory.sync()
        memory.store.wait_for_keyword_postings()  # coverage reads them too
        out["vector"] = _time_queries(lambda q: memory.search(q, max_results=K),
                                      scaled.questions, budget)
        # The vector path alone (what item "within 2x of brute force" is about): the full
        # vector-only search above also reads keyword coverage (absolute scores) and snippets.
        out["path_only"] = _time_queries(
            lambda q: memory.store.vector_search(scaled.table[q], K, ("memory",)),
            scaled.questions, budget)
        if out["path"] == "binary":
            out["recall"] = _binary_recall(memory.store, index_path, scaled)
    return out


def _binary_recall(store: Any, index_path: Path, scaled: Scaled) -> float:
    """Share of the exact top K (a float matrix, read for this) that the binary path returns."""
    exact = Store(index_path, vector_backend="numpy")
    try:
        found = 0
        for q in scaled.questions:
            ours = {r for r, _ in store.vector_search(scaled.table[q], K, ("memory",))}
            found += len(ours & {r for r, _ in exact.vector_search(scaled.table[q], K, ("memory",))})
        return found / (K * len(scaled.questions))
    finally:
        exact.close()


_PATHS = {"numpy": "in-memory matrix", "binary": "binary codes, exact re-scoring", "vec0": "vec0"}


def run_size(n: int, sources: list[Source], model: EmbeddingProvider, tmp: Path,
             args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    scaled = build_workspace(sources, n, tmp / f"ws-{n}", model)
    provider = Tabled(scaled.table, int(scaled.vectors.shape[1]))
    rows: dict[str, dict[str, Any]] = {}
    auto = measure_ours(scaled, tmp / f"ours-{n}.sqlite", provider, "auto", args.budget,
                        args.max_matrix_mb)
    auto_name = f"ours (auto: {_PATHS.get(auto['path'], auto['path'])})"
    rows[auto_name] = auto
    rows["ours (vec0 fallback)"] = measure_ours(
        scaled, tmp / f"ours-{n}.sqlite", provider, "vec0", args.budget)
    matrix = np.ascontiguousarray(scaled.vectors)

    def top(q: str) -> Any:
        scores = matrix @ scaled.table[q]
        return np.argpartition(-scores, K - 1)[:K]

    for name in (auto_name, "ours (vec0 fallback)"):
        rows[name.replace("ours", "  its vector path alone")] = {
            "vector": rows[name].pop("path_only")}
    rows["  its keyword side"] = {"note": auto.pop("postings")}
    rows["ours (vec0 fallback)"].pop("postings")
    if "recall" in auto:
        rows["  its recall@6 against exact"] = {"note": f"{auto.pop('recall'):.3f} (target >= 0.99)"}
    rows["exact numpy brute force"] = {"vector": _time_queries(top, scaled.questions,
                                                               args.budget)}
    floor_ms = matrix.nbytes / (args.bandwidth * 1e9) * 1000
    # One core reading the matrix once at the rate numpy sums memory; BLAS's matrix-vector
    # product above uses both cores (its own rate is printed with the ratios). A matrix
    # smaller than the CPU caches is read faster than this.
    rows["one-core read of the matrix"] = {"vector": (floor_ms, floor_ms, floor_ms, 0)}
    rows["_bytes"] = {"n": matrix.nbytes}
    if not args.no_peers:
        embeddings = precomputed_embeddings(scaled.table)
        store, conn, built = _sqlite_store(tmp / f"langgraph-{n}.sqlite", scaled.texts,
                                           int(matrix.shape[1]), embeddings)
        rows["langgraph SqliteStore"] = {"build_s": built, "vector": _time_queries(
            lambda q: store.search(("notes",), query=q, limit=K), scaled.questions, args.budget)}
        conn.close()
        if n <= args.max_inmemory:
            mem, built = _in_memory(_AsCorpus(scaled.texts), embeddings)
            rows["langchain InMemoryVectorStore"] = {"build_s": built, "vector": _time_queries(
                lambda q: mem.similarity_search(q, k=K), scaled.questions, args.budget)}
            del mem
        else:
            rows["langchain InMemoryVectorStore"] = {
                "note": f"skipped: {n:,} vectors as Python float lists would take about "
                        f"{n * matrix.shape[1] * 32 / 1e9:.1f} GB"}
    shutil.rmtree(scaled.ws, ignore_errors=True)
    rows["_about"] = {"text": f"{scaled.chunks:,} chunks of real notes x "
                              f"{matrix.shape[1]} dims ({matrix.nbytes / 1e6:.0f} MB of vectors), "
                              f"{len(scaled.questions)} real questions"}
    return rows


@dataclass
class _AsCorpus:
    texts: list[str]


def print_table(n: int, rows: dict[str, dict[str, Any]]) -> None:
    about = rows.pop("_about")["text"]
    rows = {k: v for k, v in rows.items() if not k.startswith("_")}
    print(f"\n{n:,}: {about}; k={K}; wall p50 / p95 (CPU p50) in ms")
    head = (f"{'system':32s} {'hybrid':>22s} {'vector-only':>22s} {'keyword-only':>22s} "
            f"{'build s':>8s}")
    print(head + "\n" + "-" * len(head))
    for name, r in rows.items():
        if "note" in r:
            print(f"{name:32s} {r['note']}")
            continue
        build = r.get("build_s")
        extra = f"  ({r['kb_per_chunk']:.1f} KB/chunk)" if "kb_per_chunk" in r else ""
        print(f"{name:32s} {_fmt(r.get('hybrid')):>22s} {_fmt(r.get('vector')):>22s} "
              f"{_fmt(r.get('keyword')):>22s} {'' if build is None else f'{build:8.1f}'}{extra}")


def print_ratios(results: dict[int, dict[str, dict[str, Any]]]) -> None:
    print("\nratios within each size (p50)")
    for n, rows in results.items():
        auto_name = next(name for name in rows if name.startswith("ours (auto"))
        ours = rows[auto_name]
        path = rows[auto_name.replace("ours", "  its vector path alone")]["vector"]
        exact: Cell = rows["exact numpy brute force"]["vector"]
        parts = []
        if path and exact:
            ratio = path[0] / exact[0]
            parts.append(f"auto vector path / brute force {ratio:.1f}x (target <= 2x: "
                         f"{'met' if ratio <= 2 else 'MISSED'})")
        # The two targets below are set at 100k chunks and past: in a smaller index the
        # vector scan takes well under a millisecond, and the fixed per-search work dominates.
        targeted = n >= 100_000
        if exact and ours.get("hybrid"):
            ratio = ours["hybrid"][0] / exact[0]
            verdict = f" (target <= 2.5x: {'met' if ratio <= 2.5 else 'MISSED'})" if targeted else ""
            parts.append(f"hybrid / brute force {ratio:.1f}x{verdict}")
        if path and ours.get("keyword"):
            ratio = ours["keyword"][0] / path[0]
            verdict = f" (target <= 1.5x: {'met' if ratio <= 1.5 else 'MISSED'})" if targeted else ""
            parts.append(f"keyword-only / vector path {ratio:.2f}x{verdict}")
        if exact:
            parts.append(f"brute force reads the vectors at "
                         f"{rows['_bytes']['n'] / (exact[0] / 1000) / 1e9:.0f} GB/s")
        peer = rows.get("langgraph SqliteStore", {}).get("vector")
        if peer and ours.get("hybrid"):
            parts.append(f"SqliteStore vector / our hybrid {peer[0] / ours['hybrid'][0]:.1f}x")
        print(f"  {n:,}: " + "; ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000,300000")
    ap.add_argument("--budget", type=float, default=8.0,
                    help="seconds of timed queries per cell, at least 10 queries")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--max-matrix-mb", type=int, default=None,
                    help="store.max_matrix_mb for the auto rows (default: the setting's; a "
                         "million chunks need 2 200 to stay in the in-memory matrix)")
    ap.add_argument("--max-inmemory", type=int, default=100_000,
                    help="largest size given to InMemoryVectorStore")
    args = ap.parse_args()
    if not args.no_peers:
        require_peers()
    print(machine_report())
    sources = load_sources()
    print(f"sources: {len(_workspaces())} workspaces ({', '.join(p.name for p in _workspaces())}"
          f"), {sum(len(s.questions) for s in sources)} questions")
    args.bandwidth = bandwidth_gbs()
    print(f"memory read rate of one core: {args.bandwidth:.1f} GB/s (numpy sum of 512 MB, "
          "best of 3)")
    with MemoryIndex.open(ROOT / "notebooks" / "data" / "kestrel-team",
                          index_path=Path(tempfile.mkdtemp()) / "probe.sqlite") as probe:
        model = probe.provider
        if model is None:
            sys.exit("the offline default model is not available")
        print(f"vectors: {model.id}/{model.model} for the original notes and the questions")
        results: dict[int, dict[str, dict[str, Any]]] = {}
        with tempfile.TemporaryDirectory(prefix="ocm-scale-") as scratch:
            for n in (int(s) for s in args.sizes.split(",")):
                results[n] = run_size(n, sources, model, Path(scratch), args)
                print_table(n, results[n])
                sys.stdout.flush()
    print_ratios(results)
    print(f"\npeak RSS of this run: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
