"""A same-size rewrite within one timestamp tick of a sync is still picked up (racy stats)."""

from __future__ import annotations

import os
from pathlib import Path

from openclaw_memory import MemoryIndex

NONE = {"embedding": {"provider": "none"}}


def test_same_size_rewrite_with_an_unchanged_mtime_is_reindexed(tmp_path: Path) -> None:
    note = tmp_path / "ws" / "memory" / "n.md"
    note.parent.mkdir(parents=True)
    note.write_text("the walrus sings\n", encoding="utf-8")
    with MemoryIndex.open(tmp_path / "ws", index_path=tmp_path / "i.sqlite", **NONE) as memory:
        memory.sync()
        stat = note.stat()
        note.write_text("the pelican naps\n", encoding="utf-8")  # same size
        os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same tick: mtime unmoved
        report = memory.sync()
        assert report.indexed == 1
        assert memory.search("pelican").results
        assert not memory.search("walrus").results


def test_old_files_still_cost_only_a_stat(tmp_path: Path) -> None:
    note = tmp_path / "ws" / "MEMORY.md"
    note.parent.mkdir(parents=True)
    note.write_text("the walrus sings\n", encoding="utf-8")
    os.utime(note, (note.stat().st_atime, note.stat().st_mtime - 60))
    with MemoryIndex.open(tmp_path / "ws", index_path=tmp_path / "i.sqlite", **NONE) as memory:
        memory.sync()
        before = memory.store.files()["MEMORY.md"].indexed_at
        assert memory.sync().unchanged == 1
        assert memory.store.files()["MEMORY.md"].indexed_at == before  # not even re-read
