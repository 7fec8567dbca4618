"""Duplicate notes: how many restatements ``memory_write`` recognises (refuses as the same
statement, or writes with the restated line named among its related lines), and how often it
refuses a note that says something new (a lost write: must be 0).

    python benchmarks/duplicates.py                      # the default threshold (0.65)
    python benchmarks/duplicates.py --thresholds 0.75,0.8,0.85 --families a,h
    python benchmarks/duplicates.py --seed 11            # other values, the same templates

* restatements (should be caught): each fact of the knowledge-update set written in one
  template, then restated in another ("Ada Park now lives in Madrid." / "Ada Park's home is in
  Madrid."), in each template family (benchmarks/_knowledge_templates.py; the threshold was
  chosen on family a alone);
* changes (must not be caught): the same fact with another value ("Ada Park lives in Paris." /
  "Ada Park moved to Berlin.");
* value swaps (must not be caught), written with no word saying that anything changed: the
  fact's line with another value in the same words ("same frame": "Ada Park is vegetarian." /
  "Ada Park is keto.", "杨磊住在西安。" / "杨磊住在北京。"), in the other template's words
  ("other frame": "Ada Park is on the infra team." / "Ada Park belongs to the search team."),
  and the same value said of another person ("other subject": "李强的家在杭州。" / "刘洋住在杭州。");
* distinct notes from real logs (false alarms): the dev sets' notes (when ``../shared/bench``
  is there): LoCoMo dev's conversations, four days of each held out, and MADial dev's English
  and Chinese notes, half of the days held out; each held-out line of six words or more
  (twelve characters in Chinese) written as a new note into a memory holding the other days.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report  # noqa: E402
from _knowledge_templates import FAMILIES  # noqa: E402
from knowledge_update import EN_NAMES, EN_PROJECTS, ZH_NAMES  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.config import WriteSettings  # noqa: E402
from openclaw_memory.search.restatements import check_note, same_statement  # noqa: E402

BENCH = ROOT.parent / "shared" / "bench"
#: (name, workspaces, days held out of each)
NOTE_SETS = (("LoCoMo dev", sorted((BENCH / "locomo-dev").glob("conv-*")), 4),
             ("MADial dev en", [BENCH / "madial-dev" / "en-context"], 36),
             ("MADial dev zh", [BENCH / "madial-dev" / "zh-context"], 36))


def template_pairs(rng: random.Random, family: str,
                   ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(restatements, changes): pairs of (note in memory, new note)."""
    en, en_project, zh, _zh_project = FAMILIES[family]
    same, changed = [], []
    people = [(n, en) for n in EN_NAMES[:12]] + [(n, zh) for n in ZH_NAMES[:8]]
    for subject, table in people + [(n, en_project) for n in EN_PROJECTS[:6]]:
        for values, first, changes, _cq, _hq, restate in table.values():
            old, new = rng.sample(values, 2)
            said = rng.choice(changes).format(s=subject, v=old)
            same.append((said, restate.format(s=subject, v=old)))
            changed.append((first.format(s=subject, v=old),
                            rng.choice(changes).format(s=subject, v=new)))
    return same, changed


def value_swaps(rng: random.Random, family: str) -> dict[str, list[list[tuple[str, str]]]]:
    """Pairs of (line in memory, new note) by kind of swap: each kind a list of pair lists,
    one workspace each (a workspace holds one template's lines, so that a same-frame note
    has no other-frame line to be compared with)."""
    en, en_project, zh, _zh_project = FAMILIES[family]
    people = [(n, en) for n in EN_NAMES[:12]] + [(n, zh) for n in ZH_NAMES[:8]]
    firsts: list[tuple[str, str]] = []
    restated: list[tuple[str, str]] = []
    other_frame: list[tuple[str, str]] = []
    other_subject: list[tuple[str, str]] = []
    for subject, table in people + [(n, en_project) for n in EN_PROJECTS[:6]]:
        for values, first, _changes, _cq, _hq, restate in table.values():
            old, new = rng.sample(values, 2)
            firsts.append((first.format(s=subject, v=old), first.format(s=subject, v=new)))
            restated.append((restate.format(s=subject, v=old), restate.format(s=subject, v=new)))
            other_frame.append((first.format(s=subject, v=old), restate.format(s=subject, v=new)))
    for names, table in ((EN_NAMES[:12], en), (ZH_NAMES[:8], zh)):
        for values, first, _changes, _cq, _hq, restate in table.values():
            # Noted of b, said in memory of a alone: b has no line of its own to restate.
            for a, b in zip(names[0::2], names[1::2], strict=True):
                value = rng.choice(values)
                other_subject.append((first.format(s=a, v=value), restate.format(s=b, v=value)))
    return {"same frame": [firsts, restated], "other frame": [other_frame],
            "other subject": [other_subject]}


def caught_in(groups: list[list[tuple[str, str]]], threshold: float, tmp: Path) -> float:
    """:func:`caught`'s refused % over several workspaces, weighted by their pairs."""
    total = sum(len(g) for g in groups)
    return sum(caught(g, threshold, tmp)[1] * len(g) for g in groups) / total


def caught(pairs: list[tuple[str, str]], threshold: float, tmp: Path) -> tuple[float, float]:
    """(recognised %, refused %) of pairs: the second note refused as the first's statement,
    or written with the first's line named among its related lines (one workspace each
    subject, so other subjects' notes are there as they would be)."""
    ws = tmp / f"pairs-{threshold}-{len(pairs)}-{random.random():.6f}"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "facts.md").write_text("".join(f"- {a}\n" for a, _ in pairs),
                                            encoding="utf-8")
    named = refused = 0
    with MemoryIndex.open(ws, index_path=ws.with_suffix(".sqlite")) as memory:
        memory.sync()
        for a, b in pairs:
            check = check_note(memory, b, threshold=threshold)
            refused += check.same is not None
            named += check.same is not None or any(same_statement(a, r.text) for r in check.related)
    return 100.0 * named / len(pairs), 100.0 * refused / len(pairs)


def _long_enough(line: str) -> bool:
    cjk = sum("\u4e00" <= char <= "\u9fff" for char in line)
    return len(line.split()) >= 6 or cjk >= 12


def false_alarms(workspaces: list[Path], held_days: int, threshold: float, tmp: Path,
                 per_workspace: int) -> tuple[float, int]:
    """Share of held-out lines of real notes taken for restatements of the other days."""
    rng = random.Random(11)
    flagged = total = 0
    for source in (w for w in workspaces if (w / "memory").is_dir()):
        days = sorted((source / "memory").glob("*.md"))
        held = set(rng.sample(days, min(held_days, len(days) - 1)))
        ws = tmp / f"{source.parent.name}-{source.name}-{threshold}"
        (ws / "memory").mkdir(parents=True)
        for day in days:
            if day not in held:
                (ws / "memory" / day.name).write_text(day.read_text(encoding="utf-8"),
                                                      encoding="utf-8")
        lines = [line.strip() for day in sorted(held)
                 for line in day.read_text(encoding="utf-8").splitlines()
                 if _long_enough(line) and not line.startswith("#")]
        with MemoryIndex.open(ws, index_path=ws.with_suffix(".sqlite")) as memory:
            memory.sync()
            for line in rng.sample(lines, min(per_workspace, len(lines))):
                total += 1
                flagged += check_note(memory, line, threshold=threshold).same is not None
    return (100.0 * flagged / total if total else float("nan")), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--thresholds", default=str(WriteSettings().restatement_similarity))
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--per-workspace", type=int, default=150,
                        help="the most held-out lines asked of one workspace")
    parser.add_argument("--seed", type=int, default=5,
                        help="the draw of values for the template pairs (another seed: other "
                             "values and old/new orders in the same templates)")
    args = parser.parse_args()
    print(machine_report())
    thresholds = [float(t) for t in args.thresholds.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        print("restatements and changed facts of each template family (English, Chinese)")
        print("(recognised: restatements refused or written with the restated line named, the")
        print(" higher the better; refused: restatements refused as the same statement; every")
        print(" other column: new facts refused, lost writes, must be 0)")
        print(f"{'family':>6} {'pairs':>6} {'threshold':>9} {'recognised %':>13} {'refused %':>10} "
              f"{'changes %':>10} {'same frame %':>13} {'other frame %':>14} "
              f"{'other subject %':>16}")
        for family in args.families.split(","):
            same, changed = template_pairs(random.Random(args.seed), family)
            swaps = value_swaps(random.Random(args.seed), family)
            for threshold in thresholds:
                refused = " ".join(f"{caught_in(swaps[kind], threshold, Path(tmp)):{width}.1f}"
                                   for kind, width in (("same frame", 13), ("other frame", 14),
                                                       ("other subject", 16)))
                recognised, refused_same = caught(same, threshold, Path(tmp))
                print(f"{family:>6} {len(same):6d} {threshold:9.2f} {recognised:13.1f} "
                      f"{refused_same:10.1f} {caught(changed, threshold, Path(tmp))[1]:10.1f} "
                      f"{refused}")
        print("distinct notes of the dev sets refused (lost writes)")
        print(f"{'notes of':<14} {'threshold':>9} {'false alarms %':>15} {'notes':>6}")
        for name, workspaces, held_days in NOTE_SETS:
            for threshold in thresholds:
                alarms, total = false_alarms(workspaces, held_days, threshold, Path(tmp),
                                             args.per_workspace)
                print(f"{name:<14} {threshold:9.2f} {alarms:15.1f} {total:6d}")
    print(machine_report())


if __name__ == "__main__":
    main()
