"""Dates in every written form: does a question recall as well when its date is written
``10.01.2024`` as when it is written "10 January 2024"?

    python benchmarks/date_forms.py                       # LoCoMo dev, default settings

Every LoCoMo dev question (categories 1-4; read where it lies, never copied) that names a day
with its year in words ("on 7 May 2023") is asked again with that date rewritten in each form
the search reads: ISO, dotted (day first), slashed day first, slashed month first, year first,
Chinese, ISO week of the day. Reported: recall@6 per form, beside the words as written. The
slashed forms are read with ``search.date_order`` "dmy" and "mdy" respectively (what a user of
each locale sets, or gets from "auto").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.evaluation.metrics import EvalQuery, load_queries, score_hits  # noqa: E402
from openclaw_memory.language.dateforms import DAY_MONTH, MONTH_DAY, absolute_spans  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "bench" / "locomo-dev"
FORMS: dict[str, tuple[Callable[[date], str], dict[str, Any]]] = {
    "words (as asked)": (lambda d: "", {}),
    "2023-05-07": (lambda d: d.isoformat(), {}),
    "07.05.2023": (lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}", {}),
    "07/05/2023 (dmy)": (lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",
                         {"search": {"date_order": "dmy"}}),
    "05/07/2023 (mdy)": (lambda d: f"{d.month:02d}/{d.day:02d}/{d.year}",
                         {"search": {"date_order": "mdy"}}),
    "2023/05/07": (lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}", {}),
    "2023年5月7日": (lambda d: f"{d.year}年{d.month}月{d.day}日", {}),
}


def dated_questions(conversation: Path) -> list[tuple[EvalQuery, str, date]]:
    """(question, the date words, the day) of each question naming one day with its year."""
    out = []
    for q in load_queries(conversation / "queries.jsonl"):
        if q.category in (None, "5", 5):
            continue
        matches = [m for p in (DAY_MONTH, MONTH_DAY) for m in p.finditer(q.question)
                   if m.group(3)]
        if len(matches) != 1:
            continue
        spans = absolute_spans(matches[0].group(0), date(2100, 1, 1))
        if len(spans) == 1 and spans[0] is not None and spans[0][0] == spans[0][1]:
            out.append((q, matches[0].group(0), spans[0][0]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument("--index-dir", type=Path, default=None)
    args = parser.parse_args()
    if not args.locomo.is_dir():
        sys.exit(f"no LoCoMo dev set at {args.locomo}: pass --locomo DIR")
    print(machine_report())
    recalls: dict[str, list[float]] = {name: [] for name in FORMS}
    with tempfile.TemporaryDirectory() as tmp:
        index_dir = args.index_dir or Path(tmp)
        index_dir.mkdir(parents=True, exist_ok=True)
        for conversation in sorted(p for p in args.locomo.iterdir() if (p / "memory").is_dir()):
            asked = dated_questions(conversation)
            for name, (render, overrides) in FORMS.items():
                with MemoryIndex.open(conversation,
                                      index_path=index_dir / f"{conversation.name}.sqlite",
                                      **overrides) as memory:
                    memory.sync()
                    for q, words, day in asked:
                        text = q.question.replace(words, render(day)) if render(day) else q.question
                        hits = [(h.path, h.start_line, h.end_line)
                                for h in memory.search(text, max_results=6).results]
                        recalls[name].append(score_hits(q.gold, hits, (6,))["recall@6"])
    count = len(recalls["words (as asked)"])
    print(f"{count} LoCoMo dev questions naming one day in words")
    print(f"{'the date written as':22} {'recall@6':>8}")
    for name, values in recalls.items():
        print(f"{name:22} {100.0 * sum(values) / max(1, len(values)):8.1f}")
    print(machine_report())


if __name__ == "__main__":
    main()
