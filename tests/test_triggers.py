"""Sync triggers that never block: search while dirty, session start, interval; status extras.

Real SQLite files, real threads; a real second connection holding the write lock stands in for
another process (a watcher) that is writing, which is what makes a background sync wait.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_chat import ScriptedChatModel, ai, call
from langchain_core.messages import HumanMessage
from waiting import wait_until, write_lock_held

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import SyncCancelledError
from openclaw_memory.freshness.triggers import BackgroundSync, IntervalTrigger, SyncOutcome
from openclaw_memory.langgraph import NO_REPLY, MemoryFlush
from openclaw_memory.types import SyncReport

KEYWORD_ONLY = {"embedding": {"provider": "none"}}


def paths(response: object) -> set[str]:
    return {hit.path for hit in response.results}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- search while dirty


def test_search_answers_from_the_current_index_while_a_background_sync_waits(
        workspace: Path, tmp_path: Path) -> None:
    index_path = tmp_path / "i.sqlite"
    with MemoryIndex.open(workspace, index_path=index_path, store={"busy_timeout_ms": 120_000},
                          **KEYWORD_ONLY) as memory:
        memory.sync()
        (workspace / "memory" / "2026-02-01.md").write_text("- The wombat project moved to Oslo.\n")
        memory.mark_dirty("test wrote a file")
        with write_lock_held(index_path):
            # The background sync this starts is stuck on the write lock until the block ends;
            # if search waited for it, these calls would not return inside the block.
            first = memory.search("wombat")
            assert first.stale and "memory/2026-02-01.md" not in paths(first)
            assert memory.freshness.background.running
            other = memory.search("PostgreSQL")
            assert other.stale and "MEMORY.md" in paths(other)
            assert memory.status()["background_sync"]["running"] is True
        assert memory.wait_for_sync(60)
        fresh = memory.search("wombat")
        assert not fresh.stale and paths(fresh) == {"memory/2026-02-01.md"}
        assert memory.status()["background_sync"]["runs"] >= 1


def test_a_reopened_index_serves_its_first_search_at_once_and_catches_up(
        workspace: Path, tmp_path: Path) -> None:
    index_path = tmp_path / "i.sqlite"
    with MemoryIndex.open(workspace, index_path=index_path, **KEYWORD_ONLY) as memory:
        memory.sync()
    (workspace / "memory" / "2026-02-02.md").write_text("- Adopted a capybara named Nilsson.\n")
    with MemoryIndex.open(workspace, index_path=index_path, **KEYWORD_ONLY) as memory:
        with write_lock_held(index_path):
            response = memory.search("capybara")
            assert response.stale and not response.results
        assert memory.wait_for_sync(60)
        assert paths(memory.search("capybara")) == {"memory/2026-02-02.md"}


def test_with_on_search_off_a_never_built_index_is_not_built_by_search(
        workspace: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", sync={"on_search": False},
                          **KEYWORD_ONLY) as memory:
        response = memory.search("PostgreSQL")
        assert response.stale and not response.results
        assert not memory.freshness.background.running and memory.last_sync is None
        memory.sync()
        assert memory.search("PostgreSQL").results


def test_a_change_noticed_during_a_sync_keeps_the_index_dirty(workspace: Path,
                                                              tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", **KEYWORD_ONLY) as memory:
        def mark_midway(done: int, total: int, path: str) -> None:
            if done == 1:
                memory.mark_dirty("changed while syncing")
        memory.sync(progress=mark_midway)
        assert memory.freshness.dirty
        assert [r["reason"] for r in memory.status()["dirty_reasons"]] == [
            "changed while syncing"]
        memory.sync()
        assert not memory.freshness.dirty and memory.status()["dirty_reasons"] == []


# ---------------------------------------------------------------------- concurrency


def test_triggers_from_many_threads_run_one_sync_at_a_time_and_miss_nothing(
        workspace: Path, tmp_path: Path) -> None:
    outcomes: list[SyncOutcome] = []
    errors: list[BaseException] = []
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", **KEYWORD_ONLY) as memory:
        memory.sync()
        memory.freshness.background.add_listener(outcomes.append)
        start = threading.Barrier(6)

        def agent(n: int) -> None:
            try:
                start.wait()
                for i in range(15):
                    note = workspace / "memory" / f"t{n}-{i}.md"
                    note.write_text(f"- token{n}x{i} written by thread {n}\n")
                    memory.mark_dirty(f"thread {n}")
                    memory.search(f"token{n}x{i}")
                    memory.on_session_start(f"session-{n}")
                    memory.sync_in_background(f"thread {n}")
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=agent, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors
        assert memory.wait_for_sync(120)
        assert memory.freshness.background.failures == 0
        spans = sorted((o.started_at, o.finished_at) for o in outcomes)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
        assert len(outcomes) < 6 * 15 * 3  # requests coalesce into far fewer passes
        memory.sync()  # nothing left: every note was indexed by the background passes
        assert memory.last_sync is not None and memory.last_sync.indexed == 0
        for n in range(6):
            assert paths(memory.search(f"token{n}x14")) == {f"memory/t{n}-14.md"}


def test_background_runner_coalesces_requests_and_never_overlaps() -> None:
    active = 0
    peak = 0
    calls = 0
    gate = threading.Event()
    entered = threading.Event()
    lock = threading.Lock()

    def run(checkpoint: Callable[[], None]) -> SyncReport:
        nonlocal active, peak, calls
        with lock:
            active += 1
            calls += 1
            peak = max(peak, active)
        entered.set()
        gate.wait(30)
        with lock:
            active -= 1
        return SyncReport()

    runner = BackgroundSync(run)
    assert runner.request("first") is True
    assert entered.wait(30) and runner.current_reasons == ("first",)
    requesters = [threading.Thread(target=runner.request, args=(f"r{i}",)) for i in range(20)]
    for t in requesters:
        t.start()
    for t in requesters:
        t.join()
    gate.set()
    assert runner.wait(30)
    assert peak == 1 and calls == 2  # the running pass, then one pass for all 20 requests
    assert runner.last is not None and len(runner.last.reasons) == 20


def test_a_failing_background_sync_is_recorded_and_the_next_request_recovers(
        workspace: Path, tmp_path: Path) -> None:
    index_path = tmp_path / "i.sqlite"
    with MemoryIndex.open(workspace, index_path=index_path, store={"busy_timeout_ms": 50},
                          **KEYWORD_ONLY) as memory:
        memory.sync()
        (workspace / "memory" / "2026-02-03.md").write_text("- The narwhal budget was approved.\n")
        memory.mark_dirty("test wrote a file")
        with write_lock_held(index_path):
            memory.sync_in_background("test")
            assert memory.wait_for_sync(60)
        status = memory.status()["background_sync"]
        assert status["failures"] == 1 and "locked" in status["last_error"]
        assert memory.freshness.dirty  # a failed sync clears nothing
        memory.sync_in_background("retry")
        assert memory.wait_for_sync(60)
        assert memory.status()["background_sync"]["last"]["ok"] is True
        assert paths(memory.search("narwhal")) == {"memory/2026-02-03.md"}


def test_closing_cancels_a_running_background_pass_between_files() -> None:
    entered = threading.Event()

    def run(checkpoint: Callable[[], None]) -> SyncReport:
        entered.set()
        while True:  # a long sync: one checkpoint per file
            checkpoint()
            time.sleep(0.01)

    runner = BackgroundSync(run)
    runner.request("long")
    assert entered.wait(30)
    assert runner.close(30) is True
    assert runner.last is not None and runner.last.cancelled and runner.failures == 0
    assert runner.request("after close") is False
    with pytest.raises(SyncCancelledError):
        runner._checkpoint()


# ---------------------------------------------------------------------- session start, interval


def test_session_start_syncs_in_the_background_once_per_session_key(
        workspace: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", **KEYWORD_ONLY) as memory:
        memory.sync()
        (workspace / "memory" / "2026-02-04.md").write_text("- Ordered a quetzal figurine.\n")
        assert memory.on_session_start("alice") is True
        assert memory.on_session_start("alice") is False
        assert memory.wait_for_sync(60)
        assert memory.status()["background_sync"]["last"]["reasons"] == ["session-start"]
        assert paths(memory.search("quetzal")) == {"memory/2026-02-04.md"}
        assert memory.on_session_start("bob") is True
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite",
                          sync={"on_session_start": False}, **KEYWORD_ONLY) as memory:
        assert memory.on_session_start("carol") is False
        assert not memory.freshness.background.running


def test_interval_setting_syncs_periodically_in_the_background(workspace: Path,
                                                              tmp_path: Path) -> None:
    # 0.003 minutes = 0.18 s; search itself never syncs here (on_search off).
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite",
                          sync={"interval_minutes": 0.003, "on_search": False},
                          **KEYWORD_ONLY) as memory:
        memory.sync()
        (workspace / "memory" / "2026-02-05.md").write_text("- Saw an axolotl at the fair.\n")
        wait_until(lambda: bool(paths(memory.search("axolotl"))))
        assert memory.status()["sync_triggers"]["interval_minutes"] == 0.003
        assert memory.freshness.interval is not None and memory.freshness.interval.fired >= 1
    assert not memory.freshness.interval.running  # close() stopped the timer


def test_interval_trigger_survives_a_failing_request() -> None:
    fired = threading.Event()
    count = 0

    def fire() -> None:
        nonlocal count
        count += 1
        if count >= 3:
            fired.set()
        raise RuntimeError("request failed")

    timer = IntervalTrigger(0.01, fire).start()
    assert fired.wait(30)
    timer.stop(10)
    assert not timer.running and count >= 3


# ---------------------------------------------------------------------- flush timestamps


def test_a_flush_turn_is_recorded_for_status_in_every_process(workspace: Path,
                                                              tmp_path: Path) -> None:
    index_path = tmp_path / "i.sqlite"
    with MemoryIndex.open(workspace, index_path=index_path, timezone="UTC",
                          **KEYWORD_ONLY) as memory:
        assert memory.status()["flush_count"] == 0 and memory.status()["last_flush_at"] is None
        model = ScriptedChatModel(script=[ai("", call("memory_write", content="- Flushed note.")),
                                          ai(NO_REPLY)])
        flush = MemoryFlush(memory, model, context_window=1000, reserve_tokens_floor=200,
                            soft_threshold_tokens=100)
        before = time.time()
        update = flush.update({"messages": [HumanMessage("word " * 700)]})
        assert update["memory_flush_at"] >= before
        memory.record_flush(appended=0)
    with MemoryIndex.open(workspace, index_path=index_path, **KEYWORD_ONLY) as other:
        status = other.status()
        assert status["flush_count"] == 2 and status["last_flush_appended"] == 0
        assert status["last_flush_at"] >= before
