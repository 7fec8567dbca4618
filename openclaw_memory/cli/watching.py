"""``openclaw-memory watch``: sync once, then keep the index in line with the files.

Prints one line per sync on stdout (flushed, so a pipe or a log sees it at once). Ctrl-C
(SIGINT) stops it with exit code 130, like every interrupted command; SIGTERM is an ordinary
shutdown (a service manager stopping it) and exits 0. Either way the watcher is stopped, a
running sync is cancelled between files (each file is its own transaction, so nothing is left
half-indexed) and the index is closed.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.freshness.triggers import SyncOutcome
from openclaw_memory.index import MemoryIndex
from openclaw_memory.types import SyncReport

__all__ = ["add_watch_parser", "cmd_watch", "describe_sync"]


def add_watch_parser(sub: Any) -> None:
    w = sub.add_parser("watch", help="sync, then re-sync whenever the memory files change")
    w.add_argument("--debounce-ms", type=int, default=None,
                   help="quiet time before a sync (default: sync.watch_debounce_ms, 1500)")
    w.add_argument("--poll", action="store_true",
                   help="poll instead of inotify (network file systems, exhausted watches)")
    w.add_argument("--json", action="store_true",
                   help="one JSON object per event (JSON lines) instead of text")


def describe_sync(report: SyncReport) -> str:
    text = (f"{report.indexed} indexed, {report.deleted} deleted, {report.unchanged} unchanged, "
            f"{report.chunks_added} chunks added in {report.duration_s:.2f}s")
    if report.full_rebuild:
        text = f"rebuilt ({report.rebuild_reason}): " + text
    if report.skipped:
        text += f", {len(report.skipped)} skipped"
    return text


def _stamp() -> str:
    return time.strftime("%H:%M:%S")


def _printer(as_json: bool) -> Callable[[SyncOutcome], None]:
    def show(outcome: SyncOutcome) -> None:
        why = ", ".join(outcome.reasons)
        if as_json:
            if outcome.report is not None or not outcome.cancelled:
                _event("sync", reasons=list(outcome.reasons),
                       report=outcome.report.as_dict() if outcome.report else None,
                       error=None if outcome.report is not None else str(outcome.error))
        elif outcome.report is not None:
            print(f"{_stamp()} sync ({why}): {describe_sync(outcome.report)}", flush=True)
        elif not outcome.cancelled:
            print(f"{_stamp()} sync ({why}) failed: {outcome.error}", flush=True)

    return show


def _event(kind: str, **fields: Any) -> None:
    print(json.dumps({"event": kind, "at": time.time(), **fields}, ensure_ascii=False), flush=True)


def _on_sigterm(stop: threading.Event) -> Callable[[int, FrameType | None], None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()
    return handler


def cmd_watch(memory: MemoryIndex, args: argparse.Namespace,
              progress: Callable[[int, int, str], None] | None = None) -> None:
    as_json = bool(getattr(args, "json", False))
    report = memory.sync(progress=None if as_json else progress)
    if as_json:
        _event("initial_sync", report=report.as_dict())
    else:
        print(f"{_stamp()} initial sync: {describe_sync(report)}", flush=True)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, _on_sigterm(stop))
    try:
        watcher = memory.watch(on_sync=_printer(as_json), force_polling=args.poll,
                               debounce_ms=args.debounce_ms)
        folders = len(watcher.plan.directories) if watcher.plan else 0
        if as_json:
            _event("watching", folders=folders, root=str(memory.workspace.root),
                   debounce_ms=watcher.debounce_ms)
        else:
            print(f"{_stamp()} watching {folders} folder(s) of {memory.workspace.root} "
                  f"(debounce {watcher.debounce_ms} ms); Ctrl-C to stop", flush=True)
        while not stop.wait(0.5):
            if not watcher.running:
                raise OpenClawMemoryError(f"the watcher stopped: {watcher.error}")
    finally:
        signal.signal(signal.SIGTERM, previous)
    memory.close()  # idempotent in effect: stops the watcher and joins a running sync
    print(f"{_stamp()} stopped", file=sys.stderr, flush=True)
