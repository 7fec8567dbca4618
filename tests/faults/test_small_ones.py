"""Small findings of the second attack run: over-long names, ranking of incremental indexes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import PathRefusedError
from openclaw_memory.langchain import memory_tools

NONE = {"embedding": {"provider": "none"}}


def test_an_over_long_file_name_is_a_refused_path_not_an_outage(workspace: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        with pytest.raises(PathRefusedError):
            memory.get("memory/" + "a" * 300 + ".md")
        message = memory_tools(memory)[1].invoke({"type": "tool_call", "id": "c", "name": "memory_get",
                                                  "args": {"path": "memory/" + "b" * 300 + ".md"}})
        assert message.status == "error" and "unavailable" not in message.content


def test_an_incrementally_updated_index_ranks_exactly_like_a_fresh_build(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    same = "- The billing export runs nightly at two.\n"
    names = [f"memory/2026-03-{d:02d}.md" for d in range(1, 13)]
    incremental = tmp_path / "inc.sqlite"
    with MemoryIndex.open(ws, index_path=incremental, **NONE) as memory:
        # Identical notes (tied scores) written, deleted and rewritten in a scrambled order.
        for name in reversed(names):
            (ws / name).write_text(same + f"- Note of {name}.\n")
            memory.sync()
        for name in names[::3]:
            (ws / name).unlink()
            memory.sync()
        for name in names[::3]:
            (ws / name).write_text(same + f"- Note of {name}.\n")
            memory.sync()
        queries = ["billing export", "nightly", "note", "two", "export nightly billing"]
        got = [[(h.path, h.start_line) for h in memory.search(q, max_results=12).results]
               for q in queries]
    shutil.copytree(ws, tmp_path / "ws2")
    with MemoryIndex.open(tmp_path / "ws2", index_path=tmp_path / "fresh.sqlite", **NONE) as fresh:
        want = [[(h.path, h.start_line) for h in fresh.search(q, max_results=12).results]
                for q in queries]
    assert got == want


def test_a_binary_file_named_md_is_skipped_with_a_reason(tmp_path: Path) -> None:
    import random

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    rng = random.Random(7)
    (ws / "memory" / "photo.md").write_bytes(bytes(rng.randrange(256) for _ in range(20_000)))
    (ws / "memory" / "stray-nul.md").write_bytes(b"- A text note with one \x00 stray byte.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        report = memory.sync()
        assert {s.path: s.reason for s in report.skipped} == {"memory/photo.md": "binary content, not text"}
        assert memory.search("stray").results  # text with a stray NUL is still indexed
        assert memory.store.query("select count(*) from chunks where path = 'memory/photo.md'")[0][0] == 0


def test_status_keeps_content_warnings_while_the_file_is_indexed_with_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    bad = ws / "memory" / "latin1.md"
    bad.write_bytes("- Caf\xe9 notes in Latin-1.\n".encode("latin-1"))
    (ws / "memory" / "nul.md").write_bytes(b"- one \x00 byte\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        memory.sync()
        (ws / "memory" / "other.md").write_text("- unrelated\n")
        memory.sync()  # the next sync reads neither file again
        warnings = memory.status()["warnings"]
        assert any("latin1.md: invalid UTF-8" in w for w in warnings)
        assert any("nul.md: NUL bytes" in w for w in warnings)
        bad.write_text("- Café notes, fixed.\n", encoding="utf-8")
        memory.sync()
        assert not any("latin1.md" in w for w in memory.status()["warnings"])


def _bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/self/io")
def test_get_of_one_line_does_not_read_a_huge_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    big = ws / "memory" / "big.md"
    with big.open("w") as handle:
        for i in range(1, 400_001):
            handle.write(f"- line {i} of a very large log that someone pasted into memory\n")
    assert big.stat().st_size > 20_000_000
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE,
                          sync={"on_search": False}) as memory:
        before = _bytes_read()
        note = memory.get("memory/big.md#L2")
        read = _bytes_read() - before
    assert note.text == "- line 2 of a very large log that someone pasted into memory"
    assert note.total_lines == -1  # not read to its end
    assert read < 1_000_000, read
