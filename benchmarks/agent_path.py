"""The path production agents take: a new process, an embedding provider that costs per call
or the local kind, notes full of identifiers; first searches, warm searches and what the
time stage adds, against exact numpy top-6 over the same vectors.

    python benchmarks/agent_path.py [--chunks 100000] [--questions 100] [--runs 3]

The notes are real notes scaled up as in ``scale.py`` (every workspace this repository ships,
plus the development sets when they lie beside the clone; people renamed, dates moved), each
text line ending in a reference token of its own (``ref12x7``), so most keyword terms occur
once, as ticket ids, hashes and file names make them in real notes. Vectors: the original
notes and the questions embedded once by the offline default model, a copy's chunk its
original's vector plus small noise; any other text (the lines a search compares) a fixed
vector of its own.

Two indexes of the same notes, each measured in a new process (a CLI call, a serverless
worker, a reloaded server):

* ``local``: the vectors through our provider interface in process (not costly: the kind
  the bundled model is);
* ``costly``: the ``openai`` provider (costly: OpenAI, Gemini, Voyage, Mistral are) over
  HTTP to an OpenAI-compatible server on 127.0.0.1 that answers with the same vectors.

Per index, each figure the median over ``--runs`` new processes (one process's first ten
searches swing by a third on a shared machine; each process's ``first 10`` is listed too):
``first 10`` (p50 of the first ten searches after open: FTS5 answers keywords until
the postings file is loaded), ``ready s`` (open until the keyword postings are in memory: the
first search asks for them),
``warm`` (p50 of a second pass over the questions, after one pass that embedded the lines a
search compares), ``exact`` (numpy ``matrix @ q`` and ``argpartition`` top-6 over the same
vectors, in the same process), ``time stage`` (median over the questions of the warm
search's time with ``search.newer_first`` on minus off, paired), generation changes made by
all the searches (a search must write nothing) and the provider's HTTP requests.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import EmbeddingsServer, machine_report  # noqa: E402
from scale import Scaled, Tabled, build_workspace, load_sources  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.config import EmbeddingSettings  # noqa: E402
from openclaw_memory.embeddings.factory import build_provider  # noqa: E402

MODEL = "bench-vectors"

_PROBE = r"""
import json, pickle, statistics, sys, time
from pathlib import Path
import numpy as np
started = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from scale import Tabled
from openclaw_memory import MemoryIndex
config = json.loads(sys.argv[2])
data = pickle.loads(Path(config["table"]).read_bytes())
questions = data["questions"][:config["questions"]]
embedder = Tabled(data["table"], data["dims"]) if config["kind"] == "local" else None
settings = {"sync": {"on_search": False}, "embedding": config["embedding"]}
loaded = time.perf_counter()
memory = MemoryIndex.open(config["ws"], index_path=config["index"], embedder=embedder, **settings)
opened = time.perf_counter()
generation = memory.store.generation()
first = []
for q in questions[:10]:
    t = time.perf_counter(); memory.search(q); first.append(time.perf_counter() - t)
memory.store.wait_for_keyword_postings(600)
ready = memory.store._postings.ready_at - opened  # when they landed, searches aside
for q in questions:
    memory.search(q)  # the first pass embeds the lines a search compares (kept in memory)
from dataclasses import replace
from datetime import UTC, datetime
from openclaw_memory.search.pipeline import run_search
from openclaw_memory.search.request import SearchRequest
provider = memory.provider
on_settings = memory.settings.search
off_settings = on_settings.model_copy(update={"newer_first": False})
warm, on, off = [], [], []
for q in questions:
    t = time.perf_counter(); memory.search(q); warm.append(time.perf_counter() - t)
    request = SearchRequest(q, 6, None, ("memory",), True, datetime.now(UTC))
    t = time.perf_counter(); run_search(memory.store, provider, request, on_settings)
    on.append(time.perf_counter() - t)
    t = time.perf_counter(); run_search(memory.store, provider, request, off_settings)
    off.append(time.perf_counter() - t)
bumps = memory.store.generation() - generation
memory.close()
matrix = np.load(config["matrix"])
exact = []
for q in questions:
    vector = data["table"][q]
    t = time.perf_counter(); np.argpartition(-(matrix @ vector), 5)[:6]; exact.append(time.perf_counter() - t)
ms = lambda xs: 1000 * statistics.median(xs)
print(json.dumps({"first": ms(first), "ready": ready, "warm": ms(warm), "exact": ms(exact),
                  "stage": ms([a - b for a, b in zip(on, off)]), "bumps": bumps,
                  "open": opened - loaded}))
"""


def _build(scaled: Scaled, index: Path, embedding: dict[str, Any],
           embedder: Tabled | None) -> float:
    started = time.perf_counter()
    with MemoryIndex.open(scaled.ws, index_path=index, embedder=embedder,
                          embedding=embedding) as memory:
        memory.sync()
        memory.store.wait_for_keyword_postings(600)  # and saved beside the index for the probes
    return time.perf_counter() - started


def _probe(config: dict[str, Any]) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _PROBE, str(ROOT / "benchmarks"),
                          json.dumps(config)], capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"the probe failed:\n{out.stderr[-3000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3, help="new processes per index: each "
                        "figure is their median (one process's first ten searches swing by a "
                        "third on a shared machine), the first-10 p50 of each is listed")
    args = parser.parse_args()
    print(machine_report())
    model = build_provider("local", EmbeddingSettings(provider="local"))
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        scaled = build_workspace(load_sources(), args.chunks, tmp / "ws", model, identifiers=True)
        tabled = Tabled(scaled.table, int(scaled.vectors.shape[1]))
        table = tmp / "table.pkl"
        table.write_bytes(pickle.dumps({"table": scaled.table, "questions": scaled.questions,
                                        "dims": tabled.width}))
        np.save(tmp / "matrix.npy", np.ascontiguousarray(scaled.vectors))
        server = EmbeddingsServer(tabled)
        costly = {"provider": "openai", "model": MODEL, "api_key": "sk-local",
                  "base_url": server.url}
        kinds = {"local": ({"provider": "auto"}, tabled), "costly": (costly, None)}
        built = {name: _build(scaled, tmp / f"{name}.sqlite", embedding, embedder)
                 for name, (embedding, embedder) in kinds.items()}
        print(f"index: {scaled.chunks} chunks of real notes, every line ending in an "
              f"identifier, {tabled.width} dims; {min(args.questions, len(scaled.questions))} "
              f"real questions; built in {built['local']:.0f} s (local), "
              f"{built['costly']:.0f} s (costly, over HTTP)")
        print(f"{'provider':<36} {'first 10':>9} {'ready s':>8} {'warm':>7} {'exact':>7} "
              f"{'warm/exact':>11} {'first/warm':>11} {'time stage':>11} {'bumps':>6} {'HTTP':>6}")
        firsts = {}
        for name, (embedding, _) in kinds.items():
            before = server.requests
            runs = [_probe({"kind": name, "embedding": embedding, "ws": str(scaled.ws),
                            "index": str(tmp / f"{name}.sqlite"), "table": str(table),
                            "matrix": str(tmp / "matrix.npy"), "questions": args.questions})
                    for _ in range(max(1, args.runs))]
            got = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            got["bumps"] = max(run["bumps"] for run in runs)
            firsts[name] = [run["first"] for run in runs]
            label = ("local (in process, not costly)" if name == "local"
                     else "costly (openai client over HTTP)")
            print(f"{label:<36} {got['first']:8.1f}  {got['ready']:7.2f} {got['warm']:7.1f} "
                  f"{got['exact']:7.2f} {got['warm'] / got['exact']:10.1f}x "
                  f"{got['first'] / got['warm']:10.1f}x {got['stage']:10.2f} "
                  f"{int(got['bumps']):6d} {(server.requests - before) // len(runs):6d}")
        server.close()
    print(f"ms: p50 over the questions, median of {max(1, args.runs)} new processes; time "
          "stage: median of (newer_first on - off), paired; HTTP: requests per process")
    for name, values in firsts.items():
        print(f"first 10, each process ({name}): " + ", ".join(f"{v:.1f}" for v in values))
    print(machine_report())


if __name__ == "__main__":
    main()
