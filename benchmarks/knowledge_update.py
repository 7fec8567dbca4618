"""Knowledge updates: does search put the current value of a changed fact first?

    python benchmarks/knowledge_update.py                  # default settings, local model
    python benchmarks/knowledge_update.py --configs default,score-order --families c --seed 11

A workspace generated from templates, in English and Chinese: people and projects whose facts
change one to three times, per template family (``_knowledge_templates.py``), each in other
wordings: ``a`` home, employer, car, diet, a project's deadline and database (the ranking was
built on it); ``b`` home, manager, job title, phone, a project's version and a reversed
decision (checked on); ``c`` home, employer, partner, pet, a project's owning team and hosting
(written blind, read and tuned on a round later); ``d`` home, car, sport, studies, a
project's language and launch date (blind until its first run, then read); ``e``
doctor, bank, coffee, commute, a project's CI and budget (chose between three variants of the
ranking); ``f`` gym, language learnt, team, weekends, a project's meeting day and
email provider (never read: the figure to trust). The first value is a curated fact in ``MEMORY.md``
(dated as the library writes it, ``(as of ...)``, or undated as a person writes it: every
other subject); each change is a
line of a dated daily log, worded by one of several templates ("moved to", "now lives in",
"relocated to"...), among distractor lines about other people and unrelated days; some values
are restated later in other words; some facts never change. Questions ask the current value
("Where does Ada Park live now?"), the history ("Where did Ada Park live before Berlin?") and
unchanged facts. Reported per configuration:

* current-value recall@1 and @6 (a hit's cited lines hold the current value), and
  ``no-now@1``: recall@1 of the same question without "now" ("Where does Ada Park live?");
* stale above current: among current-value questions whose six hits hold both the current
  value and an earlier one, the share where an earlier one ranks higher;
* history recall@6 (the value before the current one is among the six hits);
* unchanged-fact recall@1;
* ``consolidated``: the same questions after a weekly consolidation (``MemoryConsolidation``,
  seven days of logs a run, replayed over the set's months) with a scripted chat model
  (``_scripted_consolidator.py``: it follows the prompt by the set's templates), and what
  consolidation left: stale statements in ``MEMORY.md``, replaced lines missing from the
  history, and what a second run over the final files changed.

Everything is generated (seeded), so the set is the same on every machine; nothing is read from
the development sets.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from math import nan
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report  # noqa: E402
from _knowledge_templates import FAMILIES  # noqa: E402
from _scripted_consolidator import ScriptedConsolidator, Templates  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.langgraph import MemoryConsolidation  # noqa: E402

START = date(2025, 1, 6)

EN_NAMES = ["Ada Park", "Bruno Silva", "Chloe Martin", "Dev Patel", "Elena Rossi", "Farid Khan",
            "Grace Liu", "Hugo Weber", "Iris Novak", "Jonas Berg", "Kira Sato", "Leo Dubois",
            "Maya Cohen", "Nils Olsen", "Omar Haddad", "Paula Costa", "Quinn Murphy",
            "Rosa Alvarez", "Sven Larsen", "Tara Singh", "Uma Reddy", "Victor Hugo Lima",
            "Wen Zhao", "Xavier Ruiz", "Yara Nasser", "Zoe Fischer"]
ZH_NAMES = ["王芳", "李强", "张伟", "刘洋", "陈静", "杨磊", "赵敏", "黄涛", "周婷", "吴昊",
            "孙丽", "马超", "朱琳", "胡军", "郭雪", "何静", "高飞", "林峰", "罗佳"]
EN_PROJECTS = ["Kestrel", "Heron", "Osprey", "Falcon", "Condor", "Merlin", "Puffin", "Gannet",
               "Plover", "Avocet"]
ZH_PROJECTS = ["北极星", "长江", "青松", "白鹭", "黄河", "泰山"]

DISTRACTORS_EN = ["Had lunch with the design team.", "The printer on floor 3 is broken again.",
                  "Reviewed the quarterly budget.", "Booked a dentist appointment.",
                  "Read an article about birds.", "The weather was rainy all day."]
DISTRACTORS_ZH = ["和设计团队一起吃了午饭。", "三楼的打印机又坏了。", "看了季度预算。",
                  "预约了牙医。", "读了一篇关于鸟类的文章。", "今天一整天都在下雨。"]


@dataclass
class Fact:
    subject: str
    values: list[str]
    first: str
    changes: list[str]
    current_q: str
    history_q: str
    restate: str
    dates: list[date] = field(default_factory=list)


@dataclass
class Question:
    text: str
    kind: str  # current | history | unchanged
    answer: str
    stale: list[str]
    subject: str = ""  # a hit answers only with a line naming both the subject and the value

    @property
    def plain(self) -> str:
        """The question without its "now" ("Where does Ada Park live?")."""
        return " ".join(_NOW_WORD.sub("", self.text).split()).replace(" ?", "?")


_NOW_WORD = re.compile(r"\s*\bnow\b|现在|目前|如今")


def _facts(rng: random.Random, family: str) -> list[Fact]:
    en, en_project, zh, zh_project = FAMILIES[family]
    facts = []
    people = [(n, en) for n in EN_NAMES] + [(n, zh) for n in ZH_NAMES]
    projects = [(n, en_project) for n in EN_PROJECTS] + [(n, zh_project) for n in ZH_PROJECTS]
    for subject, table in people + projects:
        for values, first, changes, current_q, history_q, restate in table.values():
            picked = rng.sample(values, k=min(len(values), rng.choice([1, 2, 2, 3, 4])))
            facts.append(Fact(subject, picked, first, changes, current_q, history_q, restate))
    return facts


def build(root: Path, seed: int = 7, family: str = "a") -> list[Question]:
    """Write the workspace under ``root``; the questions about it."""
    return build_facts(root, seed, family)[0]


def build_facts(root: Path, seed: int = 7, family: str = "a") -> tuple[list[Question], list[Fact]]:
    rng = random.Random(seed)
    facts = _facts(rng, family)
    days: dict[date, list[str]] = {}
    curated: list[str] = []
    for n, fact in enumerate(facts):
        first = fact.first.format(s=fact.subject, v=fact.values[0])
        fact.dates = [START + timedelta(days=rng.randint(0, 30))]
        curated.append(f"- {first}" + (f" (as of {fact.dates[0].isoformat()})" if n % 2 else ""))
        for value in fact.values[1:]:
            day = fact.dates[-1] + timedelta(days=rng.randint(10, 60))
            fact.dates.append(day)
            days.setdefault(day, []).append(
                "- " + rng.choice(fact.changes).format(s=fact.subject, v=value))
        if len(fact.values) > 1 and rng.random() < 0.4:  # the current value restated later
            day = fact.dates[-1] + timedelta(days=rng.randint(3, 30))
            days.setdefault(day, []).append(
                "- " + fact.restate.format(s=fact.subject, v=fact.values[-1]))
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Facts\n\n" + "\n".join(curated) + "\n", encoding="utf-8")
    for day, lines in days.items():
        pool = DISTRACTORS_ZH if any("\u4e00" <= ch <= "\u9fff" for ch in "".join(lines)) else (
            DISTRACTORS_EN)
        body = lines + rng.sample(pool, k=3)
        rng.shuffle(body)
        body = [line if line.startswith("- ") else f"- {line}" for line in body]
        (root / "memory" / f"{day.isoformat()}.md").write_text("\n".join(body) + "\n",
                                                              encoding="utf-8")
    questions = []
    for fact in facts:
        current, earlier = fact.values[-1], fact.values[:-1]
        if earlier:
            questions.append(Question(fact.current_q.format(s=fact.subject), "current", current,
                                      earlier, fact.subject))
            questions.append(Question(fact.history_q.format(s=fact.subject, v=current),
                                      "history", earlier[-1], [], fact.subject))
        else:
            questions.append(Question(fact.current_q.format(s=fact.subject), "unchanged",
                                      current, [], fact.subject))
    return questions, facts


def consolidate(ws: Path, index: Path, facts: list[Fact], family: str) -> dict[str, float]:
    """Replay a weekly consolidation over the set's months; what it left behind."""
    model = ScriptedConsolidator(templates=Templates(list(FAMILIES[family])))
    last = max(day for fact in facts for day in fact.dates) + timedelta(days=7)
    applied = 0
    with MemoryIndex.open(ws, index_path=index) as memory:
        memory.sync()
        day = START
        while day <= last:
            moment = datetime(day.year, day.month, day.day, 23, tzinfo=UTC)
            weekly = MemoryConsolidation(memory, model, days=7, max_input_tokens=20_000,
                                         clock=lambda m=moment: m)
            while True:  # as a scheduled job does: again while edits are left over the limit
                run = weekly.run()
                applied += len(run.applied)
                if not run.over_limit or not run.applied:
                    break
            day += timedelta(days=7)
        again = MemoryConsolidation(memory, model, days=3650, max_input_tokens=200_000,
                                    clock=lambda: datetime(last.year, last.month, last.day,
                                                           23, tzinfo=UTC)).run()
    curated = (ws / "MEMORY.md").read_text(encoding="utf-8")
    history = "".join(p.read_text(encoding="utf-8") for p in (ws / "memory-history").glob("*.md"))
    stale = lost = changed = 0
    for fact in facts:
        if len(fact.values) < 2:
            continue
        changed += 1
        stale += any(f"{fact.first.format(s=fact.subject, v=v)} " in curated + " " or
                     f"- {fact.first.format(s=fact.subject, v=v)}\n" in curated
                     for v in fact.values[:-1])
        lost += f"> - {fact.first.format(s=fact.subject, v=fact.values[0])}" not in history
    return {"edits": float(applied), "changed_facts": float(changed), "stale_left": float(stale),
            "lost": float(lost), "second_run_edits": float(len(again.applied) + len(again.skipped))}


CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "score-order": {"search": {"newer_first": False}},
    "keyword-only": {"embedding": {"provider": "none"}},
}


def _rank_of(hits: list[Any], value: str, subject: str = "") -> int | None:
    """The rank of the first hit with a line naming ``value`` (and ``subject``: another
    person's line with the same value answers nothing)."""
    for rank, hit in enumerate(hits, 1):
        if any(value in line and subject in line for line in hit.snippet.split("\n")):
            return rank
    return None


def evaluate(ws: Path, index: Path, questions: list[Question],
             overrides: dict[str, Any]) -> dict[str, float]:
    current1 = current6 = stale_pairs = stale_above = history6 = unchanged1 = plain1 = 0
    n_current = n_history = n_unchanged = 0
    times = []
    with MemoryIndex.open(ws, index_path=index, **overrides) as memory:
        memory.sync()
        for q in questions:
            started = time.perf_counter()
            hits = list(memory.search(q.text).results)
            times.append((time.perf_counter() - started) * 1000)
            rank = _rank_of(hits, q.answer, q.subject)
            if q.kind == "current":
                n_current += 1
                current1 += rank == 1
                current6 += rank is not None
                stale = [r for v in q.stale if (r := _rank_of(hits, v, q.subject)) is not None]
                if rank is not None and stale:
                    stale_pairs += 1
                    stale_above += min(stale) < rank
                plain1 += _rank_of(list(memory.search(q.plain).results), q.answer, q.subject) == 1
            elif q.kind == "history":
                n_history += 1
                history6 += rank is not None
            else:
                n_unchanged += 1
                unchanged1 += rank == 1
    pct = lambda a, b: 100.0 * a / b if b else float("nan")  # noqa: E731
    return {"current@1": pct(current1, n_current), "current@6": pct(current6, n_current),
            "plain@1": pct(plain1, n_current),
            "stale_above_current": pct(stale_above, stale_pairs),
            "history@6": pct(history6, n_history), "unchanged@1": pct(unchanged1, n_unchanged),
            "questions": float(len(questions)), "p50_ms": statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="default,score-order,keyword-only,consolidated,"
                                             "consolidated+score-order")
    parser.add_argument("--families", default="a,b,c,d,e,f,g,h,i,j", help="template families "
                        "(a-d: the ranking was built, checked or tuned on them; e chose between "
                        "variants of it; f, h and i were read; g was never read; j was run once "
                        "blind: _knowledge_templates.py)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--summary", action="store_true", help="one line a family (default, "
                        "keyword-only and consolidated: give them in --configs) instead of a "
                        "table a family")
    args = parser.parse_args()
    print(machine_report())
    rows = []
    for family in args.families.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(run_family(Path(tmp), family, args.seed, args.configs.split(","),
                                   quiet=args.summary))
    if args.summary:
        print_summary(rows)
    print(machine_report())


def print_summary(rows: list[FamilyRun]) -> None:
    """A line a family: the default's figures, keyword-only's current@1, and what the
    consolidation left (stale statements in MEMORY.md, replaced lines not in the history,
    edits a second run proposes)."""
    print("          default: current@1 @6  stale>cur  history@6  unchanged@1 | keyword-only"
          " | consolidated: current@1  stale left  lost  second run")
    for run in rows:
        d, k, c = (run.figures.get(name, {}) for name in ("default", "keyword-only",
                                                           "consolidated"))
        left = run.left or {}
        print(f"family {run.family} {d.get('current@1', nan):12.1f} {d.get('current@6', nan):5.1f} "
              f"{d.get('stale_above_current', nan):10.1f} {d.get('history@6', nan):10.1f} "
              f"{d.get('unchanged@1', nan):12.1f} | {k.get('current@1', nan):12.1f} | "
              f"{c.get('current@1', nan):23.1f} {left.get('stale_left', nan):11.0f} "
              f"{left.get('lost', nan):5.0f} {left.get('second_run_edits', nan):11.0f}")


@dataclass
class FamilyRun:
    family: str
    questions: int
    figures: dict[str, dict[str, float]]
    left: dict[str, float] | None


def run_family(tmp: Path, family: str, seed: int, configs: list[str],
               quiet: bool = False) -> FamilyRun:
    say = (lambda *_: None) if quiet else print
    ws = tmp / "ws"
    questions, facts = build_facts(ws, seed, family)
    kinds = {k: sum(q.kind == k for q in questions) for k in ("current", "history", "unchanged")}
    say(f"== template family {family}: {len(questions)} questions ({kinds}), "
        f"{len(list((ws / 'memory').glob('*.md')))} daily logs")
    say(f"{'config':24} {'current@1':>9} {'current@6':>9} {'stale>cur':>9} {'no-now@1':>8} "
        f"{'history@6':>9} {'unchanged@1':>11} {'p50 ms':>7}")
    left = None
    run = FamilyRun(family, len(questions), {}, None)
    for name in configs:
        if name.startswith("consolidated"):
            copy = tmp / "consolidated"
            if left is None:
                shutil.copytree(ws, copy)
                left = consolidate(copy, tmp / "consolidated.sqlite", facts, family)
            figures = evaluate(copy, tmp / "consolidated.sqlite", questions,
                               CONFIGS[name.removeprefix("consolidated").strip("+") or "default"])
        else:
            figures = evaluate(ws, tmp / f"{name}.sqlite", questions, CONFIGS[name])
        run.figures[name] = figures
        say(f"{name:24} {figures['current@1']:9.1f} {figures['current@6']:9.1f} "
            f"{figures['stale_above_current']:9.1f} {figures['plain@1']:8.1f} "
            f"{figures['history@6']:9.1f} {figures['unchanged@1']:11.1f} "
            f"{figures['p50_ms']:7.1f}")
    if left is not None:
        say(f"consolidation (scripted model, weekly): {left['edits']:.0f} edits applied; "
            f"changed facts with a stale statement left in MEMORY.md: "
            f"{left['stale_left']:.0f} of {left['changed_facts']:.0f}; replaced lines "
            f"missing from memory-history/: {left['lost']:.0f}; a second run over the "
            f"final files proposed {left['second_run_edits']:.0f} edit(s)")
    run.left = left
    return run


if __name__ == "__main__":
    main()
