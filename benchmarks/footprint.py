"""Index size per chunk, broken down by structure, and the peak memory of serving it.

    python benchmarks/footprint.py                     # 20k chunks x 512 dims (the default model's)
    python benchmarks/footprint.py --chunks 100000 --dims 384 --serve   # + peak RSS of a search

A first sync of synthetic daily logs (400-token chunks, ``benchmarks/_common.py``) with a
precomputed embedder, then an edit of every tenth file and a second sync (so the embedding
cache holds what an index that lives a while holds). The breakdown reads SQLite's ``dbstat``
table through the standard library's ``sqlite3`` (pages per table and index, free pages
included), so it shows where each byte of the file goes; the raw sizes of one chunk's text
and one float32 vector are printed beside it as the floor.

``--serve`` opens the index in a fresh process, answers 20 hybrid searches and reports that
process's peak RSS next to the size of the in-memory vector matrix.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PrecomputedProvider, machine_report, make_corpus, write_workspace

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.indexing.file_state import RACY_WINDOW_S

#: dbstat names -> the structure they belong to (FTS5 and vec0 keep shadow tables).
GROUPS = (
    ("chunks_fts", "keyword index (FTS5)"),
    ("chunks_vec", "vec0 vectors"),
    ("embedding_cache", "embedding cache"),
    ("chunks_path", "chunks indexes"),
    ("chunks_source", "chunks indexes"),
    ("chunks_hash", "chunks indexes"),
    ("sqlite_autoindex_chunks", "chunks indexes"),
    ("chunks", "chunks (text, vector, lines)"),
    ("files", "files and the rest"),
)


def _group(name: str) -> str:
    for prefix, label in GROUPS:
        if name.startswith(prefix):
            return label
    return "files and the rest"


def breakdown(path: Path) -> tuple[dict[str, int], int]:
    """Bytes per structure (pages x page size) and free pages' bytes, read with dbstat."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        page = int(conn.execute("pragma page_size").fetchone()[0])
        sizes: dict[str, int] = defaultdict(int)
        for name, pages in conn.execute("select name, count(*) from dbstat group by name"):
            sizes[_group(str(name))] += int(pages) * page
        free = int(conn.execute("pragma freelist_count").fetchone()[0]) * page
    finally:
        conn.close()
    return dict(sizes), free


def build(tmp: Path, n_chunks: int, dims: int) -> tuple[Path, Path, int, float, float]:
    corpus = make_corpus(n_chunks, dims=dims, n_queries=20)
    ws = tmp / "ws"
    write_workspace(ws, corpus)
    settings = MemorySettings.model_validate({"workspace": ws})
    index_path = tmp / "index.sqlite"
    table = corpus.lookup()
    edited: dict[str, str] = {}
    for i, (rel, text) in enumerate(sorted(corpus.files.items())):
        if i % 10 == 0:  # an edit re-chunks the file: the cache keeps the old chunks' vectors
            edited[rel] = text.replace("\n- ", "\n- note ", 1)
    with MemoryIndex(settings, index_path=index_path,
                     embedder=PrecomputedProvider(table, "footprint")) as memory:
        memory.sync()
    from openclaw_memory.indexing.chunking import chunk_text
    for rel, text in edited.items():
        (ws / rel).write_text(text, encoding="utf-8")
        for chunk in chunk_text(text, path=rel, source="memory", settings=settings.chunking):
            table.setdefault(chunk.text.strip(), table[next(iter(table))])
    with MemoryIndex(settings, index_path=index_path,
                     embedder=PrecomputedProvider(table, "footprint")) as memory:
        memory.sync()
        chunks = memory.store.counts()["chunks"]
    text_bytes = sum(len(t.encode()) for t in corpus.texts) / len(corpus.texts)
    (tmp / "queries.json").write_text(json.dumps(corpus.queries), encoding="utf-8")
    return ws, index_path, chunks, text_bytes, dims * 4.0


SERVE = r"""
import json, sys
sys.path.insert(0, sys.argv[4])
from _common import PrecomputedProvider
import numpy as np
from openclaw_memory import MemoryIndex, MemorySettings
dims = int(sys.argv[3])
queries = json.loads(open(sys.argv[5]).read())
rng = np.random.default_rng(1)
table = {q: (lambda v: v / np.linalg.norm(v))(rng.standard_normal(dims).astype(np.float32))
         for q in queries}
settings = MemorySettings.model_validate({"workspace": sys.argv[1]})
from pathlib import Path
def kb(key):
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent across exec.
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return float(status.get(key, "0 kB").split()[0]) / 1024
base = kb("VmHWM")
embedder = PrecomputedProvider(table, "footprint")
with MemoryIndex(settings, index_path=Path(sys.argv[2]), embedder=embedder) as m:
    for q in queries:
        m.search(q)
    matrix = m.store._numpy.nbytes() if m.store.vector_path == "numpy" else 0
    print(json.dumps({"rss_mb": kb("VmHWM"),
                      "anon_mb": kb("RssAnon"), "file_mb": kb("RssFile"), "base_mb": base,
                      "matrix_mb": matrix / 1048576, "path": m.store.vector_path}))
"""


def serve(ws: Path, index_path: Path, dims: int, queries: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", SERVE, str(ws), str(index_path), str(dims),
         str(Path(__file__).resolve().parent), str(queries)],
        check=False, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the serving process failed:\n{out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def report(title: str, index_path: Path, chunks: int, text_bytes: float,
           vector_bytes: float) -> None:
    sizes, free = breakdown(index_path)
    total = index_path.stat().st_size
    print(f"\n{title}; index file {total / 1e6:.1f} MB = {total / chunks / 1024:.2f} KB per "
          "chunk (target about 5 KB)")
    print(f"{'structure':34} {'KB/chunk':>9} {'share':>6}")
    for label, size in sorted(sizes.items(), key=lambda kv: -kv[1]):
        print(f"{label:34} {size / chunks / 1024:9.2f} {size / total:6.1%}")
    print(f"{'free pages':34} {free / chunks / 1024:9.2f} {free / total:6.1%}")
    print(f"floor: chunk text {text_bytes / 1024:.2f} KB + one float32 vector "
          f"{vector_bytes / 1024:.2f} KB = {(text_bytes + vector_bytes) / 1024:.2f} KB")


def real(folder: Path, index_path: Path) -> None:
    """Index a real workspace with the offline default model and break its index down."""
    with MemoryIndex.open(folder, index_path=index_path) as memory:
        memory.sync()
        chunks = memory.store.counts()["chunks"]
        text = float(memory.store.query("select avg(length(cast(text as blob))) from chunks")[0][0])
        tokens = memory.settings.chunking.tokens
        dims = memory.provider.dims if memory.provider else 0
    report(f"{folder.name}: {chunks:,} chunks of real notes (at most {tokens} tokens) x "
           f"{dims} dims", index_path, chunks, text, (dims or 0) * 4.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--dims", type=int, default=512, help="512: the default model's width")
    parser.add_argument("--workspace", type=Path, action="append", default=[],
                        help="also index this workspace (real notes) with the default model and "
                             "break its index down the same way (repeatable)")
    parser.add_argument("--serve", action="store_true",
                        help="also report the peak RSS of a process serving searches")
    args = parser.parse_args()
    print(machine_report())
    with tempfile.TemporaryDirectory(prefix="footprint-") as tmpdir:
        tmp = Path(tmpdir)
        ws, index_path, chunks, text_bytes, vector_bytes = build(tmp, args.chunks, args.dims)
        report(f"{chunks:,} synthetic chunks x {args.dims} dims", index_path, chunks,
               text_bytes, vector_bytes)
        for i, folder in enumerate(args.workspace):
            real(folder, tmp / f"real-{i}.sqlite")
        if args.serve:
            # Past the window in which just-written files are read again (indexing/sync.py
            # RACY_WINDOW_S): what is measured is a process serving an index, not re-checking it.
            time.sleep(RACY_WINDOW_S + 0.5)
            served = serve(ws, index_path, args.dims, tmp / "queries.json")
            print(f"\nserving {args.chunks:,} chunks: peak RSS {served['rss_mb']:.0f} MB "
                  f"(before opening the index {served['base_mb']:.0f} MB) with a "
                  f"{served['matrix_mb']:.0f} MB vector matrix (path {served['path']}); now "
                  f"{served['anon_mb']:.0f} MB private + {served['file_mb']:.0f} MB of mapped "
                  "files (the index pages SQLite reads through mmap: shared, reclaimable)")


if __name__ == "__main__":
    main()
