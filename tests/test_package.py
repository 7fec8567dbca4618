"""The engine package stands on its own: importing it and indexing never load LangChain."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_indexing_and_searching_never_import_langchain(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-01-01.md").write_text("- chose PostgreSQL\n", encoding="utf-8")
    script = (
        "import sys\n"
        "from openclaw_memory import MemoryIndex\n"
        f"with MemoryIndex.open({str(tmp_path)!r}, index_path={str(tmp_path / 'i.sqlite')!r},\n"
        "                      embedding={'provider': 'none'}) as m:\n"
        "    m.sync()\n"
        "    assert m.search('PostgreSQL').results\n"
        "top = {n.split('.')[0] for n in sys.modules}\n"
        "loaded = sorted(top & {'langchain_core', 'langchain', 'langgraph'})\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state"),
                                          "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict[str, object]:
    import tomllib

    project: dict[str, object] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return project


def test_the_licence_file_matches_the_declared_licence() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert _project()["license"] == {"text": "MIT"}


def test_the_version_is_written_once_and_the_changelog_has_it() -> None:
    from importlib import metadata

    import openclaw_memory

    version = metadata.version(openclaw_memory.DISTRIBUTION)
    assert openclaw_memory.__version__ == version == _project()["version"]
    sources = [p for p in (ROOT / "openclaw_memory").rglob("*.py") if f'"{version}"' in p.read_text("utf-8")]
    assert sources == []  # no second copy of the version string in the code
    changelog = (ROOT / "docs" / "changelog.md").read_text(encoding="utf-8")
    assert f"## [{version}]" in changelog and "## [Unreleased]" in changelog


def test_supported_systems_and_pythons_are_declared() -> None:
    classifiers = _project()["classifiers"]
    assert isinstance(classifiers, list)
    assert "Operating System :: POSIX :: Linux" in classifiers
    assert "Operating System :: MacOS" in classifiers
    assert not any("Windows" in c or "OS Independent" in c for c in classifiers)
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert _project()["requires-python"] == ">=3.11"


def test_importing_on_a_system_without_fcntl_says_which_systems_are_supported() -> None:
    script = "import sys\nsys.modules['fcntl'] = None\nimport openclaw_memory\n"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: openclaw-memory runs on POSIX systems (Linux, macOS)")
    assert "WSL" in last


def test_importing_the_agent_layers_prints_no_warning() -> None:
    # Pydantic warned on every import that a dataclass field typed threading.Lock is not a type.
    out = subprocess.run([sys.executable, "-W", "error", "-c",
                          "import openclaw_memory.langchain, openclaw_memory.langgraph"],
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == "", out.stderr
