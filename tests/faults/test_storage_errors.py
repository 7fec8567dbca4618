"""A storage failure is one clear line on stderr and exit 3, never a SQLite or OS traceback."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from privileges import _call_as, nobody_uid

from openclaw_memory.cli.app import main


def _run(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(args))
    return code, err.getvalue()


def _assert_one_clear_line(code: int, err: str) -> None:
    assert code == 3, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("openclaw-memory: error: ")


def test_an_index_path_below_a_file_is_one_line_and_exit_3(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, err = _run("--sample", "--provider", "none", "--index", str(blocker / "x.sqlite"), "index")
    _assert_one_clear_line(code, err)
    assert "cannot create the index" in err


@pytest.mark.skipif(os.geteuid() != 0 or nobody_uid() is None, reason="needs root to drop to nobody")
def test_an_index_in_a_read_only_folder_is_one_line_and_exit_3() -> None:
    top = Path(tempfile.mkdtemp(prefix="ocm-ro-"))
    try:
        top.chmod(0o555)  # nobody may enter, not write
        uid = nobody_uid()
        assert uid is not None
        code, err = _call_as(uid, lambda: _run("--sample", "--provider", "none", "--index",
                                               str(top / "x.sqlite"), "index"))
        _assert_one_clear_line(code, err)
    finally:
        shutil.rmtree(top)
