"""OpenClaw's scope rules decide where memory is available at all: the first matching rule
(chat type, channel, normalised or raw session-key prefix) or the default; denials are
logged and counted, as are refused paths; tools and the CLI apply them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_entry import ENTRY_POINT

from openclaw_memory import MemoryIndex
from openclaw_memory.config import ScopeSettings
from openclaw_memory.langchain import memory_tools
from openclaw_memory.scope.availability import decide, normalised_key

DOCS_SCOPE: dict[str, Any] = {"default": "deny", "rules": [
    {"action": "allow", "match": {"chatType": "direct"}},
    {"action": "deny", "match": {"keyPrefix": "discord:channel:"}},
    {"action": "deny", "match": {"rawKeyPrefix": "agent:main:discord:"}},
    {"action": "allow", "match": {"channel": "telegram", "chatType": "group"}},
]}


def test_the_first_matching_rule_decides_as_the_documents_example_reads() -> None:
    scope = ScopeSettings.model_validate(DOCS_SCOPE)
    assert decide(scope, "direct", "agent:main:discord:dm:7").allowed  # rule 1 first
    denied = decide(scope, "channel", "agent:ops:discord:channel:42")
    assert not denied.allowed and denied.reason == "scope rule 2 (deny)"
    assert denied.channel == "discord"
    assert decide(scope, "group", "agent:main:telegram:group:1").allowed
    assert decide(scope, "group", "agent:main:slack:group:1").reason == "scope default (deny)"
    assert normalised_key("Agent:Main:Discord:Channel:1") == "discord:channel:1"
    legacy = ScopeSettings.model_validate({"rules": [
        {"action": "deny", "match": {"keyPrefix": "agent:main:"}}]})
    assert not decide(legacy, "direct", "agent:main:x").allowed  # read as a raw prefix
    assert decide(ScopeSettings(), "group", None).allowed  # default: allow, as before


@pytest.fixture()
def memory(workspace: Path, tmp_path: Path) -> Any:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", timezone="UTC",
                          embedding={"provider": "none"}, scope=DOCS_SCOPE) as opened:
        opened.sync()
        yield opened


def _call(tool: Any, args: dict[str, Any], key: str | None = None) -> Any:
    config = {"configurable": {"session_key": key}} if key else {}
    return tool.invoke({"type": "tool_call", "id": "c1", "name": tool.name, "args": args},
                       config)


def test_tools_refuse_where_the_rules_deny_and_status_counts_it(
        memory: MemoryIndex, caplog: pytest.LogCaptureFixture) -> None:
    search, get = (t for t in memory_tools(memory) if t.name in ("memory_search", "memory_get"))
    allowed = _call(search, {"query": "billing database"})
    assert allowed.status != "error"
    denied = _call(search, {"query": "billing database"}, "agent:main:slack:group:9")
    assert denied.status == "error" and "not available in this chat" in denied.content
    assert "channel slack, chat type group" in caplog.text
    assert _call(get, {"path": "memory/2026-01-01.md"}, "agent:ops:discord:channel:4").status == "error"
    refused = _call(get, {"path": "../../etc/passwd"})
    assert refused.status == "error"
    status = memory.status()
    assert status["scope_denied"] == 2 and status["paths_refused"] == 1


def test_the_cli_applies_the_rules_with_chat_type_and_session_key(workspace: Path,
                                                                  tmp_path: Path) -> None:
    (workspace / "openclaw-memory.toml").write_text(
        "[scope]\ndefault = 'deny'\n[[scope.rules]]\naction = 'allow'\n"
        "match = { chatType = 'direct' }\n")
    base = [ENTRY_POINT, "--workspace", str(workspace), "--provider", "none", "search", "billing"]
    env = {"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "s"), "PATH": "/usr/bin:/bin"}
    ok = subprocess.run([*base, "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0 and json.loads(ok.stdout)["results"]
    denied = subprocess.run([*base, "--chat-type", "group", "--session-key",
                             "agent:main:telegram:group:1"], capture_output=True, text=True,
                            env=env, timeout=120)
    assert denied.returncode == 3
    assert "not available in this chat (scope default (deny); channel telegram" in denied.stderr


def test_the_retriever_retrieves_nothing_where_the_rules_deny(memory: MemoryIndex) -> None:
    from openclaw_memory.langchain import OpenClawMemoryRetriever

    retriever = OpenClawMemoryRetriever(index=memory, k=3)
    assert retriever.invoke("billing database")
    assert retriever.invoke("billing database", chat_type="group",
                            session_key="agent:main:slack:group:2") == []
    assert memory.status()["scope_denied"] == 1


def test_the_langgraph_store_answers_nothing_to_a_run_the_rules_deny(memory: MemoryIndex) -> None:
    from langchain_core.runnables import RunnableLambda

    from openclaw_memory.langgraph import OpenClawMemoryStore

    store = OpenClawMemoryStore(memory)
    store.put(("users", "ada"), "tea", {"text": "Ada prefers green tea"})
    look = RunnableLambda(lambda _: (store.search(("users",), query="tea"),
                                     store.get(("users", "ada"), "tea")))
    found, item = look.invoke(None)
    assert found and item is not None  # a direct run (no session key)
    found, item = look.invoke(None, {"configurable": {"session_key": "agent:main:slack:group:3"}})
    assert found == [] and item is None
    assert memory.status()["scope_denied"] == 2  # the search and the get
