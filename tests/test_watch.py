"""The watchfiles watcher and ``openclaw-memory watch``: real inotify, files, threads, processes.

Waits poll with generous overall timeouts; nothing here asserts how fast anything is (the
write-to-searchable latency is printed by ``benchmarks/watch.py``).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_until, write_lock_held

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import WatchError
from openclaw_memory.files.workspace import Workspace
from openclaw_memory.freshness.watch import MemoryWatcher, build_plan

# on_search off: only the watcher may bring changes into the index in these tests.
SETTINGS = {"embedding": {"provider": "none"}, "sync": {"on_search": False}}
FAST = 100  # debounce (ms) for tests that are not about the debounce itself


def found(memory: MemoryIndex, query: str) -> set[str]:
    return {hit.path for hit in memory.search(query).results}


@pytest.fixture
def memory(workspace: Path, tmp_path: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", **SETTINGS) as opened:
        opened.sync()
        yield opened


def _notifier_descriptors() -> int:
    """Descriptors of the kinds a notifier opens (inotify, epoll, eventfd): counting only these
    keeps files that other threads open and close meanwhile out of the comparison."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            total += os.readlink(f"/proc/self/fd/{fd}").startswith("anon_inode:")
        except OSError:
            continue
    return total


def _inotify_watches() -> int:
    """inotify watches held by this process (one ``inotify wd:`` line per watched folder)."""
    total = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        total += text.count("inotify wd:")
    return total


# ---------------------------------------------------------------------- what is watched


def test_plan_watches_memory_folders_but_not_unrelated_or_ignored_trees(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for folder in ("memory/projects/alpha", "memory/node_modules/pkg", "memory/.git/objects",
                   "node_modules/a/b", "src/deep", ".git/refs"):
        (ws / folder).mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (ws / "memory" / "linked").symlink_to(tmp_path / "elsewhere")
    plan = build_plan(Workspace(ws))
    watched = {os.path.relpath(d, ws) for d in plan.directories}
    assert watched == {".", "memory", "memory/projects", "memory/projects/alpha"}


def test_plan_filters_events_to_indexed_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory" / "node_modules").mkdir(parents=True)
    (ws / "sessions").mkdir()
    (ws / "notes").mkdir()
    plan = build_plan(Workspace(ws, [Path("notes"), Path("../extra.md")],
                                sessions_dir=ws / "sessions"))
    relevant = {p for p in (
        "MEMORY.md", "memory.md", "AGENTS.md", "memory/2026-01-01.md", "memory/a/b.md",
        "memory/todo.txt", "memory/node_modules/x.md", "sessions/s1.jsonl", "sessions/s1.md",
        "sessions/old/s0.jsonl", "notes/n.md", "../extra.md", "../other.md",
    ) if plan.relevant(os.path.normpath(str(ws / p)))}
    assert relevant == {"MEMORY.md", "memory.md", "memory/2026-01-01.md", "memory/a/b.md",
                        "sessions/s1.jsonl", "notes/n.md", "../extra.md"}
    assert str(tmp_path) in plan.directories  # the extra file's folder, watched flat


def test_one_notifier_serves_any_number_of_folders(tmp_path: Path) -> None:
    def descriptors_and_watches(folders: int) -> tuple[int, int]:
        ws = tmp_path / f"ws{folders}"
        for i in range(folders):
            (ws / "memory" / f"d{i % 10}" / f"e{i}").mkdir(parents=True)
        gc.collect()  # a stopped notifier frees its descriptors when collected: not mid-count
        before = _notifier_descriptors()
        watches_before = _inotify_watches()
        with MemoryWatcher(Workspace(ws), on_change=lambda p: None,
                           on_settled=lambda: None) as watcher:
            assert watcher.plan is not None
            used = _notifier_descriptors() - before
            watches = _inotify_watches() - watches_before
            assert watches == len(watcher.plan.directories)
        return used, watches

    small = descriptors_and_watches(10)
    large = descriptors_and_watches(400)
    assert large[1] > small[1] + 300  # many more folders watched...
    assert large[0] == small[0]  # ...with the same descriptors


# ---------------------------------------------------------------------- watching an index


def test_a_new_note_becomes_searchable_through_the_watcher(memory: MemoryIndex,
                                                           workspace: Path) -> None:
    watcher = memory.watch(debounce_ms=FAST)
    (workspace / "memory" / "2026-03-01.md").write_text("- Booked the zeppelin tour.\n")
    wait_until(lambda: found(memory, "zeppelin") == {"memory/2026-03-01.md"})
    # The rows are visible once committed; the runner records the sync's outcome just after.
    wait_until(lambda: memory.status()["background_sync"]["last"] is not None)
    status = memory.status()
    assert status["watcher"]["running"] and status["watcher"]["in_this_process"]
    assert status["background_sync"]["last"]["reasons"] == ["watch"]
    assert watcher.events >= 1 and watcher.error is None


def test_edits_and_deletions_reach_the_index(memory: MemoryIndex, workspace: Path) -> None:
    memory.watch(debounce_ms=FAST)
    note = workspace / "memory" / "topics.md"
    note.write_text("# Topics\n\nTea: green, no sugar.\n")
    wait_until(lambda: found(memory, "green") == {"memory/topics.md"})
    assert not found(memory, "roast")
    note.unlink()
    wait_until(lambda: not found(memory, "green"))
    (workspace / "MEMORY.md").write_text("# Memory\n\n- We moved billing to CockroachDB.\n")
    wait_until(lambda: found(memory, "CockroachDB") == {"MEMORY.md"})


def test_folders_created_after_the_watcher_started_are_watched(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()  # no MEMORY.md, no memory/ yet
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **SETTINGS) as memory:
        memory.sync()
        watcher = memory.watch(debounce_ms=FAST)
        (ws / "memory" / "projects" / "deep").mkdir(parents=True)
        (ws / "memory" / "projects" / "deep" / "plan.md").write_text("- Launch the okapi app.\n")
        wait_until(lambda: found(memory, "okapi") == {"memory/projects/deep/plan.md"})
        # The new folders are watched now: a later write there is seen on its own.
        wait_until(lambda: watcher.plan is not None and len(watcher.plan.directories) == 4)
        (ws / "memory" / "projects" / "deep" / "later.md").write_text("- Pet the pangolin.\n")
        wait_until(lambda: found(memory, "pangolin") == {"memory/projects/deep/later.md"})
        (ws / "MEMORY.md").write_text("- Favourite colour: vermilion.\n")
        wait_until(lambda: found(memory, "vermilion") == {"MEMORY.md"})
        assert watcher.restarts >= 1


def test_unrelated_files_do_not_trigger_syncs(memory: MemoryIndex, workspace: Path) -> None:
    watcher = memory.watch(debounce_ms=FAST)
    (workspace / "AGENTS.md").write_text("not memory\n")
    (workspace / "memory" / "scratch.txt").write_text("not markdown\n")
    (workspace / "memory" / "2026-03-02.md").write_text("- Marker: ibex.\n")
    wait_until(lambda: found(memory, "ibex") == {"memory/2026-03-02.md"})
    # Only the note counted as a change (the .txt and AGENTS.md were filtered out).
    assert all("scratch" not in p and "AGENTS" not in p for p in watcher.last_paths)


def test_a_burst_of_writes_is_debounced_into_few_syncs(memory: MemoryIndex,
                                                      workspace: Path) -> None:
    watcher = memory.watch()  # the default 1.5 s debounce
    assert watcher.debounce_ms == 1500
    for i in range(20):
        (workspace / "memory" / f"burst-{i}.md").write_text(f"- burst note kiwi{i}\n")
    wait_until(lambda: found(memory, "kiwi19") == {"memory/burst-19.md"})
    assert memory.wait_for_sync(30)
    assert watcher.settled < 20 and memory.freshness.background.runs < 20
    assert all(found(memory, f"kiwi{i}") for i in range(20))


def test_a_failing_sync_is_recorded_and_the_watcher_keeps_going(workspace: Path,
                                                                tmp_path: Path) -> None:
    index_path = tmp_path / "i.sqlite"
    with MemoryIndex.open(workspace, index_path=index_path, store={"busy_timeout_ms": 50},
                          **SETTINGS) as memory:
        memory.sync()
        watcher = memory.watch(debounce_ms=FAST)
        with write_lock_held(index_path):
            (workspace / "memory" / "2026-03-03.md").write_text("- Saw a tapir.\n")
            wait_until(lambda: memory.freshness.background.failures >= 1)
        assert "locked" in (memory.status()["background_sync"]["last_error"] or "")
        assert watcher.running
        (workspace / "memory" / "2026-03-04.md").write_text("- Saw a lemur.\n")
        wait_until(lambda: found(memory, "lemur") == {"memory/2026-03-04.md"})
        assert found(memory, "tapir") == {"memory/2026-03-03.md"}  # the failed one caught up


def test_session_transcripts_are_watched_when_enabled(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sessions").mkdir(parents=True)
    changes: list[tuple[str, ...]] = []
    settled = threading.Event()
    with MemoryWatcher(Workspace(ws, sessions_dir=ws / "sessions"), on_change=changes.append,
                       on_settled=settled.set, debounce_ms=FAST):
        (ws / "sessions" / "s1.jsonl").write_text('{"type":"message"}\n')
        assert settled.wait(30)
    assert any(str(ws / "sessions" / "s1.jsonl") in batch for batch in changes)


def test_watcher_stops_cleanly_and_close_stops_it(memory: MemoryIndex) -> None:
    watcher = memory.watch(debounce_ms=FAST)
    assert memory.watch() is watcher  # one watcher per index
    threads = {t.name for t in threading.enumerate()}
    assert "openclaw-memory-watch" in threads
    memory.close()
    assert not watcher.running
    assert "openclaw-memory-watch" not in {t.name for t in threading.enumerate()}


def test_watching_a_missing_workspace_fails_with_a_clear_error(tmp_path: Path) -> None:
    watcher = MemoryWatcher(Workspace(tmp_path / "missing"), on_change=lambda p: None,
                            on_settled=lambda: None)
    with pytest.raises(WatchError):
        watcher.start()


# ---------------------------------------------------------------------- the CLI


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "openclaw_memory", *args]


def _interruptible(*args: str) -> list[str]:
    """The CLI with Ctrl-C at its default, as a terminal starts it: a test run started as a
    background job of a non-interactive shell (``pytest ... &``) ignores SIGINT, a child
    inherits that, and the watcher would never see the interrupt the test sends it."""
    run = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
           "from openclaw_memory.cli.app import main; sys.exit(main(sys.argv[1:]))")
    return [sys.executable, "-c", run, *args]


def test_cli_watch_indexes_new_notes_and_exits_130_on_ctrl_c(workspace: Path,
                                                            tmp_path: Path) -> None:
    base = ["--workspace", str(workspace), "--index", str(tmp_path / "i.sqlite"),
            "--provider", "none"]
    proc = subprocess.Popen(_interruptible(*base, "watch", "--debounce-ms", "200"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline(), proc.stdout.readline()]
        assert "initial sync" in lines[0] and "watching" in lines[1], lines

        status = json.loads(subprocess.run(_cli(*base, "status", "--json"), capture_output=True,
                                           text=True, check=True, timeout=120).stdout)
        assert status["watcher"]["pid"] == proc.pid and not status["watcher"]["in_this_process"]

        (workspace / "memory" / "2026-03-05.md").write_text("- The marmot moved to Bern.\n")

        def searchable() -> bool:
            out = subprocess.run(_cli(*base, "search", "--no-sync", "--json", "marmot"),
                                 capture_output=True, text=True, check=True, timeout=120)
            return any(r["path"] == "memory/2026-03-05.md"
                       for r in json.loads(out.stdout)["results"])

        wait_until(searchable, timeout=120)
        assert "sync (watch)" in proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "interrupted" in (proc.stderr.read() if proc.stderr else "")
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("i.sqlite."))
    assert leftovers == []  # no rebuild temp files
    status = json.loads(subprocess.run(_cli(*base, "status", "--json"), capture_output=True,
                                       text=True, check=True, timeout=120).stdout)
    assert status["watcher"] is None  # the watcher record died with the process


def test_cli_watch_exits_0_on_sigterm(workspace: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        _cli("--workspace", str(workspace), "--index", str(tmp_path / "i.sqlite"),
             "--provider", "none", "watch"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        assert proc.stdout is not None
        assert "initial sync" in proc.stdout.readline()
        assert "watching" in proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "stopped" in (proc.stderr.read() if proc.stderr else "")


def test_cli_watch_json_prints_one_json_object_per_event(workspace: Path, tmp_path: Path) -> None:
    base = ["--workspace", str(workspace), "--index", str(tmp_path / "j.sqlite"),
            "--provider", "none"]
    proc = subprocess.Popen(_interruptible(*base, "watch", "--debounce-ms", "200", "--json"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first, second = json.loads(proc.stdout.readline()), json.loads(proc.stdout.readline())
        assert first["event"] == "initial_sync" and first["report"]["indexed"] >= 1
        assert second["event"] == "watching" and second["folders"] >= 1
        (workspace / "memory" / "2026-03-06.md").write_text("- The ibex moved to Chur.\n")
        event = json.loads(proc.stdout.readline())
        assert event["event"] == "sync" and event["report"]["indexed"] == 1 and event["error"] is None
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
