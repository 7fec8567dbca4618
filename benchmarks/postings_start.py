"""How soon a new process has the keyword postings: read from FTS5, against loaded from the file
saved beside the index, on notes full of identifiers.

    python benchmarks/postings_start.py [--chunks 100000] [--queries 100]

Builds an index of ``--chunks`` chunks of daily-log text (the synthetic corpus of
``_common.make_corpus``) in lines of 25 words, each ending in a reference token of its own
(``ref123x4``, as ticket ids, hashes and file names do in real notes: a vocabulary most of
whose terms occur once). Then each figure is taken in a new process (the one a CLI call, a serverless worker
or a reloaded server is): the seconds until the postings of the current generation are in
memory, (a) with no saved file (read from FTS5), (b) loaded from the saved file, (c) loaded
and brought up to date after a note was added; and keyword queries' p50: FTS5 (what answers
until the postings are in memory) and the postings (warm). Prints the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report, make_corpus  # noqa: E402

from openclaw_memory.language.textsearch import keyword_terms, quote_term  # noqa: E402
from openclaw_memory.store import Store  # noqa: E402
from openclaw_memory.store.postings_file import postings_path  # noqa: E402
from openclaw_memory.types import Chunk, MemoryFile  # noqa: E402

_PROBE = """
import json, sys, time
started = time.perf_counter()
from openclaw_memory.store import Store
from pathlib import Path
store = Store(Path(sys.argv[1]), vector_backend="numpy")
queries = json.loads(sys.argv[2])
fts5 = []
for q in queries[:10]:  # the first searches: FTS5 answers until the postings are read
    t = time.perf_counter(); store.keyword_search(q, 12, ["memory"]); fts5.append(time.perf_counter() - t)
ready = store.wait_for_keyword_postings(600)
ready_s = time.perf_counter() - started
warm = []
for q in queries:
    t = time.perf_counter(); store.keyword_search(q, 12, ["memory"]); warm.append(time.perf_counter() - t)
print(json.dumps({"ready": ready, "ready_s": ready_s, "fts5": fts5, "warm": warm,
                  "read": store._postings.last_read, "path": store.keyword_path()}))
store.close()
"""


def build(index: Path, chunks: int) -> list[str]:
    corpus = make_corpus(chunks, n_queries=200, seed=7)
    store = Store(index, vector_backend="numpy")
    rows = []
    for n, text in enumerate(corpus.texts):
        words = text.split()
        # A reference token every 25 words: a line of a conversation log (the synthetic
        # corpus's lines are shorter), about 650 000 distinct terms at 100 000 chunks.
        lines = [" ".join(words[k:k + 25]) + f" ref{n}x{k // 25}" for k in range(0, len(words), 25)]
        rows.append(Chunk("memory/notes.md", "memory", n + 1, n + 1, "\n".join(lines), f"h{n}"))
    for start in range(0, len(rows), 5000):
        part = rows[start:start + 5000]
        store.replace_file(MemoryFile(f"memory/part-{start}.md", f"/ws/part-{start}.md", "memory",
                                      1, 10), f"f{start}", part, None, "m")
    store.close()
    return [" OR ".join(quote_term(t) for t in keyword_terms(q)) for q in corpus.queries
            if keyword_terms(q)]


def probe(index: Path, queries: list[str]) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", _PROBE, str(index), json.dumps(queries)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"the probe failed:\n{out.stderr[-2000:]}")
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _ms(values: object) -> str:
    assert isinstance(values, list)
    return f"{1000 * statistics.median(values):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(machine_report())
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "index.sqlite"
        started = time.perf_counter()
        queries = build(index, args.chunks)[: args.queries]
        print(f"index: {args.chunks} chunks, lines of 25 words each ending in a reference token, "
              f"built in {time.perf_counter() - started:.0f} s")
        postings_path(index).unlink(missing_ok=True)
        runs = [("(a) read from FTS5 (no saved file)", probe(index, queries))]
        runs.append(("(b) loaded from the saved file", probe(index, queries)))
        store = Store(index, vector_backend="numpy")
        store.replace_file(MemoryFile("memory/new.md", "/ws/new.md", "memory", 1, 10), "n",
                           [Chunk("memory/new.md", "memory", 1, 1, "a new note ref-new", "hn")],
                           None, "m")
        store.close()
        runs.append(("(c) loaded, then a note added since", probe(index, queries)))
        print(f"{'new process':38} {'postings ready s':>16} {'first 10 p50 ms':>16} "
              f"{'warm p50 ms':>12}  how")
        for name, run in runs:
            print(f"{name:38} {run['ready_s']:16.2f} {_ms(run['fts5']):>16} "
                  f"{_ms(run['warm']):>12}  {run['read']}; {run['path']}")
    print(machine_report())


if __name__ == "__main__":
    main()
