"""The shell commands of README and the documentation work from a clone of this repository
alone, as written."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {path: path.read_text(encoding="utf-8")
         for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]}
TEST_TOOLS = ("pytest", "ruff", "mypy", "hypothesis", "nbclient", "ipykernel", "jupyter",
              "langchain-tests", "matplotlib")


def blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def commands() -> list[str]:
    """Every command of every page (README and docs/)."""
    return [line.split("  #")[0].strip() for text in PAGES.values()
            for block in blocks("bash", text) + blocks("zsh", text)
            for line in block.splitlines() if line.strip()]


def first_two() -> tuple[str, str]:
    start = README.split("## Start here", 1)[1]
    one, two = blocks("bash")[0].strip(), blocks("bash")[1].strip()
    assert one in start and two in start
    return one, two


def test_the_first_command_stops_at_once_on_a_python_older_than_3_11(tmp_path: Path) -> None:
    check = first_two()[0].split(" && ")[0]
    assert check.startswith("python3 -c")
    fake = tmp_path / "site"
    fake.mkdir()
    # Python 3.10 as far as the command can tell: the version tuple and string it reads.
    (fake / "sitecustomize.py").write_text(
        "import sys\nsys.version_info = (3, 10, 12, 'final', 0)\n"
        "sys.version = '3.10.12 (main, Nov 20 2023) [GCC 11.4.0]'\n", encoding="utf-8")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "PYTHONPATH": str(fake)}
    old = subprocess.run(["bash", "-c", check], env=env, capture_output=True, text=True, timeout=60)
    assert old.returncode == 1
    assert old.stderr.strip() == "openclaw-memory needs Python 3.11 or newer; python3 here is 3.10.12"
    env.pop("PYTHONPATH")
    assert subprocess.run(["bash", "-c", check], env=env, timeout=60).returncode == 0


def test_the_package_declares_the_python_it_needs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["requires-python"] == ">=3.11"


def test_the_first_command_installs_the_library_only_and_the_second_the_test_tools() -> None:
    one, two = first_two()
    assert "pip install -e . &&" in one and "[test]" not in one
    assert 'pip install -e ".[test]"' in two and two.endswith("python -m pytest -q")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = " ".join(project["dependencies"]).lower()
    assert not [tool for tool in TEST_TOOLS if re.search(rf"(^|\s|\"){tool}\b", runtime)]
    test_extra = " ".join(project["optional-dependencies"]["test"])
    assert all(tool in test_extra for tool in ("pytest", "ruff", "mypy"))


def test_no_command_points_outside_the_repository() -> None:
    for command in commands():
        assert "../" not in command, command
        for word in shlex.split(command.replace("${fpath[1]}", "FPATH"), comments=True):
            if re.match(r"^(notebooks|benchmarks|integrations|tests|openclaw_memory)/", word):
                assert (ROOT / word).exists(), f"{word} in: {command}"


def test_every_python_script_readme_runs_starts_from_a_clone() -> None:
    scripts = sorted({word for command in commands() for word in shlex.split(command, comments=True)
                      if word.endswith(".py") and (ROOT / word).is_file()})
    assert len(scripts) >= 5
    for script in scripts:
        run = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0 and "usage:" in run.stdout, (script, run.stderr)


@pytest.mark.slow
def test_the_eval_commands_run_on_the_shipped_data(tmp_path: Path) -> None:
    entry = str(Path(sys.executable).parent / "openclaw-memory")
    evals = [c for c in commands() if c.startswith("openclaw-memory") and " eval " in c]
    assert len(evals) == 2
    env = {**os.environ, "OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state"), "HOME": str(tmp_path)}
    outputs = []
    for command in evals:
        argv = shlex.split(command)
        run = subprocess.run([entry, *argv[1:]], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    # The figures the CLI guide prints are the ones these commands print.
    guide = PAGES[ROOT / "docs" / "cli.md"]
    for output in outputs:
        for row in output.splitlines():
            if row.startswith(("fact ", "paraphrase ", "all ")):
                assert row in guide, row


def test_the_shell_completion_commands_write_where_readme_says(tmp_path: Path) -> None:
    guide = PAGES[ROOT / "docs" / "cli.md"]
    bash_lines = next(b for b in blocks("bash", guide) if "completion" in b).strip().splitlines()
    env = {**os.environ, "HOME": str(tmp_path), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for line in bash_lines:
        assert subprocess.run(["bash", "-c", line], env=env, timeout=60).returncode == 0
    written = tmp_path / ".local/share/bash-completion/completions/openclaw-memory"
    assert "complete -o filenames -F _openclaw_memory openclaw-memory" in written.read_text()


def test_ci_runs_readmes_two_commands_and_installs_nothing_else() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("pip install -q ", "pip install ")
    first, second = first_two()
    assert first in ci
    install, _, tests = second.partition(" && python -m pytest")
    assert install in ci and f"python -m pytest{tests}" in ci
    assert "apt-get" not in ci and "brew " not in ci


def test_every_extra_an_install_command_names_exists() -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
                 ["project"]["optional-dependencies"])
    named = {extra.strip() for command in commands() if command.startswith("pip install")
             for group in re.findall(r'\.\[([^\]]+)\]', command) for extra in group.split(",")}
    assert named and named <= extras, named - extras


@pytest.mark.slow
def test_the_postgres_guide_runs_from_a_clone_in_order(tmp_path: Path) -> None:
    """The guide's own commands, a scratch server started and stopped as it says (its
    ``pip install`` lines are what the test extra already installed)."""
    guide = PAGES[ROOT / "docs" / "postgres.md"]
    lines = [line for block in blocks("bash", guide) for line in block.splitlines()
             if line.strip() and not line.startswith("pip install")]
    assert any("scratch --background" in line for line in lines)
    env = {**os.environ, "HOME": str(tmp_path), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for variable in ("OPENCLAW_MEMORY_STATE_DIR", "XDG_STATE_HOME", "OPENCLAW_MEMORY_STORE__DSN"):
        env.pop(variable, None)
    stop = next(line for line in guide.split("`") if line.endswith("scratch --stop"))
    try:
        run = subprocess.run(["bash", "-c", "set -euo pipefail\n" + "\n".join(lines)], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=600)
    finally:
        stopped = subprocess.run(["bash", "-c", stop], env=env, capture_output=True, text=True,
                                 timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "published" in run.stdout and "MEMORY.md" in run.stdout
    # The search's comment says the decision's line comes first.
    assert re.search(r"^1\. MEMORY\.md#L\d+", run.stdout, re.M), run.stdout[:2000]
    assert (tmp_path / "agent-workspace" / "MEMORY.md").is_file()
    # The export lands in the reader's home, never in the clone the commands run from.
    assert (tmp_path / "alice-notes" / "MEMORY.md").is_file()
    assert not (ROOT / "alice-notes").exists()
    assert stopped.stdout.strip() == "stopped"
