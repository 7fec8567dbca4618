"""Property: any sequence of create/edit/delete/rename with syncs in between, followed by a
sync, gives exactly the index a fresh full index of the final files gives."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faults.indexstate import fresh_state, read_state
from openclaw_memory import MemoryIndex

# memory files, plus notes/ which is not memory: renames across it move files in and out.
NAMES = ["MEMORY.md", "memory/a.md", "memory/b.md", "memory/2026-03-01.md", "memory/sub/c.md",
         "notes/x.md", "notes/y.md"]
OPTS: dict[str, Any] = {"embedding": {"provider": "none"},
                        "chunking": {"tokens": 24, "overlap": 4}}
LINES = st.text(alphabet="abcdefgh xyzé🙂#-", min_size=0, max_size=30)
name = st.sampled_from(NAMES)
ops = st.one_of(
    st.tuples(st.just("write"), name, st.lists(LINES, max_size=12)),
    st.tuples(st.just("append"), name, LINES),
    st.tuples(st.just("truncate"), name, st.integers(0, 5)),
    st.tuples(st.just("same_size"), name, st.integers(0, 10_000)),
    st.tuples(st.just("delete"), name),
    st.tuples(st.just("rename"), name, name),
    st.tuples(st.just("sync")),
    st.tuples(st.just("age")),  # time passes: recorded stats become trustworthy
)


def _apply(ws: Path, op: tuple[Any, ...], memory: MemoryIndex, clock: list[int]) -> None:
    kind = op[0]
    path = ws / op[1] if len(op) > 1 else ws
    if kind == "sync":
        memory.sync()
    elif kind == "age":
        clock[0] -= 10**9
        for i, file in enumerate(sorted(ws.rglob("*.md"))):
            os.utime(file, ns=(clock[0] - i, clock[0] - i))
    elif kind == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in op[2]), encoding="utf-8")
    elif not path.exists():
        return
    elif kind == "append":
        with path.open("a", encoding="utf-8") as f:
            f.write(op[2] + "\n")
    elif kind == "truncate":
        lines = path.read_bytes().split(b"\n")
        path.write_bytes(b"\n".join(lines[: op[2]]))
    elif kind == "same_size":
        data = bytearray(path.read_bytes())
        if data:  # same bytes count, different content: only the hash can tell
            before = path.stat().st_mtime_ns
            i = op[2] % len(data)
            data[i] = ord("q") if data[i] != ord("q") else ord("r")
            path.write_bytes(bytes(data))
            if before >= time.time_ns() - 10**9:
                # Within the same second: on a file system with 1 s timestamps (HFS+, many
                # network mounts) the mtime does not move. Size and mtime then match the
                # index, and only a re-hash of "racy" entries can notice the edit.
                os.utime(path, ns=(before, before))
    elif kind == "delete":
        path.unlink()
    elif kind == "rename":
        target = ws / op[2]
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, min_size=1, max_size=25))
def test_any_edit_sequence_then_sync_equals_a_fresh_full_index(sequence: list[tuple[Any, ...]]
                                                                ) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        clock = [1_700_000_000 * 10**9]
        with MemoryIndex.open(ws, index_path=root / "live.sqlite", **OPTS) as memory:
            for op in sequence:
                _apply(ws, op, memory, clock)
            memory.sync()
        assert read_state(root / "live.sqlite") == fresh_state(ws, root / "fresh.sqlite", **OPTS)
