"""The agent and shell surfaces on the PostgreSQL backend: MemoryIndex.open(backend=...),
open_memory from settings, the CLI (publish, search, write, get, status, export), the LangChain
tools and retriever, the LangGraph flush and session-start context."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain_core.messages import HumanMessage, ToolMessage

from openclaw_memory import MemoryIndex, open_memory
from openclaw_memory.cli import main
from openclaw_memory.errors import ConfigError
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langchain import OpenClawMemoryRetriever, memory_tools
from openclaw_memory.langgraph import NO_REPLY, MemoryFlush, session_start_context
from openclaw_memory.postgres import PostgresMemory

KEYWORD_ONLY: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC"}
SAMPLE = Path(__file__).resolve().parent.parent / "openclaw_memory" / "sample_workspace"


def test_memory_index_open_and_open_memory_reach_the_database(
        pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with MemoryIndex.open("team", backend="postgres", dsn=pg_dsn, **KEYWORD_ONLY) as memory:
        assert isinstance(memory, PostgresMemory) and memory.workspace_name == "team"
        memory.write("The retro is on Thursdays.")
    monkeypatch.setenv("OPENCLAW_MEMORY_STORE__BACKEND", "postgres")
    monkeypatch.setenv("OPENCLAW_MEMORY_STORE__DSN", pg_dsn)
    with open_memory("team", **KEYWORD_ONLY) as again:
        assert isinstance(again, PostgresMemory)
        assert again.search("retro").results
    monkeypatch.delenv("OPENCLAW_MEMORY_STORE__DSN")
    with pytest.raises(ConfigError, match="connection string"):
        open_memory("team", **KEYWORD_ONLY)


def test_status_never_shows_the_dsn_password(pg_dsn: str, workspace: Path) -> None:
    secret = pg_dsn.replace("postgres@", "postgres:hunter2@")
    with MemoryIndex.open(workspace, store={"dsn": secret}, **KEYWORD_ONLY) as memory:
        assert "hunter2" not in json.dumps(memory.status(), default=str)


def _cli(capsys: pytest.CaptureFixture[str], dsn: str, *args: str) -> tuple[int, str, str]:
    code = main(["--backend", "postgres", "--dsn", dsn, "--name", "cli", "--provider", "none",
                 *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_publishes_searches_writes_reads_and_exports(
        pg_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, pg_dsn, "publish", str(SAMPLE))
    assert code == 0 and "5 written" in out
    code, out, _ = _cli(capsys, pg_dsn, "search", "Priya platform team", "--json")
    assert code == 0 and json.loads(out)["results"][0]["path"] == "MEMORY.md"
    code, out, _ = _cli(capsys, pg_dsn, "write", "The demo moved to Friday.", "--json")
    written = json.loads(out)
    assert code == 0 and written["written"]
    code, out, _ = _cli(capsys, pg_dsn, "get", written["citation"])
    assert out.strip() == "The demo moved to Friday."
    code, out, _ = _cli(capsys, pg_dsn, "export", str(tmp_path / "out"))
    assert code == 0
    for path in SAMPLE.rglob("*.md"):
        assert (tmp_path / "out" / path.relative_to(SAMPLE)).read_bytes() == path.read_bytes()
    code, out, _ = _cli(capsys, pg_dsn, "status", "--json")
    assert json.loads(out)["files"] == 6


def test_cli_errors_are_one_line_on_this_backend(pg_dsn: str, workspace: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(capsys, "postgresql://nobody@127.0.0.1:1/none", "search", "x")
    assert code == 3 and err.count("\n") == 1 and "cannot connect" in err
    code, _, err = _cli(capsys, pg_dsn, "get", "../etc/passwd.md")
    assert code == 3 and err.count("\n") == 1
    code, _, err = _cli(capsys, pg_dsn, "watch")
    assert code == 3 and "publish" in err
    assert main(["--workspace", str(workspace), "export", "x"]) == 3
    assert "--backend postgres" in capsys.readouterr().err


def test_langchain_tools_and_retriever_work_on_a_database_workspace(pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="lc", **KEYWORD_ONLY) as memory:
        tools = {t.name: t for t in memory_tools(memory)}

        def run(name: str, **args: Any) -> dict[str, Any]:
            message = tools[name].invoke({"type": "tool_call", "name": name, "args": args,
                                          "id": "c1"})
            assert isinstance(message, ToolMessage) and message.status == "success"
            return dict(json.loads(str(message.content)))

        written = run("memory_write", content="Dana's birthday is on May 3rd.")
        found = run("memory_search", query="Dana birthday")
        assert found["results"][0]["path"] == written["path"]
        read = run("memory_get", path=found["results"][0]["citation"])
        assert "May 3rd" in read["text"]
        docs = OpenClawMemoryRetriever(index=memory).invoke("Dana birthday")
        assert docs and "May 3rd" in docs[0].page_content


def test_the_flush_writes_its_notes_to_the_database(pg_dsn: str) -> None:
    model = ScriptedChatModel(script=[ai("", call("memory_write",
                                                  content="User switched to the night shift.")),
                                      ai(f"{NO_REPLY}")])
    with PostgresMemory.open(pg_dsn, workspace="flush", **KEYWORD_ONLY) as memory:
        report = MemoryFlush(memory, model).run([HumanMessage("I work nights now.")])
        assert report.appended == 1 and not report.error
        path = daily_note_path("UTC", datetime.now(UTC))
        assert "night shift" in memory.get(path).text
        memory.record_flush(appended=report.appended)
        assert memory.status()["flush_count"] == 1
        context = session_start_context(memory)
        assert "night shift" in str(context)


def test_eval_scores_a_suite_on_the_database_as_on_sqlite(
        pg_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    suite = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "kestrel-team"
    args = ["eval", "--suite", str(suite), "--ks", "1,6", "--provider", "none", "--json"]
    assert main(["--backend", "postgres", "--dsn", pg_dsn, *args]) == 0
    on_postgres = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    on_sqlite = json.loads(capsys.readouterr().out)
    assert on_postgres["scored"] == on_sqlite["scored"] > 0 and not on_postgres["warnings"]
    # The same pipeline on another keyword index: within a point or two, never apart.
    for group, figures in on_sqlite["groups"].items():
        assert abs(on_postgres["groups"][group]["recall@6"] - figures["recall@6"]) <= 0.15, group
