"""Every Python snippet in README and the documentation runs as written, offline.

Each page's snippets run in order in one process, in a fresh home folder (``~`` is a temporary
folder; nothing else is prepared: the pages make their own ``~/agent-workspace`` with
``sample_workspace``). Agent snippets run on the shipped ``DemoChatModel``. The PostgreSQL
guide reads its database from the variable it tells users to set, here a scratch server.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_server import running_postgres

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def python_blocks(page: Path) -> list[str]:
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         tmp_path_factory: pytest.TempPathFactory) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    for variable in ("XDG_STATE_HOME", "OPENCLAW_MEMORY_STATE_DIR", "OPENCLAW_MEMORY_WORKSPACE",
                     "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    # The ready copy of the local model is shared between pages only to save time.
    monkeypatch.setenv("OPENCLAW_MEMORY_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "model-cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@contextlib.contextmanager
def _services(page: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if "OPENCLAW_MEMORY_STORE__DSN" not in page.read_text(encoding="utf-8"):
        yield
        return
    with running_postgres() as database:
        monkeypatch.setenv("OPENCLAW_MEMORY_STORE__DSN", database.dsn)
        yield


def _close_all(namespace: dict[str, Any]) -> None:
    for value in namespace.values():
        closer = getattr(value, "close", None)
        if callable(closer) and type(value).__module__.startswith("openclaw_memory"):
            with contextlib.suppress(Exception):
                closer()


def _assert_written_in_database(name: str, note: str) -> None:
    from openclaw_memory import open_memory

    memory = open_memory(name, store={"backend": "postgres"})
    try:
        assert any(note in hit.snippet for hit in memory.search(note).results), note
    finally:
        memory.close()


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)], ids=_name)
def test_every_python_snippet_of_a_page_runs_as_written_in_order(
        page: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {"__name__": "__snippets__"}
    with _services(page, monkeypatch):
        try:
            for number, code in enumerate(python_blocks(page), 1):
                exec(compile(code, f"{_name(page)} python block {number}", "exec"), namespace)
        finally:
            _close_all(namespace)
        if page.name == "postgres.md":  # the write is in alice's database workspace
            _assert_written_in_database("alice", "Alice moved to the Berlin office.")
    printed = capsys.readouterr().out
    if page.name == "langgraph.md":  # a group chat: the answer comes from memory, uncited
        answer = namespace["reply"]["messages"][-1].text
        assert "rollback plan" in answer and "#L" not in answer
        # The offline model's consolidation proposes replacing the line the new note changes.
        assert "-- Tomás is the on-call SRE this quarter" in printed
        assert "+- Tomás is no longer the on-call SRE" in printed
        # The MemoryScope snippet: alice's note is in her own folder, as its comment says.
        alice = list((home / "agent-workspace" / "memory" / "users" / "alice").glob("*.md"))
        assert any("I take the 8:10 train" in p.read_text(encoding="utf-8") for p in alice), alice
    workspace = home / "agent-workspace"
    if page.name == "concepts.md":  # "today's daily file"
        daily = [p for p in (workspace / "memory").glob("????-??-??.md")
                 if "nightly export at 02:00 UTC" in p.read_text(encoding="utf-8")]
        assert daily, "the write landed in no daily file"
    if page.name == "curation.md":  # the demo model's review updates the line the note changes
        assert '"citation":"MEMORY.md#L4","action":"update","applied":true' in printed
        curated = (workspace / "MEMORY.md").read_text(encoding="utf-8")
        assert "Priya Raman now leads the data team." in curated
        assert "leads the platform team" not in curated
    if page.name == "freshness.md":  # the comment's citation and source
        assert "sessions/2026-11-23-a1b2.jsonl#L1-L2 sessions" in printed
    if page.name == "langchain.md":  # the filtered store search finds the trip; a file backs it
        assert "Lisbon flight on Dec 3" in printed
        stored = list((workspace / "memory" / "vectorstore").rglob("*.md"))
        assert any("Lisbon flight on Dec 3" in p.read_text(encoding="utf-8") for p in stored)
        assert "billing" in printed.lower() and "memory/2026-" in printed
    if page.name == "README.md":
        assert "MEMORY.md#L" in printed and "hybrid" in printed
        assert "PostgreSQL 16" in printed.split("hybrid", 1)[1]  # the agent answered from memory
