"""Retrieval quality of the peers on the LoCoMo dev set, with chunking identical to ours.

    python benchmarks/peers_locomo.py [--data SUITE_DIR] [--index-dir DIR]

For each conversation our index is built with the offline ``local`` model (MiniLM int8); its
chunks (path, lines, text) and the vectors the model produced for them are then loaded, as they
are, into LangGraph's ``SqliteStore`` (with an index, sqlite-vec) and langchain_core's
``InMemoryVectorStore``. Queries are embedded by the same provider for every system. So the
systems differ only in how they rank: chunks, vectors and k = 6 are the same. Metrics come from
``openclaw_memory.evaluation.metrics.score_hits`` (the LoCoMo scorer's definitions): recall@6 per
category and lines@6 (lines of context returned per question), averaged over categories 1-4.
The data (CC BY-NC 4.0) is read in place and never copied; indexes go to a temporary
directory unless ``--index-dir`` keeps them (embeddings are then reused across runs).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DIMS, machine_report, require_peers

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.evaluation.metrics import load_queries, score_hits
from openclaw_memory.store.connection import connect, probe_driver

K = 6
Span = tuple[str, int, int]
Searcher = Callable[[str], list[Span]]


class _SameVectors:
    """LangChain ``Embeddings`` giving the peers exactly our stored chunk vectors and our
    provider's query vectors."""

    def __init__(self, table: dict[str, list[float]], memory: MemoryIndex) -> None:
        self.table, self.memory = table, memory

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        # SqliteStore embeds its queries with embed_documents too: those are not in the table.
        return [self.table[t] if t in self.table else self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        provider = self.memory.provider
        assert provider is not None
        return [float(x) for x in provider.embed_query(text)]


def _as_embeddings(same: _SameVectors) -> Any:
    from langchain_core.embeddings import Embeddings

    class Wrapped(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return same.embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            return same.embed_query(text)

    return Wrapped()


def _our_chunks(memory: MemoryIndex) -> list[tuple[str, int, int, str, list[float]]]:
    rows = memory.store.query("select path, start_line, end_line, text, embedding from chunks "
                              "where source = 'memory' and embedding is not null order by rowid")
    return [(p, s, e, t, np.frombuffer(b, np.float32).tolist()) for p, s, e, t, b in rows]


def _sqlite_store(path: Path, chunks: Sequence[Any], embeddings: Any) -> tuple[Searcher, Any]:
    from langgraph.store.base import PutOp
    from langgraph.store.sqlite import SqliteStore

    conn = connect(path, probe_driver(True), busy_timeout_ms=10_000, load_vec=True)
    store = SqliteStore(conn, index={"dims": DIMS, "embed": embeddings, "text_fields": ["text"]})
    store.setup()
    store.batch([PutOp(("notes",), f"{p}#L{s}-L{e}", {"text": t, "path": p, "start": s, "end": e})
                 for p, s, e, t, _ in chunks])

    def search(query: str) -> list[Span]:
        items = store.search(("notes",), query=query, limit=K)
        return [(i.value["path"], i.value["start"], i.value["end"]) for i in items]

    return search, conn


def _in_memory(chunks: Sequence[Any], embeddings: Any) -> Searcher:
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(embedding=embeddings)
    store.add_texts([c[3] for c in chunks],
                    metadatas=[{"path": p, "start": s, "end": e} for p, s, e, _, _ in chunks])

    def search(query: str) -> list[Span]:
        docs = store.similarity_search(query, k=K)
        return [(d.metadata["path"], d.metadata["start"], d.metadata["end"]) for d in docs]

    return search


def _ours(memory: MemoryIndex, min_score: float | None) -> Searcher:
    def search(query: str) -> list[Span]:
        hits = memory.search(query, max_results=K, min_score=min_score).results
        return [(h.path, h.start_line, h.end_line) for h in hits]

    return search


def _systems(memory: MemoryIndex, vector_only: MemoryIndex, tmp: Path, name: str,
             ) -> tuple[dict[str, Searcher], list[Any]]:
    chunks = _our_chunks(memory)
    embeddings = _as_embeddings(_SameVectors({c[3]: c[4] for c in chunks}, memory))
    sqlite_search, conn = _sqlite_store(tmp / f"{name}-langgraph.sqlite", chunks, embeddings)
    return {
        "ours: hybrid, default min_score": _ours(memory, None),
        "ours: hybrid, min_score 0": _ours(memory, 0.0),
        "ours: vector-only, min_score 0": _ours(vector_only, 0.0),
        "langgraph SqliteStore (vector)": sqlite_search,
        "langchain InMemoryVectorStore": _in_memory(chunks, embeddings),
    }, [conn]


def _aggregate(rows: list[tuple[str | None, dict[str, float]]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, float]]] = {}
    for category, metrics in rows:
        groups.setdefault(f"cat {category}", []).append(metrics)
        if category != "5":
            groups.setdefault("cat 1-4", []).append(metrics)
    return {g: {"n": len(ms), **{k: sum(m[k] for m in ms) / len(ms) for k in ms[0]}}
            for g, ms in groups.items()}


def main() -> None:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dev = here.parent.parent / "shared/bench/locomo-dev"
    ap.add_argument("--data", type=Path, default=dev if dev.is_dir() else here.parent / "notebooks" / "data",
                    help="a suite folder (workspaces with queries.jsonl); default: the LoCoMo "
                         "dev set when present, else the shipped notebooks/data")
    ap.add_argument("--index-dir", type=Path, default=None,
                    help="keep our indexes here to reuse embeddings (default: temporary)")
    args = ap.parse_args()
    require_peers()
    convs = sorted(p for p in args.data.iterdir() if (p / "queries.jsonl").exists())
    if not convs:
        sys.exit(f"no workspaces with queries.jsonl under {args.data}")
    print(machine_report())
    print(f"data: {args.data} ({len(convs)} conversations); chunks, chunk vectors and query "
          f"vectors identical for every system (local MiniLM int8); k = {K}")
    per_system: dict[str, list[tuple[str | None, dict[str, float]]]] = {}
    with tempfile.TemporaryDirectory(prefix="ocm-peers-") as scratch:
        tmp = Path(scratch)
        index_dir = args.index_dir or tmp
        index_dir.mkdir(parents=True, exist_ok=True)
        for conv in convs:
            base = {"workspace": conv, "embedding": {"provider": "local"}}
            index_path = index_dir / f"{conv.name}-peers-local.sqlite"
            settings = MemorySettings.model_validate(base)
            vec_settings = MemorySettings.model_validate({**base, "search": {"hybrid": False}})
            with MemoryIndex(settings, index_path=index_path) as memory, \
                    MemoryIndex(vec_settings, index_path=index_path) as vector_only:
                memory.sync()
                vector_only.sync()
                systems, conns = _systems(memory, vector_only, tmp, conv.name)
                for q in load_queries(conv / "queries.jsonl"):
                    for name, search in systems.items():
                        metrics = score_hits(q.gold, search(q.question), (K,))
                        per_system.setdefault(name, []).append((q.category, metrics))
                for conn in conns:
                    conn.close()
            print(f"done: {conv.name}", file=sys.stderr)
    cols = ["cat 1", "cat 2", "cat 3", "cat 4", "cat 1-4"]
    head = f"{'system':34s} " + " ".join(f"{c:>7s}" for c in cols) + f" {'lines@6':>8s} {'mrr':>6s}"
    print(f"\nrecall@{K} (%) by LoCoMo category; lines@{K} and MRR over categories 1-4")
    print(head + "\n" + "-" * len(head))
    for name, rows in per_system.items():
        agg = _aggregate(rows)
        vals = " ".join(f"{100 * agg[c][f'recall@{K}']:7.1f}" if c in agg else f"{'-':>7s}"
                        for c in cols)
        print(f"{name:34s} {vals} {agg['cat 1-4'][f'lines@{K}']:8.1f} "
              f"{100 * agg['cat 1-4']['mrr']:6.1f}")


if __name__ == "__main__":
    main()
