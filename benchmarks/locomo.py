"""Retrieval quality on the LoCoMo-derived dev set: keyword-only vs hybrid configurations.

    python benchmarks/locomo.py [--data SUITE_DIR] [--configs all]

Every configuration uses the same chunking, so ``lines@6`` compares like with like. The
figures come from the code path of ``openclaw-memory eval --suite`` (``run_suite``) and, when
the official scorer is found beside the data, are re-scored with it as a cross-check. The
data (CC BY-NC 4.0) is read in place and never copied into this repository; indexes go to a
temporary directory unless ``--index-dir`` is given.
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
from openclaw_memory.errors import EvalInputError
from openclaw_memory.evaluation.metrics import DEFAULT_KS, result_line
from openclaw_memory.evaluation.suite import SuiteMember, find_suite, run_suite

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


def _run_config(overrides: dict[str, Any], members: list[SuiteMember], tmp: Path,
                ks: tuple[int, ...], min_score: float | None,
                ) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    """The code path of ``openclaw-memory eval --suite``: per-query averages over the suite."""
    emb = overrides.get("embedding", {})
    provider = f"{emb.get('provider', 'auto')}-{emb.get('local_max_windows', 1)}"

    def open_index(workspace: Path) -> MemoryIndex:
        settings = MemorySettings.model_validate({"workspace": workspace, **overrides})
        # One index per conversation and provider: configurations of a provider share it.
        return MemoryIndex(settings, index_path=tmp / f"{workspace.name}-{provider}.sqlite")

    started = time.perf_counter()
    run = run_suite(members, open_index, ks=ks, min_score=min_score)
    elapsed = time.perf_counter() - started
    report = run.report(ks, exclude_categories=("5",), min_score=min_score)
    return report["groups"], [result_line(o) for o in run.outcomes], elapsed


def _headline(agg: dict[str, Any]) -> list[str]:
    """Categories 1-4 then their aggregate (named ``overall``: category 5 is excluded)."""
    return [g for g in agg if g.split(":")[0] in {"1", "2", "3", "4"}] + ["overall"]


def _table(rows: dict[str, dict[str, Any]]) -> str:
    cols = _headline(next(iter(rows.values()))["agg"])
    names = [f"cat {c.split(':')[0]}" for c in cols[:-1]] + ["cat1-4"]
    head = f"{'configuration':36s} " + " ".join(f"{c:>7s}" for c in names) + \
        f" {'lines@6':>8s} {'mrr':>6s} {'time s':>7s}"
    out = ["recall@6 (%) by LoCoMo category; lines@6 and MRR over cat1-4", head, "-" * len(head)]
    for name, r in rows.items():
        agg = r["agg"]
        vals = " ".join(f"{100 * agg[c]['recall@6']:7.1f}" for c in cols)
        out.append(f"{name:36s} {vals} {agg['overall']['lines@6']:8.1f} "
                   f"{100 * agg['overall']['mrr']:6.1f} {r['time']:7.1f}")
    return "\n".join(out)


def _sweep(members: list[SuiteMember], index_dir: Path | None) -> str:
    """Recall against lines as the threshold moves: compares the two modes at equal budgets."""
    lines = ["\nthreshold sweep: cat1-4 recall@6 % / lines@6 (per-category recall@6 in brackets)"]
    with tempfile.TemporaryDirectory() as scratch:
        tmp = index_dir or Path(scratch)
        for threshold in (0.0, 0.25, 0.35, 0.42, 0.5):
            for name in ("keyword-only (none)", "local hybrid, default"):
                # ks as in the main table: the same search depth, so the figures agree.
                agg, _, _ = _run_config(CONFIGS[name], members, tmp, DEFAULT_KS, threshold)
                cats = " ".join(f"{100 * agg[c]['recall@6']:.1f}" for c in _headline(agg)[:-1])
                lines.append(f"min_score {threshold:4.2f}  {name:22s} "
                             f"{100 * agg['overall']['recall@6']:5.1f} / "
                             f"{agg['overall']['lines@6']:5.1f}  [{cats}]")
    return "\n".join(lines)


def main() -> None:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    dev = here.parent.parent / "shared/bench/locomo-dev"
    ap.add_argument("--data", type=Path, default=dev if dev.is_dir() else here.parent / "notebooks" / "data",
                    help="a suite folder (workspaces with queries.jsonl); default: the LoCoMo "
                         "dev set when present, else the shipped notebooks/data")
    ap.add_argument("--configs", default="all", help="names separated by ';', or all")
    ap.add_argument("--json", type=Path, help="write all figures here")
    ap.add_argument("--sweep", action="store_true", help="also print a min_score sweep")
    ap.add_argument("--index-dir", type=Path, default=None,
                    help="keep indexes here to reuse embeddings across runs (default: temporary)")
    ap.add_argument("--min-score", type=float, default=None,
                    help="override every configuration's threshold (default: its own default)")
    args = ap.parse_args()
    try:
        members = find_suite(args.data)
    except EvalInputError as exc:
        sys.exit(str(exc))
    # ";" separates names: several names contain a comma.
    chosen = CONFIGS if args.configs == "all" else {
        k: v for k, v in CONFIGS.items() if k in args.configs.split(";")}
    if not chosen:
        sys.exit(f"no configuration named {args.configs!r}; known: {'; '.join(CONFIGS)}")
    print(f"machine: {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}, data: {args.data}")
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.index_dir or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        for name, overrides in chosen.items():
            agg, results, elapsed = _run_config(overrides, members, tmp, DEFAULT_KS,
                                                args.min_score)
            rows[name] = {"agg": agg, "time": elapsed}
            scorer = args.data.parent / "score.py"
            if scorer.exists():
                out = Path(scratch) / "results.jsonl"
                out.write_text("".join(json.dumps(r) + "\n" for r in results))
                check = subprocess.run([sys.executable, str(scorer), "--data", str(args.data),
                                        "--results", str(out), "--ks", ",".join(map(str, DEFAULT_KS))],
                                       capture_output=True, text=True)
                line = next((x for x in check.stdout.splitlines() if x.startswith("cat1-4")), "")
                rows[name]["scorer_cat1_4"] = line
            print(f"done: {name} ({elapsed:.1f}s)", file=sys.stderr)
    print(_table(rows))
    for name, r in rows.items():
        if r.get("scorer_cat1_4"):
            print(f"score.py [{name}]: {r['scorer_cat1_4']}")
    if args.sweep:
        print(_sweep(members, args.index_dir))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
