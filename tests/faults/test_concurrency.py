"""Two real processes on one workspace and one index: nothing lost, nothing half-written.

* A stale read: process A reads a file, B changes it and commits, then A commits its older
  read. A must notice (the file moved since A's read) and index the newer bytes.
* A watcher (the real ``openclaw-memory watch``) and an agent process that writes notes,
  rewrites a file whose every line carries its version, and searches all the while: no search
  sees two versions of one file, no call fails, and in the end every note is findable and the
  index equals a fresh full index.
* Two processes running ``sync()`` at once on a larger workspace: both succeed, nothing is
  duplicated, the result equals a fresh full index.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from faults.embedders import HashingEmbedder
from faults.indexstate import fresh_state, read_state
from faults.procs import run_child, start_child
from faults.workspaces import write_note, write_workspace
from openclaw_memory import MemoryIndex

NONE = {"embedding": {"provider": "none"}}
AGENT = Path(__file__).with_name("child_agent.py")


def test_a_sync_that_read_before_another_process_committed_indexes_the_newer_bytes(
        tmp_path: Path) -> None:
    ws, index = tmp_path / "ws", tmp_path / "i.sqlite"
    write_note(ws, "memory/n.md", 1)
    with MemoryIndex.open(ws, index_path=index, **NONE) as memory:
        memory.sync()
    write_note(ws, "memory/n.md", 2, lines=14)  # what A reads

    def while_a_waits_to_commit(info: dict[str, Any]) -> None:
        # A has read v2 and is about to take the write lock; B rewrites and commits v3.
        write_note(ws, "memory/n.md", 3, lines=16)
        b = run_child({"workspace": ws, "index": index, "kill": {"at": "never"}})
        assert b.returncode == 0, b.stderr
        assert b.report is not None and b.report["indexed"] == 1
        assert _versions(index) == {3}

    a = run_child({"workspace": ws, "index": index,
                   "kill": {"at": "sql", "match": "begin immediate", "n": 1, "resume": True}},
                  while_a_waits_to_commit)
    assert a.returncode == 0, a.stderr
    assert a.paused is not None
    # Without a check at commit time A's older read (v2) would replace B's v3 rows.
    assert _versions(index) == {3}
    assert read_state(index) == fresh_state(ws, tmp_path / "fresh.sqlite", **NONE)


def _versions(index: Path) -> set[int]:
    """The versions of ``memory/n.md`` whose lines are in the index."""
    chunks = read_state(index).chunks["memory/n.md"]
    return {int(v) for chunk in chunks for v in re.findall(r"\bn v(\d+)", chunk[5])}


def test_watcher_and_agent_processes_lose_nothing_and_never_mix_versions(tmp_path: Path) -> None:
    ws, index = tmp_path / "ws", tmp_path / "i.sqlite"
    write_workspace(ws, 6)
    write_note(ws, "memory/versioned.md", 1)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "openclaw_memory", "--workspace", str(ws), "--index", str(index),
         "--provider", "none", "watch", "--debounce-ms", "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watcher.stdout is not None
        started = [watcher.stdout.readline() for _ in range(2)]
        assert "watching" in started[1], [*started, watcher.stderr.read() if watcher.stderr else ""]
        agent = subprocess.run(
            [sys.executable, str(AGENT), json.dumps({"workspace": str(ws), "index": str(index),
                                                     "rounds": 24, "pause_s": 0.08})],
            capture_output=True, text=True, timeout=300)
        assert agent.returncode == 0, agent.stderr
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=60)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    assert watcher.returncode == 0, err
    syncs = [line for line in out.splitlines() if " sync (" in line]
    assert syncs and not [line for line in syncs if "failed" in line], out
    done = json.loads(next(line for line in agent.stdout.splitlines() if line.startswith("DONE "))[5:])
    assert done["errors"] == []
    assert len(done["notes"]) == 24
    saw_versions = [seen for seen in done["searches"] if seen]
    assert saw_versions, "no search ever found the versioned file"
    assert all(len(seen) == 1 for seen in saw_versions), saw_versions
    print(f"watcher syncs: {len(syncs)}, searches: {len(done['searches'])}, "
          f"versions seen: {sorted({v for seen in saw_versions for v in seen})}")

    with MemoryIndex.open(ws, index_path=index, **NONE) as memory:
        memory.sync()
        for word in done["notes"]:
            assert memory.search(word).results, word
    assert read_state(index) == fresh_state(ws, tmp_path / "fresh.sqlite", **NONE)


def test_two_processes_syncing_at_once_both_succeed_and_equal_a_fresh_index(
        tmp_path: Path) -> None:
    ws, index = tmp_path / "ws", tmp_path / "i.sqlite"
    rels = write_workspace(ws, 80, lines=16)
    spec = {"workspace": ws, "index": index, "embedder": "hashing", "kill": {"at": "never"}}
    procs = [start_child(spec) for _ in range(2)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        reports.append(json.loads(next(x for x in out.splitlines() if x.startswith("DONE "))[5:]))
    assert all(r["skipped"] == [] for r in reports)
    print("indexed by each process:", [r["indexed"] for r in reports])
    # Every file was indexed by one of them (or both: the second read replaces identical rows).
    assert max(r["indexed"] for r in reports) <= len(rels) <= sum(r["indexed"] for r in reports)
    state = read_state(index)  # also checks FTS and vector rows mirror the chunks: no duplicates
    assert state == fresh_state(ws, tmp_path / "fresh.sqlite", embedder=HashingEmbedder())
    assert sorted(state.files) == sorted(rels)
