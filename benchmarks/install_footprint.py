"""README's first command on a fresh copy of this clone: its time, the venv's size, and what
the library writes under ``$HOME``.

    python benchmarks/install_footprint.py

The repository (without ``.venv``, ``.git`` and caches) is copied to a temporary folder and
README's first ``bash`` block runs there as written, with ``HOME`` pointed at an empty folder,
so pip starts with an empty download cache and nothing the library writes can hide among
files from earlier runs. Printed: the command's wall time, the venv's size with its largest
packages, and every file under the temporary ``HOME`` outside pip's own cache.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_report

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", ".mypy_cache",
                                 ".ruff_cache", ".pytest_cache", "site")


def first_command() -> str:
    """README's first ``bash`` block, as a user copies it."""
    found = re.search(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), re.S)
    if found is None:
        raise SystemExit("README.md has no ```bash block")
    return found.group(1)


def size_mb(path: Path) -> float:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return total / 1e6


def largest_packages(venv: Path, count: int) -> list[tuple[str, float]]:
    site = next(venv.glob("lib/python*/site-packages"))
    sizes = [(p.name, size_mb(p)) for p in site.iterdir() if p.is_dir() and
             not p.name.endswith((".dist-info", "__pycache__"))]
    return sorted(sizes, key=lambda item: -item[1])[:count]


def written_under(home: Path) -> list[tuple[str, float]]:
    """The library's folders under HOME, then everything else outside pip's download cache."""
    ours = sorted(p for p in home.rglob("openclaw-memory") if p.is_dir())
    pip_cache = home / ".cache" / "pip"
    rest = sum(p.stat().st_size for p in home.rglob("*") if p.is_file() and not p.is_symlink()
               and not p.is_relative_to(pip_cache) and not any(p.is_relative_to(o) for o in ours))
    return [(f"~/{p.relative_to(home)}", size_mb(p)) for p in ours] + [("anything else", rest / 1e6)]


def main() -> None:
    print(machine_report())
    command = first_command()
    with tempfile.TemporaryDirectory() as tmp:
        clone, home = Path(tmp) / "clone", Path(tmp) / "home"
        shutil.copytree(ROOT, clone, ignore=SKIPPED)
        home.mkdir()
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("VIRTUAL_ENV", "OPENCLAW_MEMORY_", "XDG_"))}
        env |= {"HOME": str(home), "PATH": os.defpath}
        started = time.perf_counter()
        run = subprocess.run(["bash", "-c", command], cwd=clone, env=env, capture_output=True,
                             text=True, check=False)
        wall = time.perf_counter() - started
        if run.returncode != 0:
            raise SystemExit(f"README's first command failed ({run.returncode}):\n{run.stderr}")
        print(f"README command 1 (install + first search, empty pip cache): {wall:.1f} s")
        print(f"venv: {size_mb(clone / '.venv'):.0f} MB; largest packages:")
        for name, mb in largest_packages(clone / ".venv", 8):
            print(f"  {name:<28} {mb:6.1f} MB")
        print("written under $HOME by the library (pip's download cache apart):")
        for name, mb in written_under(home):
            print(f"  {name:<44} {mb:6.1f} MB")


if __name__ == "__main__":
    main()
