"""Run a benchmark and put its output into the documentation, stamped with its run.

    python benchmarks/record.py cold-start -- python benchmarks/cold_start.py
    python benchmarks/record.py retrieval --page docs/benchmarks.md -- \\
        python benchmarks/retrieval.py --configs default,keyword-only

The page (default ``docs/benchmarks.md``) holds a block ``<!-- figures: NAME -->`` ...
``<!-- /figures -->``; its content is replaced by the command as run, the date, the machine
with its load average before and after, the wall and CPU time, and everything the benchmark
printed. Figures in the documentation are these blocks, never numbers copied by hand
(``tests/test_docs.py`` checks every block has its stamp). A path outside the repository (the
development sets) is shown by its last folder only.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_report

ROOT = Path(__file__).resolve().parents[1]


def _shown(argv: list[str]) -> str:
    words = ["python"]  # argv[0] is this interpreter, wherever it lies
    for word in argv[1:]:
        path = Path(word)
        beside = path.resolve().is_relative_to(ROOT.parent) and not path.resolve().is_relative_to(ROOT)
        if "/" in word and path.exists() and beside:
            word = f"DEV/{path.name}"  # a development set beside the clone; never in it
        words.append(word)
    return " ".join(words)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(argv: list[str]) -> str:
    """The benchmark's output with its stamp, as the block's text."""
    before = machine_report()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    wall = time.monotonic() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"the benchmark failed (exit {done.returncode}); nothing recorded")
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    # Most benchmarks print the machine themselves; the load before the run is added otherwise.
    machine = "" if "machine: " in done.stdout else f"{before}\n"
    return (f"$ {_shown(argv)}\n"
            f"recorded {date.today().isoformat()}: {wall:.0f} s wall, {cpu:.0f} s CPU; "
            f"load avg at the end {_load()}\n{machine}\n{done.stdout.rstrip()}\n")


def write_block(page: Path, name: str, text: str) -> None:
    source = page.read_text(encoding="utf-8")
    pattern = re.compile(rf"(<!-- figures: {re.escape(name)} -->\n).*?(<!-- /figures -->)", re.DOTALL)
    if not pattern.search(source):
        sys.exit(f"{page} has no block <!-- figures: {name} --> ... <!-- /figures -->")
    body = "```text\n" + text.replace("```", "'''") + "```\n"
    page.write_text(pattern.sub(lambda m: m[1] + body + m[2], source, count=1), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the block's name in the page")
    parser.add_argument("--page", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- python benchmarks/X.py ...")
    args = parser.parse_args()
    argv = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not argv:
        parser.error("give the benchmark's command after --")
    argv = [sys.executable if word == "python" and i == 0 else word for i, word in enumerate(argv)]
    text = run(argv)
    write_block(args.page, args.name, text)
    print(text)


if __name__ == "__main__":
    main()
