"""Duplicate notes: how many restatements ``memory_write`` catches, and how often it refuses a
note that says something new.

    python benchmarks/duplicates.py                      # the default threshold (0.75)
    python benchmarks/duplicates.py --thresholds 0.75,0.8,0.85

* restatements (should be caught): each fact of the knowledge-update set written in one
  template, then restated in another ("Ada Park now lives in Madrid." / "Ada Park's home is in
  Madrid.");
* changes (must not be caught): the same fact with another value ("Ada Park lives in Paris." /
  "Ada Park moved to Berlin.");
* distinct notes from real logs (false alarms): LoCoMo dev conversations (when
  ``../shared/bench/locomo-dev`` is there), each day's lines of six words or more written as
  new notes into a memory holding every other day.
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
from _knowledge_templates import EN_A as EN  # noqa: E402
from _knowledge_templates import EN_PROJECT_A as EN_PROJECT  # noqa: E402
from _knowledge_templates import ZH_A as ZH  # noqa: E402
from knowledge_update import EN_NAMES, EN_PROJECTS, ZH_NAMES  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.search.restatements import find_restatement  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "bench" / "locomo-dev"


def template_pairs(rng: random.Random) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(restatements, changes): pairs of (note in memory, new note)."""
    same, changed = [], []
    people = [(n, EN) for n in EN_NAMES[:12]] + [(n, ZH) for n in ZH_NAMES[:8]]
    for subject, table in people + [(n, EN_PROJECT) for n in EN_PROJECTS[:6]]:
        for values, first, changes, _cq, _hq, restate in table.values():
            old, new = rng.sample(values, 2)
            said = rng.choice(changes).format(s=subject, v=old)
            same.append((said, restate.format(s=subject, v=old)))
            changed.append((first.format(s=subject, v=old),
                            rng.choice(changes).format(s=subject, v=new)))
    return same, changed


def caught(pairs: list[tuple[str, str]], threshold: float, tmp: Path) -> float:
    """Share of pairs whose second note is found restating the first (one workspace each
    subject, so other subjects' notes are there as they would be)."""
    ws = tmp / f"pairs-{threshold}-{len(pairs)}-{random.random():.6f}"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "facts.md").write_text("".join(f"- {a}\n" for a, _ in pairs),
                                            encoding="utf-8")
    hits = 0
    with MemoryIndex.open(ws, index_path=ws.with_suffix(".sqlite")) as memory:
        memory.sync()
        for _a, b in pairs:
            hits += find_restatement(memory, b, threshold=threshold) is not None
    return 100.0 * hits / len(pairs)


def false_alarms(threshold: float, tmp: Path, per_conversation: int) -> tuple[float, int]:
    if not LOCOMO.is_dir():
        return float("nan"), 0
    rng = random.Random(11)
    flagged = total = 0
    for conversation in sorted(p for p in LOCOMO.iterdir() if (p / "memory").is_dir()):
        days = sorted((conversation / "memory").glob("*.md"))
        held = rng.choice(days)
        ws = tmp / f"{conversation.name}-{threshold}"
        (ws / "memory").mkdir(parents=True)
        for day in days:
            if day != held:
                (ws / "memory" / day.name).write_text(day.read_text(encoding="utf-8"),
                                                      encoding="utf-8")
        lines = [line.strip() for line in held.read_text(encoding="utf-8").splitlines()
                 if len(line.split()) >= 6]
        with MemoryIndex.open(ws, index_path=ws.with_suffix(".sqlite")) as memory:
            memory.sync()
            for line in rng.sample(lines, min(per_conversation, len(lines))):
                total += 1
                flagged += find_restatement(memory, line, threshold=threshold) is not None
    return 100.0 * flagged / max(1, total), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--thresholds", default="0.75")
    parser.add_argument("--per-conversation", type=int, default=60)
    args = parser.parse_args()
    print(machine_report())
    same, changed = template_pairs(random.Random(5))
    print(f"{len(same)} restatements, {len(changed)} changes (English, Chinese); distinct notes "
          f"from LoCoMo dev: {'present' if LOCOMO.is_dir() else 'absent'}")
    print(f"{'threshold':>9} {'caught %':>9} {'changes caught %':>17} {'false alarms %':>15} "
          f"{'notes':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for threshold in (float(t) for t in args.thresholds.split(",")):
            alarms, total = false_alarms(threshold, Path(tmp), args.per_conversation)
            print(f"{threshold:9.2f} {caught(same, threshold, Path(tmp)):9.1f} "
                  f"{caught(changed, threshold, Path(tmp)):17.1f} {alarms:15.1f} {total:6d}")
    print(machine_report())


if __name__ == "__main__":
    main()
