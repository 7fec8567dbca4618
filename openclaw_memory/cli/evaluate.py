"""``openclaw-memory eval``: retrieval figures of ``memory_search`` on your own notes.

Kept out of ``cli.py`` so the command's options, output and file writing live in one place;
``cli.py`` only registers the parser and dispatches here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openclaw_memory.errors import EvalInputError
from openclaw_memory.evaluation.metrics import DEFAULT_KS, format_table, result_line
from openclaw_memory.evaluation.suite import QUERIES_FILE, SuiteMember, find_suite, run_suite
from openclaw_memory.index import MemoryIndex
from openclaw_memory.indexing.sync import Progress
from openclaw_memory.memory_base import Memory
from openclaw_memory.settings_sources import load_settings
from openclaw_memory.store.claims import embedding_key
from openclaw_memory.store.paths import default_index_path

__all__ = ["add_eval_parser", "run_eval"]

EPILOG = f"""\
queries file: JSONL, one query a line:
  {{"qid": "q1", "question": "...", "category": 1, "gold": [{{"path": "memory/2026-01-02.md", "line": 7}}]}}
  gold items are {{"path", "line"}} or {{"path", "start_line", "end_line"}}; category is optional.
--suite DIR scores every folder under DIR that holds a {QUERIES_FILE} (the folder is the
workspace) as one set, e.g. eval --suite notebooks/data (the team notes shipped in a clone of the repository)
"""


def _ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None
    if not ks or ks[0] < 1:
        raise argparse.ArgumentTypeError(f"k values must be positive: {text!r}")
    return ks


def add_eval_parser(sub: Any) -> None:
    """Register ``eval`` on the ``openclaw-memory`` subparsers."""
    e = sub.add_parser("eval", help="score memory_search on a queries file (recall@k, MRR, lines@k)",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    where = e.add_mutually_exclusive_group(required=True)
    where.add_argument("queries", nargs="?", type=Path, help="JSONL queries file, scored on --workspace")
    where.add_argument("--suite", type=Path, metavar="DIR",
                       help=f"score every workspace under DIR holding {QUERIES_FILE}, together")
    k = e.add_mutually_exclusive_group()
    k.add_argument("-k", dest="ks", type=_ks, metavar="N",
                   help="a single cut-off k (search asks for k hits)")
    k.add_argument("--ks", dest="ks", type=_ks, metavar="K,K,...",
                   help=f"cut-offs (default {','.join(map(str, DEFAULT_KS))}); the largest is the "
                        "search's max_results")
    e.add_argument("--min-score", type=float, default=None, metavar="X",
                   help="search threshold (default: the index's own, as an agent gets it)")
    e.add_argument("--low-confidence", action="store_true",
                   help="where nothing passed the relevance gate, score the low-confidence hits "
                        "(what memory_search shows the model under 'no relevant memory')")
    e.add_argument("--exclude-category", action="append", default=[], metavar="CAT",
                   help="leave a category out of the 'overall' row (repeatable or comma-separated;"
                        " LoCoMo: 5)")
    e.add_argument("--index-dir", type=Path, default=None, metavar="DIR",
                   help="keep one index per workspace in DIR (default: the state directory)")
    e.add_argument("--json", action="store_true", help="print the summary as JSON")
    e.add_argument("--results-out", type=Path, default=None, metavar="FILE",
                   help="write each query's ranked hits as JSONL (the input of score.py)")


def _members(args: argparse.Namespace, workspace: Callable[[], Path]) -> list[SuiteMember]:
    if args.suite is not None:
        if args.index is not None:
            raise EvalInputError("--index names one index file; with --suite use eval --index-dir")
        return find_suite(args.suite)
    if not args.queries.is_file():
        raise EvalInputError(f"queries file {args.queries} does not exist")
    return [SuiteMember(workspace(), args.queries)]


def _opener(args: argparse.Namespace) -> Callable[[Path], Memory]:
    if args.index is not None and args.index_dir is not None:
        raise EvalInputError("give --index or --index-dir, not both")
    overrides: dict[str, Any] = {"embedding": {"provider": args.provider}} if args.provider else {}
    if (getattr(args, "backend", None) or os.environ.get("OPENCLAW_MEMORY_STORE__BACKEND", "")
            ).strip() == "postgres":
        return _database_opener(args, overrides)

    def open_index(workspace: Path) -> MemoryIndex:
        if not workspace.is_dir():
            raise EvalInputError(f"workspace {workspace} is not a directory")
        settings, origin = load_settings(workspace, overrides=overrides)
        path = args.index
        if args.index_dir is not None:
            # Same name as the default state file: unique per workspace, reused across runs.
            path = args.index_dir / default_index_path(
                workspace, embedding_key=embedding_key(settings, None)).name
            args.index_dir.mkdir(parents=True, exist_ok=True)
        return MemoryIndex(settings, index_path=path, origin=origin)
    return open_index


def _database_opener(args: argparse.Namespace,
                     overrides: dict[str, Any]) -> Callable[[Path], Memory]:
    """Each suite folder published into a database workspace of its own (``eval:<folder>:
    <hash of its path>``, mirrored: a rerun loads only what changed), then asked."""
    from openclaw_memory.postgres import PostgresMemory

    dsn: str | None = getattr(args, "dsn", None)

    def open_index(workspace: Path) -> Memory:
        if not workspace.is_dir():
            raise EvalInputError(f"workspace {workspace} is not a directory")
        where = str(workspace.resolve())
        name = f"eval:{workspace.name[:120]}:{hashlib.sha1(where.encode()).hexdigest()[:10]}"
        memory = PostgresMemory.open(dsn, workspace=name, **overrides)
        try:
            memory.publish(workspace, mirror=True)
        except BaseException:
            memory.close()
            raise
        return memory
    return open_index


def _write_results(path: Path, lines: list[dict[str, Any]]) -> None:
    try:
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
                        encoding="utf-8")
    except OSError as exc:
        raise EvalInputError(f"cannot write results file {path}: {exc}") from exc


def _header(report: dict[str, Any]) -> str:
    modes = ", ".join(f"{m} ({n})" if len(report["modes"]) > 1 else m
                      for m, n in report["modes"].items())
    threshold = "index default" if report["min_score"] is None else f"{report['min_score']:g}"
    where = report["workspaces"][0] if len(report["workspaces"]) == 1 else \
        f"{len(report['workspaces'])} workspaces"
    return (f"{report['scored']} of {report['queries']} queries scored over {where}; "
            f"search mode: {modes or 'none'}; max_results: {max(report['ks'])}; "
            f"min_score: {threshold}"
            + ("; low-confidence hits counted where none passed the gate"
               if report.get("low_confidence") else ""))


def _footer(report: dict[str, Any]) -> str:
    notes = [f"recall/any/mrr in %, lines = mean lines spanned by the top k hits; "
             f"mrr over the top {max(report['ks'])}"]
    if report["exclude_categories"]:
        notes.append("overall = all but categor" + ("y " if len(report["exclude_categories"]) == 1
                     else "ies ") + ", ".join(report["exclude_categories"]))
    return "\n".join(notes)


def _warn(message: str) -> None:
    print(f"openclaw-memory: warning: {message}", file=sys.stderr)


def run_eval(args: argparse.Namespace, workspace: Callable[[], Path],
             progress: Callable[[], Progress]) -> None:
    """Sync, search every question, print the table (or JSON), write ``--results-out``."""
    ks = args.ks or DEFAULT_KS
    exclude = [c.strip() for item in args.exclude_category for c in item.split(",") if c.strip()]
    members = _members(args, workspace)
    run = run_suite(members, _opener(args), ks=ks, min_score=args.min_score,
                    progress=lambda _ws: progress(), low_confidence=args.low_confidence)
    report = run.report(ks, exclude, args.min_score)
    if args.low_confidence:
        report["low_confidence"] = True
    for warning in run.warnings:
        _warn(warning)
    if report["no_gold"]:
        shown = ", ".join(report["no_gold"][:5]) + (", ..." if len(report["no_gold"]) > 5 else "")
        _warn(f"{len(report['no_gold'])} queries have no gold and are not scored: {shown}")
    if args.results_out is not None:
        _write_results(args.results_out, [result_line(o) for o in run.outcomes])
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return
    if not report["scored"]:
        print(_header(report))
        return
    print(_header(report))
    print(format_table(report))
    print(_footer(report))
