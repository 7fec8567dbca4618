"""Run part of a test as ``nobody`` when the tests run as root (root ignores file permissions).

``unprivileged_copy(tree)`` yields a copy of ``tree`` that the unprivileged user owns (outside
pytest's root-only temporary folders) and a ``run(fn)`` that calls ``fn`` as that user in a
forked child and returns its (picklable) result. Not root: the tree itself, and ``fn`` runs
here. Files made after the copy stay root's, so ``chmod 0`` on them locks ``nobody`` out.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import pwd
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["CAN_TEST_PERMISSIONS", "nobody_uid", "unprivileged_copy"]


def nobody_uid() -> int | None:
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return None


#: Permission errors can be provoked: either not root, or root with a user to drop to.
CAN_TEST_PERMISSIONS = os.geteuid() != 0 or nobody_uid() is not None


def _call_as(uid: int, fn: Callable[[], Any]) -> Any:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop privileges, run, send back the result or the traceback
        os.close(read_end)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            payload = pickle.dumps((True, fn()))
        except BaseException:
            payload = pickle.dumps((False, traceback.format_exc()))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        data = inp.read()
    os.waitpid(pid, 0)
    ok, value = pickle.loads(data)
    if not ok:
        raise AssertionError(f"as uid {uid}:\n{value}")
    return value


@contextlib.contextmanager
def unprivileged_copy(tree: Path) -> Iterator[tuple[Path, Callable[[Callable[[], Any]], Any]]]:
    uid = nobody_uid()
    if os.geteuid() != 0 or uid is None:
        yield tree, lambda fn: fn()
        return
    sandbox = Path(tempfile.mkdtemp(prefix="ocm-nobody-"))
    try:
        sandbox.chmod(0o755)
        copy = sandbox / tree.name
        shutil.copytree(tree, copy, symlinks=True)
        for path in [copy, *copy.rglob("*")]:
            os.lchown(path, uid, uid)
        yield copy, lambda fn: _call_as(uid, fn)
    finally:
        shutil.rmtree(sandbox)
