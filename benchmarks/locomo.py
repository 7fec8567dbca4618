"""Retrieval quality on the LoCoMo-derived dev set: keyword-only vs hybrid configurations.

    python benchmarks/locomo.py [--data ../shared/bench/locomo-dev] [--configs all]

Every configuration uses the same chunking, so ``lines@6`` compares like with like. The
figures are computed with ``openclaw_memory.evaluation`` and, when the official scorer is
found beside the data, re-scored with it as a cross-check. The data (CC BY-NC 4.0) is read in
place and never copied into this repository; indexes go to a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.evaluation import evaluate, load_queries

CONFIGS: dict[str, dict[str, Any]] = {
    "keyword-only (none)": {"embedding": {"provider": "none"}},
    "local hybrid, default": {"embedding": {"provider": "local"}},
    "local, OpenClaw weighted 0.7/0.3": {"embedding": {"provider": "local"},
                                         "search": {"fusion": "weighted"}},
    "local, rrf k=60": {"embedding": {"provider": "local"}, "search": {"fusion": "rrf"}},
    "local, vector-only": {"embedding": {"provider": "local"}, "search": {"hybrid": False}},
    "local, 4 windows mean-pooled": {"embedding": {"provider": "local", "local_max_windows": 4}},
    "local, 4 windows, vector-only": {"embedding": {"provider": "local", "local_max_windows": 4},
                                      "search": {"hybrid": False}},
}


def _run_config(name: str, overrides: dict[str, Any], convs: list[Path], tmp: Path,
                ks: tuple[int, ...], min_score: float | None,
                ) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    results: list[dict[str, Any]] = []
    per_query: dict[str, dict[str, float]] = {}
    categories: dict[str, str | None] = {}
    started = time.perf_counter()
    for conv in convs:
        emb = overrides.get("embedding", {})
        provider = f"{emb.get('provider', 'auto')}-{emb.get('local_max_windows', 1)}"
        settings = MemorySettings.model_validate({"workspace": conv, **overrides})
        index_path = tmp / f"{conv.name}-{provider}.sqlite"  # shared by configs of a provider
        with MemoryIndex(settings, index_path=index_path) as memory:
            memory.sync()
            queries = load_queries(conv / "queries.jsonl")
            report = evaluate(memory, queries, ks=ks, min_score=min_score)
        results.extend(report["results"])
        per_query.update(report["per_query"])
        categories.update({q.qid: q.category for q in queries})
    elapsed = time.perf_counter() - started
    return _aggregate(per_query, categories, ks), results, elapsed


def _aggregate(per_query: dict[str, dict[str, float]], categories: dict[str, str | None],
               ks: tuple[int, ...]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, float]]] = {}
    for qid, m in per_query.items():
        cat = categories[qid]
        groups.setdefault(f"cat {cat}", []).append(m)
        if cat != "5":
            groups.setdefault("cat1-4", []).append(m)
    return {g: {"n": len(rows), **{k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}}
            for g, rows in sorted(groups.items())}


def _table(rows: dict[str, dict[str, Any]]) -> str:
    cols = ["cat 1", "cat 2", "cat 3", "cat 4", "cat1-4"]
    head = f"{'configuration':36s} " + " ".join(f"{c:>7s}" for c in cols) + \
        f" {'lines@6':>8s} {'mrr':>6s} {'time s':>7s}"
    out = ["recall@6 (%) by LoCoMo category; lines@6 and MRR over cat1-4", head, "-" * len(head)]
    for name, r in rows.items():
        agg = r["agg"]
        vals = " ".join(f"{100 * agg[c]['recall@6']:7.1f}" for c in cols)
        out.append(f"{name:36s} {vals} {agg['cat1-4']['lines@6']:8.1f} "
                   f"{100 * agg['cat1-4']['mrr']:6.1f} {r['time']:7.1f}")
    return "\n".join(out)


def _sweep(convs: list[Path], index_dir: Path | None) -> str:
    """Recall against lines as the threshold moves: compares the two modes at equal budgets."""
    lines = ["\nthreshold sweep: cat1-4 recall@6 % / lines@6 (per-category recall@6 in brackets)"]
    with tempfile.TemporaryDirectory() as scratch:
        tmp = index_dir or Path(scratch)
        for threshold in (0.0, 0.25, 0.35, 0.42, 0.5):
            for name in ("keyword-only (none)", "local hybrid, default"):
                agg, _, _ = _run_config(name, CONFIGS[name], convs, tmp, (6,), threshold)
                cats = " ".join(f"{100 * agg[c]['recall@6']:.1f}" for c in
                                ("cat 1", "cat 2", "cat 3", "cat 4"))
                lines.append(f"min_score {threshold:4.2f}  {name:22s} "
                             f"{100 * agg['cat1-4']['recall@6']:5.1f} / "
                             f"{agg['cat1-4']['lines@6']:5.1f}  [{cats}]")
    return "\n".join(lines)


def main() -> None:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=here.parent.parent / "shared/bench/locomo-dev")
    ap.add_argument("--configs", default="all", help="comma-separated names, or all")
    ap.add_argument("--json", type=Path, help="write all figures here")
    ap.add_argument("--sweep", action="store_true", help="also print a min_score sweep")
    ap.add_argument("--index-dir", type=Path, default=None,
                    help="keep indexes here to reuse embeddings across runs (default: temporary)")
    ap.add_argument("--min-score", type=float, default=None,
                    help="override every configuration's threshold (default: its own default)")
    args = ap.parse_args()
    convs = sorted(p for p in args.data.iterdir() if (p / "queries.jsonl").exists())
    if not convs:
        sys.exit(f"no workspaces with queries.jsonl under {args.data}")
    chosen = CONFIGS if args.configs == "all" else {
        k: v for k, v in CONFIGS.items() if k in args.configs.split(",")}
    print(f"machine: {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}, data: {args.data}")
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.index_dir or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        for name, overrides in chosen.items():
            agg, results, elapsed = _run_config(name, overrides, convs, tmp, (1, 3, 6, 10),
                                                args.min_score)
            rows[name] = {"agg": agg, "time": elapsed}
            scorer = args.data.parent / "score.py"
            if scorer.exists():
                out = Path(scratch) / "results.jsonl"
                out.write_text("".join(json.dumps(r) + "\n" for r in results))
                check = subprocess.run([sys.executable, str(scorer), "--data", str(args.data),
                                        "--results", str(out)], capture_output=True, text=True)
                line = next((x for x in check.stdout.splitlines() if x.startswith("cat1-4")), "")
                rows[name]["scorer_cat1_4"] = line
            print(f"done: {name} ({elapsed:.1f}s)", file=sys.stderr)
    print(_table(rows))
    for name, r in rows.items():
        if r.get("scorer_cat1_4"):
            print(f"score.py [{name}]: {r['scorer_cat1_4']}")
    if args.sweep:
        print(_sweep(convs, args.index_dir))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
