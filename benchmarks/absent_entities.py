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

``--folds``: honest validation of ``search.absent_name_gate``. Each conversation in turn is
held out: the gate is chosen on the others (the lowest of a grid that keeps absent-entity
questions with hits under 15 % there at no recall cost over 1 point), then the held-out
conversation's figures at that gate are reported beside the figures on the conversations
it was chosen on.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.evaluation.metrics import load_queries, run_queries, score_hits  # noqa: E402
from openclaw_memory.search.absent import absent_names, asks_about, question_names  # noqa: E402

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


GATES = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45)


@dataclass
class Record:
    """One question asked of one conversation, with the check off: what any gate would do."""

    fold: str
    absent: bool
    """every name the question gives is absent from that conversation"""
    best: float
    hits: bool
    recall: float | None
    """recall@6 for the conversation's own questions, else None"""


def records(root: Path, index_dir: Path) -> list[Record]:
    convs = conversations(root)
    people = {c.name: speakers(c) for c in convs}
    out: list[Record] = []
    off = {"search": {"absent_name_check": False}}
    for target in convs:
        with MemoryIndex.open(target, index_path=index_dir / f"{target.name}-no-absent-check.sqlite",
                              **off) as memory:
            memory.sync()
            for other in convs:
                if other != target and people[other.name] & people[target.name]:
                    continue
                for q in load_queries(other / "queries.jsonl"):
                    if q.category in (None, "5", 5):
                        continue
                    response = memory.search(q.question, max_results=6)
                    names = question_names(q.question) if asks_about(q.question) else []
                    absent = bool(names) and len(absent_names(memory.search_backend(), names)) == len(names)
                    hits = [(h.path, h.start_line, h.end_line) for h in response.results]
                    recall = score_hits(q.gold, hits, (6,))["recall@6"] if other == target else None
                    out.append(Record(target.name, absent, response.results[0].score if hits else 0.0,
                                      bool(hits), recall))
    return out


def at_gate(rows: list[Record], gate: float) -> tuple[float, float]:
    """(absent-entity questions with hits %, own recall@6 %) at ``gate``."""
    kept = [r.hits and (not r.absent or r.best >= gate) for r in rows]
    cross = [k for r, k in zip(rows, kept, strict=True) if r.recall is None]
    own = [(r.recall or 0.0) if k else 0.0 for r, k in zip(rows, kept, strict=True)
           if r.recall is not None]
    return 100.0 * sum(cross) / max(1, len(cross)), 100.0 * sum(own) / max(1, len(own))


def folds(root: Path, index_dir: Path) -> None:
    rows = records(root, index_dir)
    names = sorted({r.fold for r in rows})
    print(f"{'held out':10} {'gate':>5} {'tuning: any hit %':>17} {'recall@6':>8} "
          f"{'held out: any hit %':>19} {'recall@6':>8} {'without the check:':>18} "
          f"{'any hit %':>9} {'recall@6':>8}")
    for held in names:
        tune = [r for r in rows if r.fold != held]
        test = [r for r in rows if r.fold == held]
        base = at_gate(tune, 0.0)[1]  # recall with the check off (every hit kept)
        gate = next((g for g in GATES if at_gate(tune, g)[0] <= 15.0
                     and at_gate(tune, g)[1] >= base - 1.0), GATES[-1])
        t_hit, t_rec = at_gate(tune, gate)
        h_hit, h_rec = at_gate(test, gate)
        n_hit, n_rec = at_gate(test, 0.0)
        print(f"{held:10} {gate:5.2f} {t_hit:17.1f} {t_rec:8.1f} {h_hit:19.1f} {h_rec:8.1f} "
              f"{'':18} {n_hit:9.1f} {n_rec:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="default,no-absent-check,keyword-only")
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument("--folds", action="store_true",
                        help="choose the gate on two conversations, report the third")
    args = parser.parse_args()
    if not args.locomo.is_dir():
        sys.exit(f"no LoCoMo dev set at {args.locomo}: pass --locomo DIR")
    print(machine_report())
    with tempfile.TemporaryDirectory() as tmp:
        index_dir = args.index_dir or Path(tmp)
        index_dir.mkdir(parents=True, exist_ok=True)
        if args.folds:
            folds(args.locomo, index_dir)
            print(machine_report())
            return
        print(f"{'config':18} {'asked':>6} {'any hit %':>9} {'weak only %':>11} {'mean hits':>9} "
              f"{'own recall@6':>12}")
        for name in args.configs.split(","):
            f = evaluate(args.locomo, index_dir, CONFIGS[name], name)
            print(f"{name:18} {f['asked']:6.0f} {f['any_hit']:9.1f} {f['low_confidence_only']:11.1f} "
                  f"{f['mean_hits']:9.2f} {f['own_recall@6']:12.1f}")
    print(machine_report())


if __name__ == "__main__":
    main()
