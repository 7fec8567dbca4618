"""Private memory stays private: what the library creates is owner-only (files 0600, folders
0700) under the usual 022 umask, an existing file keeps its mode on append, and another local
account (uid 65534, when the tests run as root) can read none of it."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from privileges import _call_as, nobody_uid

from openclaw_memory import MemoryIndex
from openclaw_memory.files.notes import daily_note_path


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture()
def sandbox() -> Iterator[Path]:
    # Outside pytest's own temporary folders (root-only), with a world-traversable top, so
    # only the modes the library sets decide what another account can read.
    old = os.umask(0o022)
    top = Path(tempfile.mkdtemp(prefix="ocm-private-"))
    top.chmod(0o755)
    try:
        yield top
    finally:
        os.umask(old)
        shutil.rmtree(top)


def test_what_the_library_creates_is_owner_only(sandbox: Path) -> None:
    ws = sandbox / "ws"
    ws.mkdir()
    ws.chmod(0o755)
    index = sandbox / "state" / "indexes" / "i.sqlite"
    with MemoryIndex.open(ws, index_path=index, embedding={"provider": "none"}, timezone="UTC") as memory:
        memory.write("Decided to keep the nightly export at 02:00 UTC.")
        memory.write("The user prefers tea.", target="memory")
        memory.sync()
        daily = ws / daily_note_path("UTC")
        created = [index, index.with_name("i.sqlite-wal"), daily, ws / "MEMORY.md"]
        for path in created:
            assert _mode(path) == 0o600, (path, oct(_mode(path)))
        for folder in (sandbox / "state", index.parent, ws / "memory"):
            assert _mode(folder) == 0o700, (folder, oct(_mode(folder)))
        uid = nobody_uid()
        if os.geteuid() == 0 and uid is not None:
            def try_read() -> list[str]:
                refused = []
                for path in created:
                    try:
                        path.read_bytes()
                    except PermissionError:
                        refused.append(path.name)
                return refused
            assert len(_call_as(uid, try_read)) == len(created)


def test_an_existing_file_keeps_its_mode_on_append(sandbox: Path) -> None:
    ws = sandbox / "ws"
    (ws / "memory").mkdir(parents=True)
    daily = ws / daily_note_path("UTC")
    daily.write_text("# today\n")
    daily.chmod(0o640)
    with MemoryIndex.open(ws, index_path=sandbox / "i.sqlite", embedding={"provider": "none"},
                          timezone="UTC") as memory:
        memory.write("A shared note.")
    assert _mode(daily) == 0o640 and "A shared note." in daily.read_text()
