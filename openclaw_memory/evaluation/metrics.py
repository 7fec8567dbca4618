"""Retrieval evaluation of ``memory_search`` on a queries file, for anyone's notes.

A queries file is JSONL: ``{"qid", "question", "category"?, "category_name"?, "gold": [...]}``
where each gold item is ``{"path", "line"}`` or ``{"path", "start_line", "end_line"}``. A hit
covers a gold line when the paths match and ``startLine <= line <= endLine``; a range counts as
covered when any of its lines is. Metrics follow the LoCoMo scorer ``shared/bench/score.py``
(recall, any, all and lines at k, averaged per query), plus MRR, so both print the same figures
for the same hits. Queries without gold cannot be scored: they are counted, not averaged.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_memory.errors import EvalInputError
from openclaw_memory.memory_base import Memory

__all__ = [
    "DEFAULT_KS",
    "EvalQuery",
    "QueryOutcome",
    "evaluate",
    "format_table",
    "gold_path_problems",
    "load_queries",
    "normalize_path",
    "result_line",
    "run_queries",
    "score_hits",
    "summarize",
]

# The largest k is the search depth (max_results), and 6 is memory_search's default:
# by default recall@6 is what an agent asking for its usual 6 results gets.
DEFAULT_KS: tuple[int, ...] = (1, 3, 6)
Span = tuple[str, int, int]  # path, first line, last line (1-based, inclusive)


@dataclass(frozen=True, slots=True)
class EvalQuery:
    qid: str
    question: str
    category: str | None
    gold: tuple[Span, ...]
    category_name: str | None = None
    source: str = ""  # "file:line", for messages about this query


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """One query's ranked hits and, when it has gold, its metrics."""

    query: EvalQuery
    hits: tuple[Span, ...]
    scores: tuple[float, ...]
    metrics: dict[str, float] | None
    mode: str = ""


def normalize_path(path: str) -> str:
    """Separators to ``/`` and leading ``./`` removed, as the LoCoMo scorer does."""
    out = str(path).replace("\\", "/")
    while out.startswith("./"):
        out = out[2:]
    return out


def _line(value: Any, what: str) -> int:
    # bool is an int in Python; a gold line of `true` is a mistake, not line 1.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be a positive integer, got {value!r}")
    return value


def _gold_item(item: Any) -> Span:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str) or not item["path"]:
        raise ValueError(f"gold item needs a non-empty 'path': {item!r}")
    path = normalize_path(item["path"])
    if "line" in item:
        line = _line(item["line"], "line")
        return path, line, line
    if "start_line" not in item:
        raise ValueError(f"gold item needs 'line' or 'start_line'/'end_line': {item!r}")
    start = _line(item["start_line"], "start_line")
    end = _line(item.get("end_line", start), "end_line")
    if end < start:
        raise ValueError(f"end_line {end} is before start_line {start}")
    return path, start, end


def _parse_query(raw: Any, source: str) -> EvalQuery:
    if not isinstance(raw, dict):
        raise ValueError("expected a JSON object")
    qid, question = raw.get("qid"), raw.get("question")
    if qid is None or isinstance(qid, (dict, list)) or str(qid) == "":
        raise ValueError("missing 'qid'")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("missing or empty 'question'")
    gold = raw.get("gold", [])
    if not isinstance(gold, list):
        raise ValueError("'gold' must be a list")
    category, name = raw.get("category"), raw.get("category_name")
    return EvalQuery(str(qid), question, None if category is None else str(category),
                     tuple(_gold_item(g) for g in gold), None if name is None else str(name),
                     source)


def load_queries(path: Path) -> list[EvalQuery]:
    """Read a JSONL queries file; any problem is an error naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalInputError(f"cannot read queries file {path}: {exc}") from exc
    out: list[EvalQuery] = []
    seen: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        source = f"{path}:{n}"
        try:
            query = _parse_query(json.loads(line), source)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise EvalInputError(f"{source}: not a valid query line ({exc})") from exc
        if query.qid in seen:
            raise EvalInputError(f"{source}: duplicate qid {query.qid!r} (first at {seen[query.qid]})")
        seen[query.qid] = source
        out.append(query)
    if not out:
        raise EvalInputError(f"queries file {path} holds no queries")
    return out


def _covers(hit: Span, gold: Span) -> bool:
    path, start, end = hit
    gpath, gstart, gend = gold
    # An absolute hit path matches when it ends with the gold path (score.py's rule).
    same = path == gpath or path.endswith("/" + gpath)
    return same and start <= gend and gstart <= end


def score_hits(gold: Sequence[Span], hits: Sequence[Span], ks: Sequence[int]) -> dict[str, float]:
    """Per-query metrics at each k, plus the reciprocal rank of the first covering hit.

    Every gold item counts once (a repeated gold line counts twice, as in score.py); a
    repeated hit adds its lines again to ``lines@k``. Paths on both sides are normalised.
    """
    gold = [(normalize_path(p), s, e) for p, s, e in gold]
    hits = [(normalize_path(p), s, e) for p, s, e in hits]
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


def run_queries(index: Memory, queries: Sequence[EvalQuery], *,
                ks: Sequence[int] = DEFAULT_KS, min_score: float | None = None,
                low_confidence: bool = False) -> list[QueryOutcome]:
    """Ask ``memory_search`` every question for max(ks) hits and score the ranking.

    ``min_score`` None applies the index's configured threshold: the figures are what an
    agent calling ``memory_search`` with ``max_results=max(ks)`` would get. One ranked list
    per query (recall@k reads its first k hits), so score.py agrees on ``--results-out``; in
    hybrid mode scores are calibrated over a candidate pool that grows with ``max_results``,
    so recall@6 at depth 10 can differ slightly from recall@6 at depth 6.

    ``low_confidence``: where the relevance gate left no hit, score the low-confidence ones
    instead (what the memory_search tool shows the model under "no relevant memory").
    """
    out: list[QueryOutcome] = []
    for q in queries:
        response = index.search(q.question, max_results=max(ks), min_score=min_score)
        found = response.results or (response.low_confidence_results if low_confidence else ())
        hits = tuple((h.path, h.start_line, h.end_line) for h in found)
        metrics = score_hits(q.gold, hits, ks) if q.gold else None
        out.append(QueryOutcome(q, hits, tuple(h.score for h in found), metrics,
                                response.mode))
    return out


def _category_label(q: EvalQuery) -> str:
    assert q.category is not None
    return f"{q.category}:{q.category_name}" if q.category_name else q.category


def _category_order(label: str) -> tuple[int, int | str]:
    head = label.split(":", 1)[0]
    return (0, int(head)) if head.isdigit() else (1, label)


def _mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    # Summed in query order and divided once, exactly as score.py does: equal floats.
    sums: dict[str, float] = {}
    for row in rows:
        for key, value in row.items():
            sums[key] = sums.get(key, 0.0) + value
    return {key: value / len(rows) for key, value in sums.items()}


def summarize(outcomes: Iterable[QueryOutcome], *, ks: Sequence[int] = DEFAULT_KS,
              exclude_categories: Sequence[str] = ()) -> dict[str, Any]:
    """Average per category, over ``overall`` (all but the excluded categories) and ``all``.

    ``overall`` is present only when categories are excluded (LoCoMo leaves out category 5,
    adversarial questions, and calls the rest ``cat1-4``).
    """
    groups: dict[str, list[dict[str, float]]] = {}
    outcomes = list(outcomes)
    excluded = {str(c) for c in exclude_categories}
    no_gold = [o.query.qid for o in outcomes if o.metrics is None]
    for o in outcomes:
        if o.metrics is None:
            continue
        if o.query.category is not None:
            groups.setdefault(_category_label(o.query), []).append(o.metrics)
        if excluded and o.query.category not in excluded:
            groups.setdefault("overall", []).append(o.metrics)
        groups.setdefault("all", []).append(o.metrics)
    names = sorted((g for g in groups if g not in ("overall", "all")), key=_category_order)
    names += [g for g in ("overall", "all") if g in groups]
    modes = dict(Counter(o.mode for o in outcomes if o.mode).most_common())
    return {"ks": list(ks), "queries": len(outcomes), "scored": len(outcomes) - len(no_gold),
            "no_gold": no_gold, "exclude_categories": sorted(excluded), "modes": modes,
            "groups": {g: {"n": len(groups[g]), **_mean(groups[g])} for g in names}}


def evaluate(index: Memory, queries: Sequence[EvalQuery], *,
             ks: Sequence[int] = DEFAULT_KS, min_score: float | None = None,
             exclude_categories: Sequence[str] = ()) -> dict[str, Any]:
    """Run and summarise one workspace's queries; ``results`` holds score.py's input lines."""
    outcomes = run_queries(index, queries, ks=ks, min_score=min_score)
    report = summarize(outcomes, ks=ks, exclude_categories=exclude_categories)
    report["results"] = [result_line(o) for o in outcomes]
    return report


def result_line(outcome: QueryOutcome) -> dict[str, Any]:
    """One line of ``--results-out``: the shape ``shared/bench/score.py`` reads, plus extras."""
    hits = [{"path": p, "startLine": s, "endLine": e, "score": round(score, 6)}
            for (p, s, e), score in zip(outcome.hits, outcome.scores, strict=True)]
    return {"qid": outcome.query.qid, "hits": hits, "category": outcome.query.category,
            "metrics": outcome.metrics}


def gold_path_problems(index: Memory, queries: Sequence[EvalQuery],
                       folder: Path | None = None) -> list[str]:
    """One warning per gold path that no search can ever return (missing or not indexed);
    ``folder``: where the workspace's files are (default: the settings' workspace)."""
    indexed = index.indexed_paths()
    first_use: dict[str, tuple[str, int]] = {}
    for q in queries:
        for path, _, _ in q.gold:
            source, count = first_use.get(path, (q.source, 0))
            first_use[path] = (source, count + 1)
    warnings = []
    for path, (source, count) in first_use.items():
        if path in indexed:
            continue
        exists = ((folder or index.settings.workspace) / path).is_file()
        why = "is not indexed (outside MEMORY.md, memory/ and extra_paths?)" if exists else \
            "does not exist in the workspace"
        warnings.append(f"{source}: gold path {path} {why}; its {count} gold "
                        f"item(s) count as misses")
    return warnings


def _fmt(value: float, metric: str) -> str:
    return f"{value:6.1f}" if metric == "lines" else f"{100 * value:6.1f}"


def format_table(report: dict[str, Any], metrics: Sequence[str] = ("recall", "any", "lines"),
                 ) -> str:
    """Groups as rows; recall/any/all and MRR in %, lines as mean lines spanned by top k."""
    ks = report["ks"]
    width = 6 * len(ks) + len(ks) - 1
    unit = {"lines": "lines", "recall": "recall %", "any": "any %", "all": "all %"}
    top = f"{'':16s} {'':>5s}  " + "  ".join(f"{unit[m]:^{width}s}" for m in metrics) + "   mrr %"
    head = f"{'group':16s} {'n':>5s}  " + "  ".join(
        " ".join(f"{'@' + str(k):>6s}" for k in ks) for _ in metrics) + f"  {'@' + str(max(ks)):>6s}"
    lines = [top, head, "-" * len(head)]
    for name, g in report["groups"].items():
        cells = "  ".join(" ".join(_fmt(g[f"{m}@{k}"], m) for k in ks) for m in metrics)
        lines.append(f"{name[:16]:16s} {g['n']:5d}  {cells}  {100 * g['mrr']:6.1f}")
    return "\n".join(lines)
