"""``openclaw-memory edit``, ``forget`` and ``history``: correcting curated memory by hand
or from scripts, with the same concurrency check and history as the agent's ``memory_edit``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.curation import EditResult
from openclaw_memory.files.workspace import HISTORY_DIR
from openclaw_memory.memory_base import Memory

__all__ = ["add_curation_parsers", "cmd_edit", "cmd_forget", "cmd_history"]


def add_curation_parsers(sub: Any) -> None:
    edit = sub.add_parser("edit", help="replace lines of MEMORY.md or an undated note (the old "
                                       "text goes to memory-history/)")
    _target_arguments(edit)
    edit.add_argument("--to", dest="replacement", required=True,
                      help="the new text ('-' reads it from standard input)")
    forget = sub.add_parser("forget", help="remove lines of MEMORY.md or an undated note (kept "
                                           "in memory-history/)")
    _target_arguments(forget)
    history = sub.add_parser("history", help="what edit and forget replaced and removed, "
                                             "newest day first")
    history.add_argument("--days", type=int, default=7, help="how many days back (default 7)")


def _target_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("citation", help="the lines, as search cites them: MEMORY.md#L5-L6")
    parser.add_argument("--expected", required=True,
                        help="the exact text now on those lines; nothing is written if the "
                             "file changed meanwhile")
    parser.add_argument("--reason", default=None, help="why (kept in the history)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def cmd_edit(memory: Memory, args: argparse.Namespace) -> None:
    text = sys.stdin.read() if args.replacement == "-" else args.replacement
    _report(memory.edit(args.citation, args.expected, text, reason=args.reason), args)


def cmd_forget(memory: Memory, args: argparse.Namespace) -> None:
    _report(memory.edit(args.citation, args.expected, None, reason=args.reason), args)


def _report(result: EditResult, args: argparse.Namespace) -> None:
    if args.json:
        print(json.dumps({"path": result.path, "applied": result.applied,
                          "action": result.action, "citation": result.citation,
                          "current": result.current, "moved_to": result.moved_to,
                          "history": result.history}, ensure_ascii=False, indent=2))
    if not result.applied:
        current, expected = (result.current or "").strip(), (args.expected or "").strip()
        if expected and expected in current and expected != current:
            # Not a change: the caller gave part of the line. Say what is there to give.
            raise OpenClawMemoryError(
                f"--expected must be the whole text of {args.citation}, which holds "
                f"{result.current!r}; nothing was written")
        where = ("" if result.moved_to is None else
                 f"; the expected text is now at {result.path}#L{result.moved_to[0]}-"
                 f"L{result.moved_to[1]}")
        raise OpenClawMemoryError(f"{args.citation} changed since it was read: it now holds "
                                  f"{result.current!r}{where}; nothing was written")
    if not args.json:
        print(f"{result.action} {args.citation}" + (
            f": now {result.citation}" if result.action == "replaced" else "")
            + f" (history: {result.history})")


def cmd_history(memory: Memory, args: argparse.Namespace) -> None:
    days = sorted(_history_files(memory), key=lambda p: (p.rsplit("/", 1)[-1], p),
                  reverse=True)[: max(1, args.days)]
    if not days:
        print("no edits yet: nothing was replaced or removed")
        return
    for path in days:
        note = memory.get(path)
        print(f"# {path}\n\n{note.text.rstrip()}\n")


def _history_files(memory: Memory) -> list[str]:
    """The history files' paths: a folder beside memory/, or documents in the database."""
    if memory.backend == "postgres":
        return [p for p in memory.indexed_paths() if p.startswith(f"{HISTORY_DIR}/")]
    folder = memory.settings.workspace / HISTORY_DIR
    # An area's edits (memory/users/alice/...) keep their history in a folder of their own.
    return ([f"{HISTORY_DIR}/{p.relative_to(folder).as_posix()}" for p in folder.rglob("*.md")]
            if folder.is_dir() else [])
