"""Retrieval evaluation of ``memory_search`` on a queries file, for anyone's notes.

A queries file is JSONL: ``{"qid", "question", "category"?, "gold": [...]}`` where each gold
item is ``{"path", "line"}`` or ``{"path", "start_line", "end_line"}``. A hit covers a gold
line when the paths match and ``start_line <= line <= end_line``; a range counts as covered
when any of its lines is. Metrics follow the LoCoMo scorer in ``shared/bench/score.py``
(recall, any, all and lines at k) plus MRR, so the figures of both agree on the same hits.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .index import MemoryIndex

__all__ = ["EvalQuery", "evaluate", "format_table", "load_queries", "score_hits"]

Hit = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class EvalQuery:
    qid: str
    question: str
    category: str | None
    gold: tuple[tuple[str, int, int], ...]


def _gold_item(item: dict[str, Any]) -> tuple[str, int, int]:
    path = str(item["path"]).replace("\\", "/").removeprefix("./")
    if "line" in item:
        return path, int(item["line"]), int(item["line"])
    return path, int(item["start_line"]), int(item.get("end_line", item["start_line"]))


def load_queries(path: Path) -> list[EvalQuery]:
    """Read a JSONL queries file; a malformed line is an error naming its line number."""
    out: list[EvalQuery] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            gold = tuple(_gold_item(g) for g in raw["gold"])
            category = raw.get("category")
            out.append(EvalQuery(str(raw["qid"]), str(raw["question"]),
                                 None if category is None else str(category), gold))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}:{n}: not a valid query line ({exc})") from exc
    return out


def _covers(hit: Hit, gold: tuple[str, int, int]) -> bool:
    path, start, end = hit
    gpath, gstart, gend = gold
    same = path == gpath or path.endswith("/" + gpath)
    return same and start <= gend and gstart <= end


def score_hits(gold: Sequence[tuple[str, int, int]], hits: Sequence[Hit],
               ks: Sequence[int]) -> dict[str, float]:
    """Per-query metrics at each k, plus the reciprocal rank of the first useful hit."""
    out: dict[str, float] = {}
    for k in ks:
        top = hits[:k]
        covered = sum(1 for g in gold if any(_covers(h, g) for h in top))
        out[f"recall@{k}"] = covered / len(gold) if gold else 0.0
        out[f"any@{k}"] = 1.0 if covered else 0.0
        out[f"all@{k}"] = 1.0 if gold and covered == len(gold) else 0.0
        out[f"lines@{k}"] = float(sum(max(0, e - s + 1) for _, s, e in top))
    first = next((i for i, h in enumerate(hits, 1) if any(_covers(h, g) for g in gold)), None)
    out["mrr"] = 1.0 / first if first else 0.0
    return out


def _average(rows: Iterable[dict[str, float]]) -> dict[str, float]:
    rows = list(rows)
    keys = rows[0].keys() if rows else ()
    return {k: sum(r[k] for r in rows) / len(rows) for k in keys}


def evaluate(index: MemoryIndex, queries: Sequence[EvalQuery], *, ks: Sequence[int] = (1, 3, 6, 10),
             min_score: float | None = None, headline_exclude: Sequence[str] = ()) -> dict[str, Any]:
    """Run every query and aggregate per category, for all, and for a headline group.

    ``min_score`` None applies the index's configured threshold: the figures are what an
    agent calling ``memory_search`` would get.
    """
    per_query: dict[str, dict[str, float]] = {}
    results: list[dict[str, Any]] = []
    groups: OrderedDict[str, list[dict[str, float]]] = OrderedDict()
    for q in queries:
        response = index.search(q.question, max_results=max(ks), min_score=min_score)
        hits = [(h.path, h.start_line, h.end_line) for h in response.results]
        metrics = score_hits(q.gold, hits, ks)
        per_query[q.qid] = metrics
        results.append({"qid": q.qid, "hits": [
            {"path": p, "startLine": s, "endLine": e} for p, s, e in hits]})
        if q.category is not None:
            groups.setdefault(f"category {q.category}", []).append(metrics)
        if headline_exclude and q.category not in headline_exclude:
            groups.setdefault("headline", []).append(metrics)
        groups.setdefault("all", []).append(metrics)
    ordered = sorted((g for g in groups if g.startswith("category")), key=str) + [
        g for g in ("headline", "all") if g in groups]
    summary = {g: {"n": len(groups[g]), **_average(groups[g])} for g in ordered}
    return {"ks": list(ks), "groups": summary, "per_query": per_query, "results": results}


def format_table(report: dict[str, Any], metrics: Sequence[str] = ("recall", "any", "lines"),
                 ) -> str:
    """A fixed-width table: recall/any/all in %, lines as mean lines spanned, MRR in %."""
    cols = [f"{m}@{k}" for m in metrics for k in report["ks"]] + ["mrr"]
    head = f"{'group':14s} {'n':>5s} " + " ".join(f"{c:>9s}" for c in cols)
    lines = [head, "-" * len(head)]
    for name, g in report["groups"].items():
        vals = [f"{g[c]:9.1f}" if c.startswith("lines") else f"{100 * g[c]:9.1f}" for c in cols]
        lines.append(f"{name:14s} {g['n']:5d} " + " ".join(vals))
    return "\n".join(lines)
