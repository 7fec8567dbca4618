"""A note is never reported as saved when it will not be searchable: front matter only where a
person would write it, a bound on a note's size, and no append past the indexing limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ContentError
from openclaw_memory.files.notes import MAX_NOTE_BYTES, daily_note_path


def _open(ws: Path, tmp_path: Path, **settings: object) -> MemoryIndex:
    return MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"},
                            timezone="UTC", **settings)


def test_a_rule_then_notes_then_dots_is_content_not_front_matter(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    with _open(ws, tmp_path) as memory:
        memory.write("---\nSprint review notes follow.")
        memory.write("The walrus migration finished on Tuesday.")
        memory.write("...")
        hits = memory.search("walrus migration").results
        assert hits and hits[0].path == daily_note_path("UTC")


def test_real_front_matter_is_still_left_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "topic.md").write_text("---\ntags: [private]\nsecret_tag: zebra\n---\n"
                                            "Visible narwhal text.\n")
    with _open(ws, tmp_path) as memory:
        assert memory.search("zebra secret_tag").results == ()
        assert memory.search("narwhal").results[0].start_line == 5


def test_an_oversized_note_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    with _open(ws, tmp_path) as memory, pytest.raises(ContentError, match="at most"):
        memory.write("x" * (MAX_NOTE_BYTES + 1))
    assert not (ws / daily_note_path("UTC")).exists()


def test_no_append_past_the_indexing_limit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    daily = ws / daily_note_path("UTC")
    with _open(ws, tmp_path, sync={"max_file_bytes": 2_000}) as memory:
        memory.write("- " + "filler words " * 100)
        before = daily.read_bytes()
        with pytest.raises(ContentError, match="largest file that is indexed"):
            memory.write("- " + "more filler words " * 60)
        assert daily.read_bytes() == before
        assert memory.search("filler").results  # the file is still indexed and searchable
