"""Curating memory: lines of MEMORY.md and evergreen notes replaced or removed by citation,
with optimistic concurrency, a readable history that is never indexed, atomic private writes
and the chat-type rules; from the Python API, the tool and the CLI."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from cli_entry import ENTRY_POINT

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.curation import CurationError
from openclaw_memory.langchain import MemoryScope, memory_tools

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC"}
PARIS = "- The user lives in Paris and works at Acme as a data engineer."
BERLIN = "- The user lives in Berlin and works at Globex."


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(f"# Facts\n\n{PARIS}\n- The user is vegetarian.\n")
    (root / "MEMORY.md").chmod(0o640)
    (root / "memory" / "2026-11-20.md").write_text("- Talked about the Lisbon trip.\n")
    (root / "memory" / "projects.md").write_text("- Kestrel ships in March.\n")
    return root


@pytest.fixture()
def memory(ws: Path, tmp_path: Path) -> Any:
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as opened:
        opened.sync()
        yield opened


def test_a_replaced_fact_is_searchable_its_old_text_is_in_the_history_not_the_index(
        memory: MemoryIndex, ws: Path) -> None:
    result = memory.edit("MEMORY.md#L3", PARIS, BERLIN, reason="moved last month")
    assert result.applied and result.action == "replaced" and result.citation == "MEMORY.md#L3"
    text = (ws / "MEMORY.md").read_text()
    assert text.splitlines()[2].startswith(BERLIN) and "(as of " in text.splitlines()[2]
    assert "Paris" not in text and text.endswith("- The user is vegetarian.\n")
    assert ((ws / "MEMORY.md").stat().st_mode & 0o777) == 0o640  # its mode kept
    history = memory.get(result.history or "")
    assert "Paris" in history.text and "Berlin" in history.text and "moved last month" in history.text
    hits = memory.search("where does the user live Paris Acme").results
    assert all("Paris" not in h.snippet for h in hits)
    assert any("Berlin" in h.snippet for h in memory.search("user lives Berlin").results)
    assert not any(h.path.startswith("memory-history") for h in
                   memory.search("Paris Acme data engineer", min_score=0.0).results)


def test_lines_that_changed_meanwhile_are_not_touched_and_the_answer_shows_them(
        memory: MemoryIndex, ws: Path) -> None:
    before = (ws / "MEMORY.md").read_bytes()
    result = memory.edit("MEMORY.md#L4", PARIS, BERLIN)  # the wrong lines for that text
    assert not result.applied and result.action == "conflict"
    assert result.current == "- The user is vegetarian." and result.moved_to == (3, 3)
    assert (ws / "MEMORY.md").read_bytes() == before
    assert not (ws / "memory-history").exists()


def test_lines_are_removed_and_kept_in_the_history(memory: MemoryIndex, ws: Path) -> None:
    result = memory.edit("MEMORY.md#L4", "- The user is vegetarian.", None, reason="not anymore")
    assert result.applied and result.action == "removed"
    assert "vegetarian" not in (ws / "MEMORY.md").read_text()
    assert "vegetarian" in memory.get(result.history or "").text


def test_evergreen_notes_can_be_edited_daily_logs_cannot(memory: MemoryIndex, ws: Path) -> None:
    assert memory.edit("memory/projects.md#L1", "- Kestrel ships in March.",
                       "- Kestrel ships in May.").applied
    with pytest.raises(CurationError, match="append-only"):
        memory.edit("memory/2026-11-20.md#L1", "- Talked about the Lisbon trip.", "- No.")
    with pytest.raises(OpenClawMemoryError):
        memory.edit("../outside.md#L1", "x", "y")


def test_two_editors_of_the_same_lines_one_wins_the_other_sees_the_change(
        memory: MemoryIndex, ws: Path) -> None:
    results: list[Any] = []
    barrier = threading.Barrier(2)

    def edit(text: str) -> None:
        barrier.wait()
        results.append(memory.edit("MEMORY.md#L3", PARIS, text))

    threads = [threading.Thread(target=edit, args=(f"- The user lives in {city}.",))
               for city in ("Rome", "Oslo")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.applied for r in results) == [False, True]
    assert len((ws / "MEMORY.md").read_text().splitlines()) == 4


def test_history_is_private_in_group_chats_and_edits_are_direct_only(
        memory: MemoryIndex) -> None:
    result = memory.edit("MEMORY.md#L3", PARIS, BERLIN)
    with pytest.raises(OpenClawMemoryError, match="private"):
        memory.get(result.history or "", chat_type="group")
    with pytest.raises(OpenClawMemoryError, match="direct"):
        memory.edit("MEMORY.md#L3", BERLIN, PARIS, chat_type="group")


def _call(tool: Any, config: dict[str, Any] | None = None, **args: Any) -> Any:
    return tool.invoke({"type": "tool_call", "id": "c", "name": tool.name, "args": args},
                       config or {})


def test_the_tool_edits_answers_conflicts_with_the_current_text_and_respects_areas(
        memory: MemoryIndex, ws: Path) -> None:
    edit = {t.name: t for t in memory_tools(memory)}["memory_edit"]
    wrong = json.loads(_call(edit, citation="MEMORY.md#L4", expected=PARIS,
                             replacement=BERLIN).content)
    assert wrong["applied"] is False and wrong["current"] == "- The user is vegetarian."
    assert wrong["expected_now_at"] == "MEMORY.md#L3-L3"
    done = json.loads(_call(edit, citation="MEMORY.md#L3", expected=PARIS,
                            replacement=BERLIN, reason="moved").content)
    assert done["applied"] is True and done["history"].startswith("memory-history/")
    scope = MemoryScope(memory, namespace=("users", "{user_id}"))
    scoped = {t.name: t for t in memory_tools(scope)}["memory_edit"]
    refused = _call(scoped, {"configurable": {"user_id": "bob"}}, citation="MEMORY.md#L3",
                    expected=BERLIN, replacement=PARIS)
    assert refused.status == "error" and "not in this conversation" in refused.content
    group = _call(edit, {"configurable": {"chat_type": "group"}}, citation="MEMORY.md#L3",
                  expected=BERLIN, replacement=PARIS)
    assert group.status == "error"


def test_the_cli_edits_forgets_and_shows_the_history(ws: Path, tmp_path: Path) -> None:
    base = [ENTRY_POINT, "--workspace", str(ws), "--index", str(tmp_path / "c.sqlite"),
            "--provider", "none"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args], capture_output=True, text=True, timeout=60,
                              check=False)

    done = run("edit", "MEMORY.md#L3", "--expected", PARIS, "--to", BERLIN, "--reason", "moved")
    assert done.returncode == 0 and "replaced MEMORY.md#L3" in done.stdout, done.stderr
    stale = run("forget", "MEMORY.md#L3", "--expected", PARIS)
    assert stale.returncode == 3 and "nothing was written" in stale.stderr
    assert "Traceback" not in stale.stderr and "changed since it was read" in stale.stderr
    part = run("edit", "MEMORY.md#L3", "--expected", "lives in Berlin", "--to", PARIS)
    assert part.returncode == 3 and "must be the whole text of MEMORY.md#L3" in part.stderr
    assert "changed since" not in part.stderr
    gone = run("forget", "MEMORY.md#L4", "--expected", "- The user is vegetarian.")
    assert gone.returncode == 0
    history = run("history")
    assert "Paris" in history.stdout and "vegetarian" in history.stdout


def test_an_edit_through_a_users_scope_keeps_its_history_in_that_users_scope(
        memory: MemoryIndex, ws: Path) -> None:
    scope = MemoryScope(memory, namespace=("users", "{user_id}"))
    alice = {"configurable": {"user_id": "alice"}}
    tools = {t.name: t for t in memory_tools(scope)}
    written = json.loads(_call(tools["memory_write"], alice, content="Alice lives in Porto.",
                               target="memory").content)
    line = written["citation"]
    assert line.startswith("memory/users/alice/MEMORY.md#L")
    text = (ws / line.split("#")[0]).read_text().splitlines()[written["start_line"] - 1]
    done = json.loads(_call(tools["memory_edit"], alice, citation=line, expected=text,
                            replacement="- Alice lives in Faro.", reason="she moved").content)
    history = done["history"]
    assert done["applied"] is True and history.startswith("memory-history/memory/users/alice/")
    assert not (ws / "memory-history").joinpath(history.split("/")[-1].split("#")[0]).exists()
    read = json.loads(_call(tools["memory_get"], alice, path=history).content)
    assert "Alice lives in Porto." in read["text"]
    bob = _call(tools["memory_get"], {"configurable": {"user_id": "bob"}}, path=history)
    assert bob.status == "error" and "not in this conversation" in bob.content
    group = _call(tools["memory_get"], {"configurable": {"user_id": "alice", "chat_type": "group"}},
                  path=history)
    assert group.status == "error"
    assert not memory.search("Porto").results or all(
        not h.path.startswith("memory-history/") for h in memory.search("Porto").results)
