"""Watch the memory files with ``watchfiles`` and report changes after a debounce.

What is watched is exactly what is indexed: the workspace root (for ``MEMORY.md``/``memory.md``
and for ``memory/`` appearing), every folder below ``memory/`` and below extra folders, the parent
of each extra file, and the sessions folder when transcripts are indexed. Each folder is watched
**non-recursively** and the list is built by our own walk, which skips the folders discovery
skips (``.git``, ``node_modules``, virtualenvs, ...) and never follows symlinks. Watching the
workspace root recursively instead would put an inotify watch on every folder of an agent's
home (``node_modules`` alone can hold tens of thousands), exhausting ``max_user_watches``.

One ``watchfiles`` notifier (one inotify descriptor, whatever the number of files) serves
all folders.
When a watched folder gains or loses a folder that matters (``memory/`` created, a subfolder
added or removed, an extra path appearing), the folder list is rebuilt and the notifier
restarted; the change itself also marks the index dirty, so files that arrived with a moved-in
folder are indexed by the sync that follows.

Debounce: a change calls ``on_change`` at once (the index marks itself dirty) and ``on_settled``
once no relevant change has arrived for ``debounce_ms`` (OpenClaw's 1 500 ms), or at the latest
``max_wait_ms`` after the first pending change, so a transcript appended to every second is still
indexed regularly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watchfiles import Change, watch

from openclaw_memory.errors import WatchError
from openclaw_memory.files.workspace import IGNORED_DIR_NAMES, Workspace

__all__ = ["DEFAULT_DEBOUNCE_MS", "MemoryWatcher", "WatchPlan", "build_plan"]

logger = logging.getLogger(__name__)

DEFAULT_DEBOUNCE_MS = 1500
_IGNORED = IGNORED_DIR_NAMES | {".pnpm-store"}
_ROOT_FILES = ("MEMORY.md", "memory.md")
_STEP_MS = 50
# How often the thread wakes without events, to fire a due settle and to see a stop request.
_TICK_MS = 100


@dataclass(frozen=True, slots=True)
class WatchPlan:
    """The folders to watch (each non-recursively) and how to read their events."""

    directories: tuple[str, ...]
    trees: tuple[str, ...]
    """Existing folders whose ``.md`` files count at any depth (``memory/``, extra folders)."""
    files: frozenset[str]
    """Exact files that count (root ``MEMORY.md``/``memory.md``, extra files)."""
    flat: tuple[tuple[str, str], ...]
    """(folder, suffix): files directly in the folder with the suffix (sessions, ``.jsonl``)."""
    anchors: frozenset[str]
    """Wanted paths and their ancestors up to the root: a change there may alter the plan."""

    def relevant(self, path: str) -> bool:
        """A change to ``path`` changes what is indexed."""
        if path in self.files:
            return True
        for tree in self.trees:
            if path.startswith(tree + os.sep) and path.endswith(".md"):
                below = path[len(tree) + 1:].split(os.sep)
                return not any(part in _IGNORED for part in below[:-1])
        return any(os.path.dirname(path) == folder and path.endswith(suffix)
                   for folder, suffix in self.flat)

    def structural(self, path: str) -> bool:
        """A change to ``path`` may add or remove a folder we watch (or should watch)."""
        if path in self.anchors:
            return True
        return any(path.startswith(tree + os.sep) and not path.endswith(".md")
                   for tree in self.trees)


def _walk_dirs(top: str) -> list[str]:
    """``top`` and every folder below it, minus ignored names and symlinks."""
    found: list[str] = []
    stack = [top]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if entry.name in _IGNORED:
                        continue
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                    except OSError:
                        continue  # vanished or unreadable: nothing of it is indexed either
        except OSError:
            continue
    return found


def _existing_ancestor(path: Path, stop: Path) -> str | None:
    """The nearest existing real folder at or above ``path``, no higher than ``stop``'s parent."""
    for candidate in (path, *path.parents):
        if candidate.is_dir() and not candidate.is_symlink():
            return str(candidate)
        if candidate == stop.parent:
            return None
    return None


def _lineage(path: Path) -> Iterable[str]:
    yield str(path)
    for parent in path.parents:
        yield str(parent)


def build_plan(workspace: Workspace) -> WatchPlan:
    """The watch plan for ``workspace`` as it is on disk now."""
    root = workspace.root
    directories: list[str] = [str(root)] if root.is_dir() else []
    trees: list[str] = []
    files = {str(root / name) for name in _ROOT_FILES}
    flat: list[tuple[str, str]] = []
    wanted: list[Path] = [root / "memory", *(root / name for name in _ROOT_FILES)]

    def want_dir(path: Path, *, tree: bool, suffix: str = ".md") -> None:
        wanted.append(path)
        if path.is_dir() and not path.is_symlink():
            if tree:
                trees.append(str(path))
                directories.extend(_walk_dirs(str(path)))
            else:
                flat.append((str(path), suffix))
                directories.append(str(path))
        elif (ancestor := _existing_ancestor(path.parent, root)) is not None:
            directories.append(ancestor)  # to notice the folder appearing

    want_dir(root / "memory", tree=True)
    for extra in workspace.extra_paths:
        if extra.suffix.lower() == ".md" and not extra.is_dir():
            wanted.append(extra)
            files.add(str(extra))
            if (ancestor := _existing_ancestor(extra.parent, root)) is not None:
                directories.append(ancestor)
        else:
            want_dir(extra, tree=True)
    if workspace.sessions_dir is not None:
        want_dir(workspace.sessions_dir, tree=False, suffix=".jsonl")
    anchors = {p for path in wanted for p in _lineage(path)}
    return WatchPlan(directories=tuple(dict.fromkeys(directories)), trees=tuple(trees),
                     files=frozenset(files), flat=tuple(flat), anchors=frozenset(anchors))


Listener = Callable[[tuple[str, ...]], None]


class MemoryWatcher:
    """A daemon thread watching one workspace (see the module docstring).

    ``on_change(paths)`` runs in the watcher thread as soon as changes arrive; ``on_settled()``
    once they have settled. Exceptions from either are logged and counted, never fatal.
    Use as a context manager, or :meth:`start` / :meth:`stop`.
    """

    def __init__(self, workspace: Workspace, *, on_change: Listener,
                 on_settled: Callable[[], None], debounce_ms: int = DEFAULT_DEBOUNCE_MS,
                 max_wait_ms: int | None = None, force_polling: bool = False,
                 poll_delay_ms: int = 300) -> None:
        self.workspace = workspace
        self.debounce_ms = max(0, debounce_ms)
        self.max_wait_ms = max_wait_ms if max_wait_ms is not None else max(
            10 * self.debounce_ms, 1000)
        self.force_polling = force_polling
        self.poll_delay_ms = poll_delay_ms
        self._on_change = on_change
        self._on_settled = on_settled
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="openclaw-memory-watch",
                                        daemon=True)
        self._first: float | None = None
        self._last: float | None = None
        self.plan: WatchPlan | None = None
        self.events = 0
        self.settled = 0
        self.restarts = 0
        self.callback_errors = 0
        self.last_event_at: float | None = None
        self.last_paths: tuple[str, ...] = ()
        self.error: str | None = None
        self.started_at: float | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> MemoryWatcher:
        """Start watching; returns once the folders are watched (raises :class:`WatchError`)."""
        self.started_at = time.time()
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise WatchError(f"the watcher did not start within {timeout:.0f}s")
        if self.error is not None:
            self.stop()
            raise WatchError(self.error)
        return self

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop watching and join the thread (pending, unsettled changes stay marked dirty)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set()

    def __enter__(self) -> MemoryWatcher:
        return self.start() if not self._thread.is_alive() else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def status(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "running": self.running,
            "backend": "polling" if self.force_polling else "native",
            "directories": len(plan.directories) if plan else 0,
            "debounce_ms": self.debounce_ms,
            "started_at": self.started_at,
            "events": self.events,
            "settled": self.settled,
            "restarts": self.restarts,
            "pending": self._first is not None,
            "last_event_at": self.last_event_at,
            "last_paths": list(self.last_paths),
            "callback_errors": self.callback_errors,
            "error": self.error,
        }

    # -- the thread -------------------------------------------------------------------------
    def _changes(self, plan: WatchPlan) -> Generator[set[tuple[Change, str]], None, None]:
        """Batches of raw changes, and an empty batch every tick without any."""
        if not self.workspace.root.is_dir():
            raise WatchError(f"workspace {self.workspace.root} is not a directory")
        try:
            yield from watch(
                *plan.directories, watch_filter=None, debounce=max(self.debounce_ms, _STEP_MS),
                step=_STEP_MS, stop_event=self._stop, rust_timeout=_TICK_MS,
                yield_on_timeout=True, raise_interrupt=False, force_polling=self.force_polling,
                poll_delay_ms=self.poll_delay_ms, recursive=False, ignore_permission_denied=True)
        except (OSError, RuntimeError) as exc:
            raise WatchError(
                f"cannot watch {len(plan.directories)} folders: {exc} (raise "
                "fs.inotify.max_user_watches, or use polling)") from exc

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                plan = build_plan(self.workspace)
                self.plan = plan
                with contextlib.closing(self._changes(plan)) as batches:
                    self._pump(batches, plan)
        except Exception as exc:  # the reason is kept for status() and start()
            self.error = f"{type(exc).__name__}: {exc}"
            logger.error("memory watcher stopped: %s", self.error, exc_info=True)
        finally:
            self._ready.set()

    def _pump(self, batches: Iterator[set[tuple[Change, str]]], plan: WatchPlan) -> None:
        """Handle events until stopped, or until the folder list must change (then return)."""
        for raw in batches:
            # The notifier exists once the first batch (or tick) arrives: now we are watching.
            self._ready.set()
            if raw:
                changed = self._relevant(plan, raw)
                replan = any(plan.structural(path) for _, path in raw)
                new_plan = build_plan(self.workspace) if replan else plan
                if new_plan != plan:
                    # A folder appeared or vanished: its files may have come or gone with it.
                    changed.append("(folders changed)")
                if changed:
                    self._changed(tuple(changed))
                if new_plan != plan:
                    self.restarts += 1
                    self._settle_if_due()
                    return
            self._settle_if_due()

    def _relevant(self, plan: WatchPlan, raw: set[tuple[Change, str]]) -> list[str]:
        return sorted({path for kind, path in raw
                       if kind in (Change.added, Change.modified, Change.deleted)
                       and plan.relevant(path)})

    def _due_at(self) -> float | None:
        if self._first is None or self._last is None:
            return None
        return min(self._last + self.debounce_ms / 1000, self._first + self.max_wait_ms / 1000)

    def _changed(self, paths: tuple[str, ...]) -> None:
        now = time.monotonic()
        self._first = self._first if self._first is not None else now
        self._last = now
        self.events += 1
        self.last_event_at = time.time()
        self.last_paths = paths[:10]
        self._call(self._on_change, paths)

    def _settle_if_due(self) -> None:
        due = self._due_at()
        if due is None or time.monotonic() < due:
            return
        self._first = self._last = None
        self.settled += 1
        self._call(self._on_settled)

    def _call(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            callback(*args)
        except Exception:  # e.g. a closed index: keep watching, the next change retries
            self.callback_errors += 1
            logger.exception("memory watcher callback failed")
