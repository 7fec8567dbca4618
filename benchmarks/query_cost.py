"""Hybrid query p50 of this checkout against another revision, on the same machine, in one run.

    python benchmarks/query_cost.py --against 8ce5cb3          # LoCoMo dev questions
    python benchmarks/query_cost.py --against HEAD~3 --rounds 5

The other revision is checked out into a temporary git worktree; each revision answers the
same questions (LoCoMo dev, categories 1-4, from ``../shared/bench/locomo-dev`` where it lies,
else the Kestrel notes in ``notebooks/data``) over its own index of the same notes, with the
default settings and the bundled model, in a subprocess of its own. The rounds alternate
between the two revisions so that a change of machine load falls on both; p50 of every query
of every round, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "bench" / "locomo-dev"

# Run inside the revision's own checkout: its package, its defaults.
_PROBE = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from openclaw_memory import MemoryIndex
workspaces = json.loads(sys.argv[2])
times = []
for ws, index, questions in workspaces:
    with MemoryIndex.open(ws, index_path=index) as memory:
        memory.sync()
        memory.search(questions[0])  # warm: model, dictionary, caches
        for q in questions:
            started = time.perf_counter()
            memory.search(q)
            times.append((time.perf_counter() - started) * 1000)
print(json.dumps(times))
"""


def _questions(suite: Path, limit: int) -> list[tuple[str, list[str]]]:
    out = []
    for folder in sorted(p for p in suite.iterdir() if (p / "queries.jsonl").is_file()):
        with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines if line.strip()]
        asked = [r["question"] for r in rows if str(r.get("category")) != "5"][:limit]
        out.append((str(folder), asked))
    return out


def _run(checkout: Path, suite: list[tuple[str, list[str]]], index_dir: Path) -> list[float]:
    spec = [(ws, str(index_dir / f"{Path(ws).name}.sqlite"), qs) for ws, qs in suite]
    done = subprocess.run([sys.executable, "-c", _PROBE, str(checkout), json.dumps(spec)],
                          capture_output=True, text=True, check=True)
    return [float(t) for t in json.loads(done.stdout.strip().splitlines()[-1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="a git revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-workspace", type=int, default=80)
    args = parser.parse_args()
    suite_dir = LOCOMO if LOCOMO.is_dir() else ROOT / "notebooks" / "data"
    suite = _questions(suite_dir, args.per_workspace) if suite_dir == LOCOMO else [
        (str(suite_dir), [json.loads(x)["question"] for x in
                          (suite_dir / "queries.jsonl").read_text(encoding="utf-8").splitlines()
                          if x.strip()])]
    print(machine_report())
    with tempfile.TemporaryDirectory() as tmp:
        other = Path(tmp) / "other"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(other),
                        args.against], check=True, capture_output=True)
        try:
            times: dict[str, list[float]] = {"this checkout": [], args.against: []}
            for _ in range(max(1, args.rounds)):
                for name, checkout in (("this checkout", ROOT), (args.against, other)):
                    index_dir = Path(tmp) / name.replace("/", "_").replace("~", "_")
                    index_dir.mkdir(exist_ok=True)
                    times[name] += _run(checkout, suite, index_dir)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)],
                           check=False, capture_output=True)
    count = sum(len(q) for _, q in suite)
    print(f"{count} questions x {args.rounds} rounds from {suite_dir.name}, default settings")
    p50 = {name: statistics.median(t) for name, t in times.items()}
    for name, value in p50.items():
        print(f"{name:16} hybrid query p50 {value:6.2f} ms")
    print(f"ratio: {p50['this checkout'] / p50[args.against]:.3f}")
    print(machine_report())


if __name__ == "__main__":
    main()
