"""``memory_write`` on notes written by hand: is a restatement recognised, is a change or a
new fact ever lost?

    python benchmarks/write_pairs.py [--pairs benchmarks/data/write_pairs.jsonl]

Each line of the pairs file is a line already in memory (``before``, in ``MEMORY.md``) and a
note then written to today's log (``note``), of one kind: ``restatement`` (the same fact in
other words: recognised when refused as the same statement, or written with the ``before``
line named among its related lines), ``change`` (the fact changed, including negations,
reversals and an added fact: lost when refused) and ``distinct`` (a new fact about the same
subject: refused counts against it; naming the ``before`` line is shown, as noise the model
reads). 60 pairs written by hand for this benchmark, 40 English and 20 Chinese; each in a
fresh workspace with the default settings and the offline default model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_report

from openclaw_memory import MemoryIndex

PAIRS = Path(__file__).resolve().parent / "data" / "write_pairs.jsonl"


def _bare(text: str) -> str:
    return text.strip().lstrip("-*").strip()


def outcome(pair: dict[str, str], root: Path, n: int) -> tuple[bool, bool]:
    """(written, the ``before`` line named among the related lines)."""
    workspace = root / f"w{n}"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text(f"# Memory\n\n- {pair['before']}\n", encoding="utf-8")
    with MemoryIndex.open(workspace, index_path=root / f"w{n}.sqlite") as memory:
        memory.sync()
        result = memory.write(pair["note"])
    named = any(_bare(line.text) == _bare(pair["before"]) for line in result.related)
    return result.written, named


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    args = parser.parse_args()
    print(machine_report())
    pairs = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    counts: Counter[tuple[str, str]] = Counter()
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, pair in enumerate(pairs):
            written, named = outcome(pair, Path(tmp), n)
            kind = pair["kind"]
            counts[kind, "all"] += 1
            counts[kind, "refused"] += not written
            counts[kind, "named"] += written and named
            if kind == "restatement" and written and not named:
                misses.append(f"  restatement not recognised: {pair['note']}")
            if kind != "restatement" and not written:
                misses.append(f"  {kind} refused: {pair['note']}")
    print(f"{'kind':<12} {'pairs':>6} {'refused':>8} {'written, before named':>22}")
    for kind in ("restatement", "change", "distinct"):
        print(f"{kind:<12} {counts[kind, 'all']:>6} {counts[kind, 'refused']:>8} "
              f"{counts[kind, 'named']:>22}")
    recognised = counts["restatement", "refused"] + counts["restatement", "named"]
    print(f"restatements recognised: {recognised} of {counts['restatement', 'all']}; "
          f"changes lost: {counts['change', 'refused']}; "
          f"distinct notes refused: {counts['distinct', 'refused']}")
    print("\n".join(misses) if misses else "  (no restatement missed, no note refused)")


if __name__ == "__main__":
    main()
