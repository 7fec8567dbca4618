"""The ``openclaw-memory`` command line's arguments: every command, its options and their
checks (a bad value is a usage error with exit code 2, never a traceback)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from openclaw_memory.cli.completion import SHELLS, PrintCompletion
from openclaw_memory.cli.consolidating import add_consolidate_parser
from openclaw_memory.cli.curating import add_curation_parsers
from openclaw_memory.cli.evaluate import add_eval_parser
from openclaw_memory.cli.watching import add_watch_parser
from openclaw_memory.errors import DISTRIBUTION

__all__ = ["DESCRIPTION", "build_parser", "package_version"]

DESCRIPTION = "openclaw-memory: index, search, read and write a memory workspace from a shell."


def _agent_id(value: str) -> str:
    # The settings pattern, checked here so a bad id is a usage error, not a traceback.
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", value):
        raise argparse.ArgumentTypeError("an agent id is 1-64 letters, digits, '_' or '-'")
    return value


def _bounded_int(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range: use {low} to {high}")
        return value

    return parse


def _score(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value:g} is out of range: scores are 0 to 1")
    return value


def _global_options(p: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The options every command takes; on a subcommand they are accepted after its name too
    (``search "x" --workspace ws``), and given there they win."""
    d: Any = argparse.SUPPRESS if suppress else None
    flag: Any = argparse.SUPPRESS if suppress else False
    # On a subcommand they are accepted but not listed again (its --help says where they are).
    add = _unlisted(p) if suppress else p.add_argument
    add("--workspace", type=Path, default=d,
                   help="memory workspace (default: $OPENCLAW_MEMORY_WORKSPACE, else the cwd)")
    add("--sample", action="store_true", default=flag,
                   help="use the bundled sample workspace (copied to the state directory)")
    add("--index", type=Path, default=d,
                   help="index file (default: a per-workspace file in the state directory)")
    add("--provider", choices=["auto", "local", "openai", "ollama", "mistral", "voyage", "gemini",
                               "none"], default=d,
                   help="embedding provider (default: auto = the offline local model)")
    add("--sessions", action="store_true", default=flag,
                   help="also index session transcripts (<workspace>/sessions/*.jsonl)")
    add("--agent", default=d, metavar="ID", type=_agent_id,
                   help="this agent's transcripts (sessions/<ID>/) and an index of its own; implies "
                        "--sessions")
    add("--backend", choices=["sqlite", "postgres"], default=d,
                   help="sqlite: the workspace folder and an index file (default); postgres: "
                        "a shared database (--dsn), documents included")
    add("--dsn", default=d, metavar="DSN",
                   help="postgres: connection string (default: $OPENCLAW_MEMORY_STORE__DSN)")
    add("--name", default=d, metavar="NAME",
                   help="postgres: the workspace's name in the database (default: 'default')")


def _unlisted(p: argparse.ArgumentParser) -> Any:
    def add(*names: str, **kwargs: Any) -> Any:
        return p.add_argument(*names, **{**kwargs, "help": argparse.SUPPRESS})
    return add


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="openclaw-memory",
                                description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    p.add_argument("--print-completion", choices=SHELLS, action=PrintCompletion, metavar="SHELL",
                   help="print a shell completion script (bash or zsh) and exit")
    _global_options(p, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, suppress=True)
    sub = _SubParsers(p.add_subparsers(dest="command", required=True), common)
    idx = sub.add_parser("index", help="sync the index with the files")
    idx.add_argument("--full", action="store_true", help="rebuild from scratch")
    idx.add_argument("--repair", action="store_true",
                     help="rebuild the keyword index from the stored chunks (no re-embedding), "
                          "e.g. when status reports drift")
    idx.add_argument("--force-sessions", action="store_true",
                     help="re-index grown transcripts now, below the delta thresholds too")
    idx.add_argument("--vectors-later", action="store_true",
                     help="index text and keywords now, embed later (a very large workspace: "
                          "keyword search at once; the next `index` embeds, resumably)")
    idx.add_argument("--json", action="store_true", help="print the sync report as JSON")
    s = sub.add_parser("search", help="hybrid search with citations")
    s.add_argument("query", help="what to look for (any language)")
    s.add_argument("-k", "--max-results", type=_bounded_int(1, 200), default=None,
                   help="hits to return, 1 to 200 (default 6)")
    s.add_argument("--min-score", type=_score, default=None,
                   help="relevance threshold, 0 to 1 (default: the index's own)")
    s.add_argument("--json", action="store_true", help="print the response as JSON")
    s.add_argument("--explain", action="store_true", help="show per-hit score factors")
    s.add_argument("--no-sync", action="store_true",
                   help="search the index as it is, without syncing first (see `watch`)")
    _chat_arguments(s)
    g = sub.add_parser("get", help="read lines of a memory file")
    g.add_argument("path", help="a path or a citation as search prints it (memory/x.md#L3-L5)")
    g.add_argument("--from", dest="from_line", type=_bounded_int(1, 10**9), default=None,
                   help="first line to read (1-based)")
    g.add_argument("--lines", type=_bounded_int(1, 10**9), default=None,
                   help="how many lines to read")
    g.add_argument("--json", action="store_true", help="print the lines as JSON")
    _chat_arguments(g)
    w = sub.add_parser("write", help="append a note to today's daily file or MEMORY.md")
    w.add_argument("text", help="the note; '-' reads it from standard input")
    w.add_argument("--target", choices=["daily", "memory"], default="daily",
                   help="daily: today's log (default); memory: MEMORY.md")
    w.add_argument("--json", action="store_true", help="print where the note landed as JSON")
    pub = sub.add_parser("publish", help="postgres: load a folder's memory files into the "
                         "database workspace (incremental: changed files only)")
    pub.add_argument("folder", type=Path, help="a workspace folder (MEMORY.md, memory/**/*.md)")
    pub.add_argument("--mirror", action="store_true",
                     help="also delete documents that are not in the folder")
    pub.add_argument("--json", action="store_true", help="print the report as JSON")
    exp = sub.add_parser("export", help="postgres: write the database workspace out as a "
                         "folder, byte for byte")
    exp.add_argument("folder", type=Path, help="where to write (created if missing)")
    st = sub.add_parser("status", help="what is indexed and how search runs")
    st.add_argument("--json", action="store_true", help="print the status as JSON")
    add_eval_parser(sub)
    add_watch_parser(sub)
    add_curation_parsers(sub)
    add_consolidate_parser(sub)
    return p


def _chat_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chat-type", choices=["direct", "group", "channel"], default="direct",
                        help="answer as in this kind of chat (group/channel: no MEMORY.md, no "
                             "citations; scope rules apply)")
    parser.add_argument("--session-key", default=None, metavar="KEY",
                        help="the chat's session key, as the scope rules match it "
                             "(agent:main:discord:channel:42)")


class _SubParsers:
    """``add_parser`` with the global options added to every subcommand."""

    def __init__(self, inner: Any, common: argparse.ArgumentParser) -> None:
        self.inner = inner
        self.common = common

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("description", kwargs.get("help"))
        kwargs.setdefault("epilog", _GLOBAL_EPILOG)
        parser: argparse.ArgumentParser = self.inner.add_parser(
            name, parents=[self.common], **kwargs)
        return parser


_GLOBAL_EPILOG = ("The global options (--workspace, --sample, --index, --provider, --sessions, "
                  "--agent, --backend, --dsn, --name) go before or after the command; "
                  "`openclaw-memory --help` describes them.")


def package_version() -> str:
    """The installed distribution's version (pyproject.toml is its only source)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"
