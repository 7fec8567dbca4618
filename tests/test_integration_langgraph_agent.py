"""End to end: integrations/langgraph_agent.py with the real ChatOpenAI client talking HTTP to a
scripted OpenAI-compatible chat server on 127.0.0.1, across two compaction cycles.

The server plays the model with rules over the wire-format request (tool calls included), and
records every flush and compaction request in order, with a snapshot of today's daily log
taken when the compaction request arrives.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from chat_brain import Brain, text_of
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, RemoveMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from openai_server import CHAT_PATH, FakeOpenAIServer, RecordedRequest

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path
from openclaw_memory.langgraph import FLUSH_PROMPT, FLUSH_SYSTEM_PROMPT

ROOT = Path(__file__).resolve().parents[1]
STAGING = "the staging deploy region is eu-central-1 (Frankfurt)"
RELEASE = "the release train leaves every Thursday at 10:00"
FILLER = ("Status update {n}: the migration dry run finished without errors, the dashboards look "
          "normal and there is nothing to decide today; this message mostly fills the context.")


def _load_agent_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("langgraph_agent_demo", ROOT / "integrations" /
                                                  "langgraph_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------- the run


@dataclass
class Session:
    agent: Any
    chunks: list[tuple[BaseMessage, dict[str, Any]]] = field(default_factory=list)
    streamed_text: dict[str, str] = field(default_factory=dict)

    def say(self, text: str, thread: str, chat_type: str = "direct") -> AIMessage:
        config = {"configurable": {"thread_id": thread, "chat_type": chat_type}}
        chunks = list(self.agent.stream({"messages": [HumanMessage(content=text)]}, config,
                                        stream_mode="messages"))
        self.chunks += chunks
        self.streamed_text[thread] = self.streamed_text.get(thread, "") + "".join(
            chunk.text for chunk, _ in chunks)
        answer = self.state(thread)["messages"][-1]
        assert isinstance(answer, AIMessage)
        return answer

    def state(self, thread: str) -> dict[str, Any]:
        return dict(self.agent.get_state({"configurable": {"thread_id": thread}}).values)

    def chat_until_compaction(self, thread: str, count: int, start: int) -> int:
        for n in range(start, start + 30):
            self.say(FILLER.format(n=n), thread)
            if self.state(thread).get("compaction_count", 0) == count:
                return n + 1
        raise AssertionError(f"no compaction #{count} within 30 turns")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "agent"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Private\n\n- The user's passport number ends in 4471.\n")
    return ws


def test_agent_flushes_before_each_compaction_recalls_with_citation_and_hides_everything_silent(
        server: FakeOpenAIServer, workspace: Path) -> None:
    module = _load_agent_module()
    daily = workspace / daily_note_path("UTC")
    brain = Brain(daily)
    server.route(CHAT_PATH, brain)
    model = ChatOpenAI(model="scripted-model", base_url=server.base_url, api_key="sk-test",  # type: ignore[arg-type]
                       max_retries=0, timeout=10)
    with MemoryIndex.open(workspace, embedding={"provider": "none"}, timezone="UTC") as index:
        agent = module.build_agent(index, model, context_window=1400, reserve_tokens_floor=400,
                                   soft_threshold_tokens=200, keep_messages=4,
                                   checkpointer=InMemorySaver())
        session = Session(agent)

        # Cycle one: a fact, then chatter until the first compaction.
        session.say(f"Hello! Remember that {STAGING}. Thanks.", "direct")
        turn = session.chat_until_compaction("direct", 1, start=1)
        # Cycle two: recall the cycle-one fact (its message is compacted away), add a new one.
        recall = session.say("Which region is staging deployed to?", "direct")
        session.say(f"Also, remember that {RELEASE}. Thanks.", "direct")
        session.chat_until_compaction("direct", 2, start=turn)
        # A group chat on the same memory.
        before_group = len(server.requests_to(CHAT_PATH))
        group_recall = session.say("Which region is staging deployed to?", "team", "group")
        group_private = session.say("What is my passport number?", "team", "group")
        group_requests = server.requests_to(CHAT_PATH)[before_group:]
        direct_private = session.say("What is my passport number?", "direct-2")

    notes = daily.read_text()
    _assert_one_flush_before_each_compaction(brain.events)
    _assert_notes_on_disk_before_compaction(brain.events, notes)
    _assert_recall_cites_the_note(recall, notes, daily_note_path("UTC"))
    _assert_group_answers_are_clean(group_recall, group_private, group_requests)
    assert "eu-central-1" in session.streamed_text["team"] and "#L" not in session.streamed_text["team"]
    assert "4471" in direct_private.text and "MEMORY.md#L" in direct_private.text
    _assert_nothing_silent_is_visible(session, ["direct", "team", "direct-2"])


def _assert_one_flush_before_each_compaction(events: list[tuple[str, str]]) -> None:
    kinds = [kind for kind, _ in events]
    assert kinds.count("compaction") == 2
    cycles = "".join("F" if k == "flush" else "C" for k in kinds).split("C")
    assert cycles[:2] == ["F", "F"], kinds  # exactly one flush turn before each compaction


def _assert_notes_on_disk_before_compaction(events: list[tuple[str, str]], notes: str) -> None:
    snapshots = [snapshot for kind, snapshot in events if kind == "compaction"]
    assert "eu-central-1" in snapshots[0] and "release train" not in snapshots[0]
    assert "release train" in snapshots[1]
    # Appended, never rewritten, and no note twice (the engine refuses identical notes).
    assert notes.startswith(snapshots[0].rstrip("\n"))
    assert notes.count("eu-central-1") == 1 and notes.count("release train") == 1


def _assert_recall_cites_the_note(recall: AIMessage, notes: str, path: str) -> None:
    assert "eu-central-1" in recall.text
    match = re.search(r"Source: (\S+)#L(\d+)(?:-L(\d+))?", recall.text)
    assert match is not None, recall.text
    fact_line = next(i for i, line in enumerate(notes.splitlines(), 1) if "eu-central-1" in line)
    assert match.group(1) == path
    assert int(match.group(2)) <= fact_line <= int(match.group(3) or match.group(2))


def _assert_group_answers_are_clean(recall: AIMessage, private: AIMessage,
                                    requests: list[RecordedRequest]) -> None:
    assert "eu-central-1" in recall.text
    assert "#L" not in recall.text and "Source:" not in recall.text
    assert "4471" not in private.text and "found nothing" in private.text
    # MEMORY.md never reached the model in the group chat: not in a prompt, not in a tool result.
    assert requests and all("4471" not in r.body.decode() for r in requests)
    assert all("#L" not in text_of(m) for r in requests for m in r.json["messages"] if m["role"] == "tool")


def _assert_nothing_silent_is_visible(session: Session, threads: list[str]) -> None:
    visible: list[BaseMessage] = [m for t in threads for m in session.state(t)["messages"]]
    streamed = [chunk for chunk, _ in session.chunks]
    assert any(isinstance(c, AIMessageChunk) and c.content for c in streamed)  # tokens did stream
    for message in visible + streamed:
        text = message.text
        assert "NO_REPLY" not in text
        assert FLUSH_PROMPT[:40] not in text and FLUSH_SYSTEM_PROMPT[:40] not in text
        calls = getattr(message, "tool_calls", []) + getattr(message, "tool_call_chunks", [])
        assert all(call.get("name") != "memory_write" for call in calls)
    # The flush step streams nothing; compaction only its state update (no summary tokens).
    assert all(meta.get("langgraph_node") != "flush" for _, meta in session.chunks)
    compaction = [chunk for chunk, meta in session.chunks if meta.get("langgraph_node") == "compact"]
    assert compaction and all(isinstance(c, RemoveMessage) or c.additional_kwargs.get("lc_source")
                              == "summarization" for c in compaction)


def test_scripted_demo_shows_the_conversation_when_output_is_not_a_terminal(tmp_path: Path) -> None:
    import subprocess

    out = subprocess.run([sys.executable, str(ROOT / "integrations" / "langgraph_agent.py"),
                          "--workspace", str(tmp_path / "demo"), "--scripted"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("you> ") >= 5 and out.stdout.count("agent> ") >= 5
    assert "memory flush ran" in out.stdout and "eu-central-1" in out.stdout
