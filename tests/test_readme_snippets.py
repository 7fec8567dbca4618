"""README's Python snippets run as written, in the order written, in one process.

``~`` is a temporary home holding ``agent-workspace`` (a copy of the bundled sample) and the
OpenAI-compatible endpoint is the scripted server on 127.0.0.1, reached through the
environment variables README tells users to set; the snippets themselves are not edited.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_brain import Brain
from openai_server import CHAT_PATH, FakeOpenAIServer
from postgres_server import running_postgres

import openclaw_memory

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HOME", str(tmp_path))
    sample = Path(openclaw_memory.__file__).parent / "sample_workspace"
    shutil.copytree(sample, tmp_path / "agent-workspace")
    # The shared-memory snippet reads its database from the variable README tells users to set.
    with FakeOpenAIServer(dims=16) as server, running_postgres() as database:
        server.route(CHAT_PATH, Brain(tmp_path / "agent-workspace" / "memory" / "unused.md"))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENCLAW_MEMORY_STORE__DSN", database.dsn)
        yield tmp_path


def test_readme_python_snippets_run_in_order_in_one_process(home: Path) -> None:
    blocks = python_blocks()
    assert len(blocks) >= 5
    namespace: dict[str, Any] = {}
    try:
        for number, code in enumerate(blocks, 1):
            exec(compile(code, f"README.md python block {number}", "exec"), namespace)
        assert namespace["docs"] and namespace["store"].similarity_search("Lisbon", k=1)
        answer = namespace["agent"].get_state(namespace["config"]).values["messages"][-1]
        assert "#L" not in answer.text  # a group chat: no citation reaches the answer
    finally:
        for name in ("memory", "store"):
            closer = getattr(namespace.get(name), "close", None) or getattr(
                getattr(namespace.get(name), "index", None), "close", None)
            if closer:
                closer()
    assert (home / "agent-workspace" / "sessions" / "main").is_dir()
