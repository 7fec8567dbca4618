"""Global callback hooks and the internal turns (issue: 14-23 internal events per conversation
reached them). A handler registered with ``register_configure_hook`` and one that
``set_debug(True)`` adds print or stream to a user: they see nothing of the flush turn, while
the user's own turns still reach them. ``collect_runs()`` records runs as a tracer does: it
sees the internal turns, tagged. Real ChatOpenAI against the scripted server."""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pytest
from chat_brain import Brain
from langchain_core.globals import set_debug
from langchain_core.tracers.context import collect_runs, register_configure_hook
from openai_server import CHAT_PATH, FakeOpenAIServer
from test_agent_surface_e2e import (
    FILLER,
    STAGING,
    UserHandler,
    _assert_flush_before_each_compaction,
    _config,
    _leaks,
    _model,
    _readme_agent,
    _say,
)

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langgraph.flush import FLUSH_RUN_NAME
from openclaw_memory.langgraph.silent import INTERNAL_TAG

_HOOKED: ContextVar[UserHandler | None] = ContextVar("ocm_test_hooked", default=None)
register_configure_hook(_HOOKED, inheritable=True)
TURNS = [f"Remember that {STAGING}. Thanks.", *(FILLER.format(n=n) for n in range(12))]


@pytest.fixture()
def server() -> Any:
    with FakeOpenAIServer() as running:
        yield running


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return ws


def test_a_configure_hooks_handler_sees_the_users_turns_and_nothing_of_the_flush(
        server: FakeOpenAIServer, workspace: Path) -> None:
    brain = Brain(workspace / daily_note_path("UTC"))
    server.route(CHAT_PATH, brain)
    hooked = UserHandler()
    token = _HOOKED.set(hooked)
    try:
        with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
            agent = _readme_agent(index, _model(server))
            with collect_runs() as collector:
                for text in TURNS:
                    agent.invoke(_say(text), _config("hook"))
    finally:
        _HOOKED.reset(token)
    _assert_flush_before_each_compaction(brain, minimum=2)
    assert any("chat_model_start" in t for t in hooked.seen)  # the user's turns reached it
    assert _leaks(hooked.seen) == []
    internal = [r for r in _runs(collector.traced_runs) if r.name == FLUSH_RUN_NAME]
    assert internal and all(INTERNAL_TAG in (r.tags or []) for r in internal)


def test_set_debug_prints_the_users_turns_and_nothing_of_the_flush(
        server: FakeOpenAIServer, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    brain = Brain(workspace / daily_note_path("UTC"))
    server.route(CHAT_PATH, brain)
    set_debug(True)
    try:
        with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
            agent = _readme_agent(index, _model(server))
            for text in TURNS:
                agent.invoke(_say(text), _config("debug"))
    finally:
        set_debug(False)
    _assert_flush_before_each_compaction(brain, minimum=2)
    printed = capsys.readouterr().out
    assert "[llm/start]" in printed  # the user's turns were printed
    assert _leaks(printed.split("\n[")) == []


def _runs(runs: list[Any]) -> list[Any]:
    out = []
    for run in runs:
        out.append(run)
        out += _runs(list(run.child_runs or []))
    return out
