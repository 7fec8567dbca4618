"""Odd files are indexed or skipped with a counted, reported reason; the sync never hangs."""

from __future__ import annotations

import os
import socket
import unicodedata
from pathlib import Path

from openclaw_memory import MemoryIndex

NONE = {"embedding": {"provider": "none"}}


def test_fifo_socket_dir_named_md_and_odd_names(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    mem = ws / "memory"
    mem.mkdir(parents=True)
    os.mkfifo(mem / "pipe.md")  # opening it for reading would block forever
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(mem / "sock.md"))
    (mem / "dir.md").mkdir()
    (mem / "dir.md" / "inner.md").write_text("inside a folder named like a note: okapi\n")
    (mem / "with space é.md").write_text("spaced name: narwhal\n")
    (mem / unicodedata.normalize("NFD", "café-nfd.md")).write_text("decomposed: quokka\n")
    (mem / "🦜 emoji.md").write_text("emoji name: parrot\n")
    deep = mem.joinpath(*[f"d{i}" for i in range(60)])
    deep.mkdir(parents=True)
    (deep / "bottom.md").write_text("sixty folders down: axolotl\n")
    (mem / "big.md").write_bytes(b"- filler line\n" * (50 * 1024 * 1024 // 14))
    try:
        with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
            report = memory.sync()
            skipped = {s.path: s.reason for s in report.skipped}
            for word in ("okapi", "narwhal", "quokka", "parrot", "axolotl"):
                assert memory.search(word).results, word
            assert set(skipped) == {"memory/pipe.md", "memory/sock.md", "memory/big.md"}
            assert "large" in skipped["memory/big.md"]
            assert {s["path"] for s in memory.status()["skipped"]} == set(skipped)
    finally:
        sock.close()


def test_file_vanishing_mid_sync_is_skipped_and_removed_next_time(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (ws / "memory" / f"{name}.md").write_text(f"note {name} ibis\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **NONE) as memory:
        def delete_next(i: int, _total: int, path: str) -> None:
            if path == "memory/a.md":
                (ws / "memory" / "b.md").unlink()  # discovered, gone before it is read
        report = memory.sync(progress=delete_next)
        assert [(s.path, s.reason) for s in report.skipped] == [
            ("memory/b.md", "vanished during sync")]
        assert memory.sync().deleted == 0  # never indexed: nothing to delete
        assert {h.path for h in memory.search("ibis").results} == {"memory/a.md", "memory/c.md"}
