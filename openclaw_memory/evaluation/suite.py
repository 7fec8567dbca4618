"""Evaluate several workspaces as one set: each with its own index and queries file.

A benchmark such as LoCoMo is one workspace per conversation; its figures are averages over
every query of every workspace (not averages of per-workspace averages), which is what
``shared/bench/score.py`` computes when given the whole folder. ``openclaw-memory eval`` on a
single workspace is a suite of one, so both go through the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_memory.errors import EvalInputError
from openclaw_memory.evaluation.metrics import (
    DEFAULT_KS,
    EvalQuery,
    QueryOutcome,
    gold_path_problems,
    load_queries,
    run_queries,
    summarize,
)
from openclaw_memory.index import MemoryIndex
from openclaw_memory.indexing.sync import Progress
from openclaw_memory.memory_base import Memory

__all__ = ["QUERIES_FILE", "SuiteMember", "SuiteRun", "find_suite", "run_suite"]

QUERIES_FILE = "queries.jsonl"
OpenIndex = Callable[[Path], Memory]


@dataclass(frozen=True, slots=True)
class SuiteMember:
    workspace: Path
    queries: Path


@dataclass(slots=True)
class SuiteRun:
    outcomes: list[QueryOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    workspaces: list[str] = field(default_factory=list)

    def report(self, ks: Sequence[int], exclude_categories: Sequence[str] = (),
               min_score: float | None = None) -> dict[str, Any]:
        out = summarize(self.outcomes, ks=ks, exclude_categories=exclude_categories)
        return {**out, "min_score": min_score, "workspaces": self.workspaces,
                "warnings": self.warnings}


def find_suite(root: Path) -> list[SuiteMember]:
    """Every folder under ``root`` (itself included) holding a ``queries.jsonl``, sorted.

    Sorted paths give the order of score.py's sorted walk, so per-query sums agree.
    """
    if not root.is_dir():
        raise EvalInputError(f"suite folder {root} is not a directory")
    folders = sorted({p.parent for p in root.rglob(QUERIES_FILE) if p.is_file()})
    if not folders:
        raise EvalInputError(f"no {QUERIES_FILE} found under {root}")
    return [SuiteMember(f, f / QUERIES_FILE) for f in folders]


def _load_all(members: Sequence[SuiteMember]) -> list[list[EvalQuery]]:
    """Read every queries file before any indexing, so a bad line fails fast."""
    loaded = [load_queries(m.queries) for m in members]
    seen: dict[str, str] = {}
    for queries in loaded:
        for q in queries:
            if q.qid in seen:
                raise EvalInputError(f"{q.source}: duplicate qid {q.qid!r} (first at {seen[q.qid]});"
                                     " qids must be unique across the suite")
            seen[q.qid] = q.source
    return loaded


def run_suite(members: Sequence[SuiteMember], open_index: OpenIndex, *,
              ks: Sequence[int] = DEFAULT_KS, min_score: float | None = None,
              progress: Callable[[Path], Progress | None] | None = None,
              low_confidence: bool = False) -> SuiteRun:
    """Sync each workspace's index, then ask its questions; outcomes in suite order."""
    if not ks or any(k < 1 for k in ks):
        raise EvalInputError(f"k values must be positive integers, got {list(ks)}")
    run = SuiteRun()
    for member, queries in zip(members, _load_all(members), strict=True):
        with open_index(member.workspace) as memory:
            if isinstance(memory, MemoryIndex):
                memory.sync(progress=progress(member.workspace) if progress else None)
            else:
                memory.sync()  # a database workspace: loaded from the folder by its opener
            run.warnings.extend(gold_path_problems(memory, queries, member.workspace))
            run.outcomes.extend(run_queries(memory, queries, ks=ks, min_score=min_score,
                                            low_confidence=low_confidence))
        run.workspaces.append(str(Path(member.workspace).absolute()))
    return run
