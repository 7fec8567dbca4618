"""The library installs under a name of its own, and every install hint says that name.

``openclaw-memory`` on the package registry is another project: a hint naming it would make
``pip install -U`` replace this library with that one.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from openclaw_memory import DISTRIBUTION, __version__
from openclaw_memory.errors import ConfigError, install_hint
from openclaw_memory.postgres import scratch

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
TAKEN = "openclaw-memory"
# What users read: the package (messages, docstrings), README, the docs, recipes, notebooks.
SOURCES = [*sorted((ROOT / "openclaw_memory").rglob("*.py")), ROOT / "README.md",
           *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "integrations").rglob("*.py")),
           *sorted((ROOT / "notebooks").glob("*.ipynb")), *sorted((ROOT / "benchmarks").glob("*.py"))]


def _installed_names(line: str) -> list[str]:
    """The requirement words of each ``pip install`` on a line (up to &&, ;, |, #, a backtick)."""
    names = []
    for part in line.split("pip install")[1:]:
        arguments = re.split(r"&&|;|\||#|`|\)\s|\\n", part, maxsplit=1)[0]
        names += [word.strip("'\"") for word in arguments.split() if not word.startswith("-")]
    return names


def test_the_distribution_is_named_for_the_langchain_ecosystem_not_the_taken_name() -> None:
    assert PROJECT["name"] == DISTRIBUTION == "langchain-openclaw-memory"
    assert PROJECT["scripts"]["openclaw-memory"] == "openclaw_memory.cli:main"  # the command keeps its name
    assert __version__ == PROJECT["version"]


def test_install_hints_name_this_distribution_and_an_extra_it_has() -> None:
    extras = set(PROJECT["optional-dependencies"])
    for extra in extras:
        assert install_hint(extra) == f"pip install '{DISTRIBUTION}[{extra}]'"
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for line in text.splitlines():
            if "pip install" not in line:
                continue
            for name in _installed_names(line):
                assert re.split(r"[\[=<>~!]", name)[0] != TAKEN, (
                    f"{path.relative_to(ROOT)}: an install hint names another project: {line.strip()}")
            for group in re.findall(rf"{DISTRIBUTION}\[([^\]]+)\]|\.\[([^\]]+)\]", line):
                for extra in ",".join(group).split(","):
                    assert not extra or extra.strip() in extras, (path, line)


def test_the_scratch_server_without_its_wheel_names_the_extra_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scratch.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=re.escape(install_hint("postgres-scratch"))):
        scratch.start_background()
    assert scratch.main(["--background"]) == 3
