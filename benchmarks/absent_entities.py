"""Questions about people the notes never mention: do they still get hits?

    python benchmarks/absent_entities.py                  # default settings
    python benchmarks/absent_entities.py --configs default,keyword-only --index-dir /tmp/ae

The check set is built from the LoCoMo dev conversations where they lie (``../shared/bench/
locomo-dev``, never copied): each conversation's questions (categories 1-4) are asked of every
other dev conversation that shares no speaker with it, so every person they name is absent
from the notes searched. Reported per configuration:

* absent-entity questions: the share that returns any hit (target <= 15 %), the share that
  returns only low-confidence hits, and the mean number of hits;
* the same questions asked of their own conversation: recall@6 (what the absent-name check
  must not cost; target: at most 1 point below the same configuration without the check).

A question is counted once per conversation it is asked of.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.evaluation.metrics import load_queries, run_queries  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "bench" / "locomo-dev"
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "no-absent-check": {"search": {"absent_name_check": False}},
    "keyword-only": {"embedding": {"provider": "none"}},
}


def speakers(conversation: Path) -> set[str]:
    with (conversation / "turns.jsonl").open(encoding="utf-8") as turns:
        return {json.loads(line)["speaker"] for line in turns if line.strip()}


def conversations(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "queries.jsonl").is_file())


def evaluate(root: Path, index_dir: Path, overrides: dict[str, Any], name: str) -> dict[str, float]:
    convs = conversations(root)
    people = {c.name: speakers(c) for c in convs}
    asked = with_hits = weak_only = hits_total = 0
    own_recall: list[float] = []
    for target in convs:
        with MemoryIndex.open(target, index_path=index_dir / f"{target.name}-{name}.sqlite",
                              **overrides) as memory:
            memory.sync()
            own = [q for q in load_queries(target / "queries.jsonl")
                   if q.category not in (None, "5", 5)]
            own_recall += [o.metrics["recall@6"] for o in run_queries(memory, own, ks=(6,))
                           if o.metrics is not None]
            for other in convs:
                if other == target or people[other.name] & people[target.name]:
                    continue
                for q in load_queries(other / "queries.jsonl"):
                    if q.category in (None, "5", 5):
                        continue
                    response = memory.search(q.question, max_results=6)
                    asked += 1
                    with_hits += bool(response.results)
                    weak_only += not response.results and bool(response.low_confidence_results)
                    hits_total += len(response.results)
    pct = lambda a, b: 100.0 * a / b if b else float("nan")  # noqa: E731
    return {"asked": float(asked), "any_hit": pct(with_hits, asked),
            "low_confidence_only": pct(weak_only, asked), "mean_hits": hits_total / max(1, asked),
            "own_recall@6": 100.0 * sum(own_recall) / max(1, len(own_recall))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="default,no-absent-check,keyword-only")
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--index-dir", type=Path, default=None)
    args = parser.parse_args()
    if not args.locomo.is_dir():
        sys.exit(f"no LoCoMo dev set at {args.locomo}: pass --locomo DIR")
    print(machine_report())
    with tempfile.TemporaryDirectory() as tmp:
        index_dir = args.index_dir or Path(tmp)
        index_dir.mkdir(parents=True, exist_ok=True)
        print(f"{'config':18} {'asked':>6} {'any hit %':>9} {'weak only %':>11} {'mean hits':>9} "
              f"{'own recall@6':>12}")
        for name in args.configs.split(","):
            f = evaluate(args.locomo, index_dir, CONFIGS[name], name)
            print(f"{name:18} {f['asked']:6.0f} {f['any_hit']:9.1f} {f['low_confidence_only']:11.1f} "
                  f"{f['mean_hits']:9.2f} {f['own_recall@6']:12.1f}")
    print(machine_report())


if __name__ == "__main__":
    main()
