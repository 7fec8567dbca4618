"""``integrations/deployed``: the graph and custom store a LangGraph server would load from
``langgraph.json``, driven the way the server drives them (store entered once, given to every
run), with the real ``ChatOpenAI`` against the scripted server on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from chat_brain import Brain
from langchain_core.messages import HumanMessage
from openai_server import CHAT_PATH, FakeOpenAIServer

DEPLOYED = Path(__file__).resolve().parents[1] / "integrations" / "deployed"


def load(reference: str) -> Any:
    """``./file.py:name`` as langgraph.json writes it, imported from the deployment folder."""
    file, _, name = reference.partition(":")
    path = (DEPLOYED / file).resolve()
    spec = importlib.util.spec_from_file_location(f"deployed_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, name)


async def test_the_deployed_graph_serves_each_user_their_own_memory_from_the_custom_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = json.loads((DEPLOYED / "langgraph.json").read_text(encoding="utf-8"))
    assert (DEPLOYED / ".env.example").is_file()
    workspace = tmp_path / "agent-memory"
    with FakeOpenAIServer(dims=16) as server:
        server.route(CHAT_PATH, Brain(tmp_path / "unused.md"))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENCLAW_MEMORY_WORKSPACE", str(workspace))
        monkeypatch.setenv("OPENCLAW_MEMORY_EMBEDDING__PROVIDER", "none")
        graph = load(config["graphs"]["memory_agent"])
        generate_store = load(config["store"]["path"])
        async with generate_store() as store:
            # What langmem or any store-backed tool saved for a user earlier.
            await store.aput(("users", "alice"), "tea", {"content": "- Alice drinks green tea."})
            await store.aput(("users", "bob"), "coffee", {"content": "- Bob drinks espresso."})
            served = graph.copy(update={"store": store})  # as the server attaches its store

            async def ask(user: str, chat_type: str = "direct") -> str:
                result = await served.ainvoke(
                    {"messages": [HumanMessage("What does Alice drink?")]},
                    {"configurable": {"user_id": user, "chat_type": chat_type}})
                return str(result["messages"][-1].content)

            alice, bob, group = await ask("alice"), await ask("bob"), await ask("alice", "group")
        assert "green tea" in alice and "memory/users/alice/" in alice
        assert "green tea" not in bob
        assert "green tea" in group and "#L" not in group and "memory/users" not in group
    assert (workspace / "memory" / "users" / "alice").is_dir()
