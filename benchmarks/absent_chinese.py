"""Chinese questions about people the notes never mention: do they still get hits?

    python benchmarks/absent_chinese.py

Chinese has no capitals, so the absent-name check reads a Chinese question's name from its
start (a common surname and the next character, search/absent.py). The set: the Chinese
people of the knowledge-update workspaces (benchmarks/knowledge_update.py, template families
a-g; the gate for a Chinese lead name, ``search.absent_chinese_name_gate``, was chosen on
a-d as the lowest that lets no absent question of theirs through, e-g kept apart), each
question about them asked twice: as it is (answerable: recall@6 of its value) and with the
person's name replaced by one that occurs nowhere in the notes (absent: the share that gets
any hit). Reported with the check on (the default) and off.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import machine_report  # noqa: E402
from knowledge_update import ZH_NAMES, _rank_of, build_facts  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402

#: Names no workspace of the set holds (their surname and first given character never meet).
ABSENT = ["孙悦", "林夕", "陈默", "王珂", "李默", "赵雷", "刘畅", "杨帆", "吴迪", "朱婷"]
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "no-absent-check": {"search": {"absent_name_check": False}},
}


def run(tmp: Path, family: str, seed: int) -> dict[str, tuple[float, float, int]]:
    ws = tmp / family / "ws"
    questions, _ = build_facts(ws, seed, family)
    chinese = [q for q in questions if any(q.text.startswith(n) for n in ZH_NAMES)]
    notes = "".join(p.read_text(encoding="utf-8") for p in ws.rglob("*.md"))
    assert not any(n in notes for n in ABSENT)
    out = {}
    for name, overrides in CONFIGS.items():
        found = with_hits = 0
        with MemoryIndex.open(ws, index_path=tmp / family / f"{name}.sqlite", **overrides) as m:
            m.sync()
            for k, q in enumerate(chinese):
                found += _rank_of(list(m.search(q.text).results), q.answer, q.subject) is not None
                person = next(n for n in ZH_NAMES if q.text.startswith(n))
                asked = q.text.replace(person, ABSENT[k % len(ABSENT)], 1)
                with_hits += bool(m.search(asked).results)
        out[name] = (100 * found / len(chinese), 100 * with_hits / len(chinese), len(chinese))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--families", default="a,b,c,d,e,f,g,h,i,j",
                        help="template families (search.absent_chinese_name_gate was chosen on "
                             "a-d; e-j were not looked at for it)")
    args = parser.parse_args()
    print(machine_report())
    print(f"{'family':7} {'config':16} {'questions':>9} {'answerable R@6':>14} "
          f"{'absent with hits %':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        for family in args.families.split(","):
            for name, (recall, hits, n) in run(Path(tmp), family, args.seed).items():
                print(f"{family:7} {name:16} {n:9d} {recall:14.1f} {hits:18.1f}")
    print(machine_report())


if __name__ == "__main__":
    main()
