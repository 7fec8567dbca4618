"""Incremental sync, safe rebuilds and bad input, on real SQLite files and real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fs_snapshot import snapshot

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import StoreError
from openclaw_memory.files.workspace import Workspace


def _open(ws: Path, tmp_path: Path, **overrides: object) -> MemoryIndex:
    overrides.setdefault("embedding", {"provider": "none"})
    return MemoryIndex.open(ws, index_path=tmp_path / "index.sqlite", **overrides)


def test_first_sync_indexes_every_memory_file(workspace: Path, tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as memory:
        report = memory.sync()
        assert (report.scanned, report.indexed, report.unchanged) == (4, 4, 0)
        assert memory.status()["files"] == 4


def test_unchanged_files_cost_only_a_stat(workspace: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Files written within seconds of the sync are re-hashed (racy stats, see
    # tests/faults/test_racy_stat.py); these were last written an hour ago.
    for path in workspace.rglob("*.md"):
        os.utime(path, (path.stat().st_atime, path.stat().st_mtime - 3600))
    with _open(workspace, tmp_path) as memory:
        memory.sync()
        reads: list[str] = []
        original = Workspace.read_bytes
        def counting(self: Workspace, resolved: object) -> bytes | None:
            reads.append(str(resolved))
            return original(self, resolved)  # type: ignore[arg-type]
        monkeypatch.setattr(Workspace, "read_bytes", counting)
        generation = memory.store.generation()
        report = memory.sync()
        assert report.unchanged == 4 and report.indexed == 0
        assert reads == []
        # Nothing changed, so every reader's postings, term counts and vectors still hold:
        # recording when the sync ran is no change of the index.
        assert memory.store.generation() == generation
        assert memory.status()["last_sync_at"] is not None


def test_touched_but_identical_file_is_not_reindexed(workspace: Path, tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as memory:
        memory.sync()
        path = workspace / "MEMORY.md"
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
        report = memory.sync()
        assert report.indexed == 0 and report.unchanged == 4
        assert memory.sync().unchanged == 4  # the new mtime was recorded


def test_edit_reembeds_only_new_chunk_texts(workspace: Path, tmp_path: Path) -> None:
    big = "\n".join(f"- note {i}: the quarterly report mentions topic {i}." for i in range(120))
    (workspace / "memory" / "long.md").write_text(big + "\n", encoding="utf-8")
    with _open(workspace, tmp_path, embedding={"provider": "local"}) as memory:
        first = memory.sync()
        assert first.embedded == first.chunks_added
        with (workspace / "memory" / "long.md").open("a", encoding="utf-8") as f:
            f.write("- a brand new note at the end.\n")
        second = memory.sync()
        assert second.indexed == 1
        assert second.cache_hits > 0
        assert second.embedded < second.chunks_added


def test_deleted_file_loses_its_rows(workspace: Path, tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as memory:
        memory.sync()
        (workspace / "memory" / "topics.md").unlink()
        report = memory.sync()
        assert report.deleted == 1 and report.chunks_removed >= 1
        assert memory.search("coffee dark roast").results == ()


def test_indexing_never_modifies_the_markdown(workspace: Path, tmp_path: Path) -> None:
    before = snapshot(workspace)
    with _open(workspace, tmp_path, embedding={"provider": "local"}) as memory:
        memory.sync()
        memory.sync(full=True)
        memory.search("billing")
    assert snapshot(workspace) == before


def test_fingerprint_change_rebuilds_and_reuses_the_embedding_cache(workspace: Path,
                                                                    tmp_path: Path) -> None:
    with _open(workspace, tmp_path, embedding={"provider": "local"}) as memory:
        chunks = memory.sync().chunks_added
    with _open(workspace, tmp_path, embedding={"provider": "local"},
               store={"fts_tokenizer": "unicode61"}) as memory:
        report = memory.sync()
        assert report.full_rebuild and "fts_tokenizer" in (report.rebuild_reason or "")
        assert report.embedded == 0 and report.cache_hits == chunks
        assert memory.search("PostgreSQL").results


def test_chunking_change_triggers_a_full_rebuild(workspace: Path, tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as memory:
        memory.sync()
    with _open(workspace, tmp_path, chunking={"tokens": 50, "overlap": 10}) as memory:
        report = memory.sync()
        assert report.full_rebuild and "chunk_tokens" in (report.rebuild_reason or "")
        assert memory.sync().full_rebuild is False


def test_index_rebuilt_from_files_alone_gives_the_same_hits(workspace: Path,
                                                           tmp_path: Path) -> None:
    with _open(workspace, tmp_path) as memory:
        memory.sync()
        before = memory.search("invoice renderer Frankfurt").as_dict()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'index.sqlite'}{suffix}").unlink(missing_ok=True)
    with _open(workspace, tmp_path) as memory:
        assert memory.search("invoice renderer Frankfurt").as_dict() == before


def test_bad_files_are_indexed_or_skipped_with_a_reason(workspace: Path, tmp_path: Path) -> None:
    mem = workspace / "memory"
    (mem / "latin1.md").write_bytes("caf\xe9 notes about espresso\n".encode("latin-1"))
    (mem / "nul.md").write_bytes(b"before\x00after zeppelin\n")
    (mem / "huge.md").write_bytes(b"x" * 2000)
    (mem / "link.md").symlink_to(workspace / "MEMORY.md")
    (mem / "deep" / "er" / "still").mkdir(parents=True)
    (mem / "deep" / "er" / "still" / "nested note ü.md").write_text("nested zebra\n")
    with _open(workspace, tmp_path, sync={"max_file_bytes": 1000}) as memory:
        report = memory.sync()
        skipped = {s.path: s.reason for s in report.skipped}
        assert "memory/huge.md" in skipped and "memory/link.md" in skipped
        assert any("invalid UTF-8" in w for w in report.warnings)
        assert any("NUL" in w for w in report.warnings)
        assert memory.search("espresso").results
        assert memory.search("zeppelin").results
        assert memory.search("zebra").results[0].path == "memory/deep/er/still/nested note ü.md"
        assert memory.status()["skipped"]


def test_index_inside_memory_folder_is_refused(workspace: Path) -> None:
    from openclaw_memory.errors import OpenClawMemoryError

    with pytest.raises(OpenClawMemoryError, match="must not live inside"):
        MemoryIndex.open(workspace, index_path=workspace / "memory" / "i.sqlite")


def test_garbage_at_an_index_path_the_library_did_not_create_is_refused_untouched(
        workspace: Path, tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite"
    index.write_bytes(b"garbage" * 1000)
    with pytest.raises(StoreError, match="not an openclaw-memory index"):
        _open(workspace, tmp_path)
    assert index.read_bytes() == b"garbage" * 1000
    assert not list(tmp_path.glob("index.sqlite.corrupt-*"))


def test_front_matter_is_not_indexed_but_line_numbers_hold(workspace: Path,
                                                           tmp_path: Path) -> None:
    (workspace / "memory" / "fm.md").write_text(
        '---\n{"secret_tag": "hidden"}\n---\nvisible walrus text\n', encoding="utf-8")
    with _open(workspace, tmp_path) as memory:
        assert memory.search("hidden secret_tag").results == ()
        hit = memory.search("walrus").results[0]
        assert (hit.path, hit.start_line, hit.end_line) == ("memory/fm.md", 4, 4)
