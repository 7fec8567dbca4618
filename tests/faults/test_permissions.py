"""Files and folders the syncing user may not read are skipped with a counted reason.

Root reads anything, so under root the sync runs in a child process that drops its
privileges to ``nobody`` (the fault suite's ``child_sync.py`` with ``user``); otherwise the
files are simply made unreadable to the current user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from faults.procs import run_child
from faults.workspaces import write_note

UNREADABLE = "unreadable: permission denied"


def _nobody() -> int | None:
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return None


@pytest.fixture
def sandbox() -> Iterator[tuple[Path, int | None]]:
    """A folder the syncing user owns, and the uid to sync as (None: the current user)."""
    if os.geteuid() != 0:
        path = Path(tempfile.mkdtemp())
        yield path, None
    else:
        uid = _nobody()
        if uid is None:
            pytest.skip("running as root and there is no 'nobody' user to drop privileges to")
        # Not under pytest's tmp_path: its parents are private to root.
        path = Path(tempfile.mkdtemp(prefix="ocm-perm-"))
        path.chmod(0o755)
        yield path, uid
    for locked in path.rglob("*"):
        if not locked.is_symlink():
            locked.chmod(0o700)
    shutil.rmtree(path)


def _give(path: Path, uid: int | None) -> None:
    if uid is not None:
        for sub in [path, *path.rglob("*")]:
            os.chown(sub, uid, uid)


def test_unreadable_file_and_folder_are_skipped_counted_and_reported(
        sandbox: tuple[Path, int | None]) -> None:
    root, uid = sandbox
    ws, index_dir = root / "ws", root / "index"
    for rel in ("MEMORY.md", "memory/2026-03-01.md", "memory/topics/ok.md",
                "memory/secret.md", "memory/locked/hidden.md"):
        write_note(ws, rel, 1)
    index_dir.mkdir()
    _give(root, uid)
    (ws / "memory" / "secret.md").chmod(0)  # owned by root (or us): nobody may read it
    (ws / "memory" / "locked").chmod(0)
    if uid is None and os.access(ws / "memory" / "secret.md", os.R_OK):
        pytest.skip("permissions are not enforced here (neither root nor a normal user?)")

    child = run_child({"workspace": ws, "index": index_dir / "i.sqlite", "user": uid,
                       "status": True, "kill": {"at": "never"}})

    assert child.returncode == 0, child.stderr
    assert child.report is not None and child.status is not None
    skipped = {(s["path"], s["reason"]) for s in child.report["skipped"]}
    assert skipped == {("memory/secret.md", UNREADABLE), ("memory/locked", UNREADABLE)}
    assert child.report["indexed"] == 3
    assert {(s["path"], s["reason"]) for s in child.status["skipped"]} == skipped
    assert child.status["files"] == 3
