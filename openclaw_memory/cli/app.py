"""``openclaw-memory``: index, search, read and write a memory workspace from a shell.

Exit codes (a contract for scripts): 0 success (including a search with no results),
2 usage error, 3 an openclaw-memory error (one line on stderr), 130 interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_memory.cli.consolidating import cmd_consolidate
from openclaw_memory.cli.curating import cmd_edit, cmd_forget, cmd_history
from openclaw_memory.cli.evaluate import run_eval
from openclaw_memory.cli.parser import build_parser
from openclaw_memory.cli.progress import ProgressBar
from openclaw_memory.cli.status import format_status
from openclaw_memory.cli.watching import cmd_watch
from openclaw_memory.config import MemorySettings
from openclaw_memory.errors import OpenClawMemoryError
from openclaw_memory.files.sample import sample_workspace
from openclaw_memory.index import MemoryIndex
from openclaw_memory.memory_base import Memory
from openclaw_memory.opening import open_memory
from openclaw_memory.scope.availability import decide
from openclaw_memory.search.snippets import citation, without_source_line
from openclaw_memory.settings_sources import SettingsOrigin, load_settings
from openclaw_memory.store.paths import state_dir
from openclaw_memory.types import SearchHit

if TYPE_CHECKING:
    from openclaw_memory.postgres import PostgresMemory

__all__ = ["main"]

EXIT_OK, EXIT_USAGE, EXIT_ERROR, EXIT_INTERRUPTED = 0, 2, 3, 130


def _sample_workspace() -> Path:
    """A writable copy of the bundled sample workspace (the package may be read-only)."""
    return sample_workspace(state_dir() / "sample-workspace")


def _check_scope(memory: Memory, args: argparse.Namespace) -> None:
    decision = decide(memory.settings.scope, args.chat_type, args.session_key)
    if not decision.allowed:
        memory.count_event("scope_denied")
        raise OpenClawMemoryError(f"memory is not available in this chat ({decision.reason}; "
                                  f"channel {decision.channel or 'unknown'}, chat type "
                                  f"{args.chat_type})")


def _workspace(args: argparse.Namespace) -> Path | None:
    """The workspace named on the command line; None lets the settings layers decide
    (``$OPENCLAW_MEMORY_WORKSPACE``, else the current directory)."""
    if args.sample:
        if args.workspace:
            raise OpenClawMemoryError("give --sample or --workspace, not both: --sample "
                                      "searches the bundled sample workspace")
        return _sample_workspace()
    return Path(args.workspace) if args.workspace else None


def _env_workspace() -> Path:
    return Path(os.environ.get("OPENCLAW_MEMORY_WORKSPACE") or ".")


def cli_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Settings given as flags: they outrank the environment and the workspace's file."""
    overrides: dict[str, Any] = {}
    if args.provider:
        overrides["embedding"] = {"provider": args.provider}
    if getattr(args, "no_sync", False):  # serve the index as it is (e.g. kept fresh by `watch`)
        overrides["sync"] = {"on_search": False}
    if getattr(args, "sessions", False) or getattr(args, "agent", None):
        overrides["sessions"] = {"enabled": True, "agent_id": args.agent}
    store = {key: value for key, value in (("backend", getattr(args, "backend", None)),
                                           ("dsn", getattr(args, "dsn", None)),
                                           ("workspace_name", getattr(args, "name", None)))
             if value}
    if store:
        overrides["store"] = store
    return overrides


def open_settings(workspace: Path | None,
                  overrides: dict[str, Any]) -> tuple[MemorySettings, SettingsOrigin]:
    """Settings for a workspace that must exist (checked before its config file is read)."""
    root = workspace if workspace is not None else _env_workspace()
    if not root.expanduser().is_dir():
        raise OpenClawMemoryError(f"workspace {root} is not a directory")
    return load_settings(workspace, overrides=overrides)


def _open(args: argparse.Namespace) -> Memory:
    overrides = cli_overrides(args)
    if _wants_postgres(args):
        return open_memory(args.name, **overrides)
    settings, origin = open_settings(_workspace(args), overrides)
    if settings.store.backend == "postgres":  # named by the workspace's configuration file
        return open_memory(settings=settings)
    return MemoryIndex(settings, index_path=args.index, origin=origin)


def _wants_postgres(args: argparse.Namespace) -> bool:
    chosen = getattr(args, "backend", None) or os.environ.get("OPENCLAW_MEMORY_STORE__BACKEND")
    return (chosen or "").strip() == "postgres"


def _folder_only(memory: Memory, command: str) -> MemoryIndex:
    if not isinstance(memory, MemoryIndex):
        raise OpenClawMemoryError(f"`{command}` works on a workspace folder; with the postgres "
                                  "backend every write is indexed at once (use `publish` to "
                                  "load a folder)")
    return memory


def _database_only(memory: Memory, command: str) -> PostgresMemory:
    from openclaw_memory.postgres import PostgresMemory

    if not isinstance(memory, PostgresMemory):
        raise OpenClawMemoryError(f"`{command}` moves a folder into or out of a database "
                                  "workspace: use --backend postgres --dsn ...")
    return memory


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _cmd_index(memory: Memory, args: argparse.Namespace) -> None:
    if not isinstance(memory, MemoryIndex):
        if args.repair:  # its keyword statistics are counted from the live rows per search
            print("nothing to repair: PostgreSQL keeps no keyword totals that could drift")
            return
        report = memory.sync(full=args.full)
        if args.json:
            _print_json(report.as_dict())
            return
        print(f"{'rebuilt' if report.full_rebuild else 'checked'} {report.scanned} documents: "
              f"{report.chunks_added} chunks re-indexed, {report.vectors_backfilled} missing "
              f"vectors embedded in {report.duration_s:.2f}s")
        for warning in report.warnings:
            print(f"warning: {warning}")
        return
    if args.repair:
        repaired = memory.repair()
        if args.json:
            _print_json(repaired)
            return
        before, after = repaired["before"], repaired["after"]
        print(f"keyword index rebuilt: {repaired['rows']} chunks indexed; it counted "
              f"{before['rows']} rows for {before['chunks']} chunks, now {after['rows']} for "
              f"{after['chunks']}")
        return
    # `index` embeds every missing vector (backfill_s=None), with its own progress bar.
    report = memory.sync(full=args.full, progress=ProgressBar(), force_sessions=args.force_sessions,
                         defer_vectors=args.vectors_later, backfill_s=None,
                         vector_progress=ProgressBar(unit="vectors"))
    if args.json:
        _print_json(report.as_dict())
        return
    kind = "rebuilt" if report.full_rebuild else "synced"
    print(f"{kind} {report.scanned} files: {report.indexed} indexed, {report.unchanged} "
          f"unchanged, {report.deleted} deleted, {report.chunks_added} chunks added, "
          f"{report.embedded} embedded ({report.cache_hits} cached) in {report.duration_s:.2f}s")
    if report.vectors_backfilled:
        print(f"vectors: {report.vectors_backfilled} missing vectors embedded")
    if report.vectors_pending and args.vectors_later:
        print(f"vectors: {report.vectors_pending} chunks wait for their vectors (keyword search "
              "works now); run `openclaw-memory index` to embed them: it can be stopped and "
              "run again, it goes on where it stopped")
    if report.sessions_deferred or report.malformed_lines:
        print(f"transcripts: {report.sessions_deferred} below the delta thresholds (index "
              f"--force-sessions), {report.malformed_lines} malformed lines skipped")
    for skipped in report.skipped:
        print(f"skipped {skipped.path}: {skipped.reason}")
    for warning in report.warnings:
        print(f"warning: {warning}")


def _cmd_search(memory: Memory, args: argparse.Namespace) -> None:
    if not args.no_sync and isinstance(memory, MemoryIndex):  # a database indexes each write
        memory.sync(progress=ProgressBar())
    _check_scope(memory, args)
    response = memory.search(args.query, max_results=args.max_results, min_score=args.min_score,
                             chat_type=args.chat_type)
    if args.json:
        _print_json(_without_source_lines(response.as_dict(explain=args.explain)))
        return
    print(f"mode: {response.mode} ({response.provider}"
          f"{'/' + response.model if response.model else ''}, vectors: {response.vector_path})")
    if response.stale:
        print("note: results may be stale (the index has not caught up with the files)")
    for note in response.notes:
        print(f"note: {note}")
    if response.results and response.mode != "keyword-only":
        print("hits in rank order; score = relevance, 0 to 1 (meaning and words together; "
              f"under {memory.settings.search.relevance_gate:.2f} is nothing relevant); the "
              "rank also counts keyword strength, dates the question names and which fact is "
              "newer (--explain)")
    gate = memory.settings.search.relevance_gate if response.mode != "keyword-only" else None
    _print_hits(response.results, args.explain, gate)
    if response.low_confidence_results:
        print("\npossibly related (low confidence, not a match):")
        _print_hits(response.low_confidence_results, args.explain)


def _why_kept(hit: SearchHit, gate: float | None) -> str:
    """Why a hit under the relevance gate is listed (the header says that is nothing
    relevant): what kept it, as JSON's ``explain`` says."""
    if gate is None or hit.score >= gate:
        return ""
    if hit.explanation.rescued:
        why = "it holds every word asked"
    elif hit.explanation.surfaced:
        why = "the subject's line that answers, found beyond the first hits"
    else:
        why = "listed after hits that passed"
    return f"  (under {gate:.2f}: {why})"


def _print_hits(hits: Sequence[SearchHit], explain: bool, gate: float | None = None) -> None:
    for i, hit in enumerate(hits, 1):
        cite = hit.citation or f"{hit.path}#L{hit.start_line}-L{hit.end_line}"
        dated = f"  as of {hit.as_of}" if hit.as_of else ""
        print(f"\n{i}. {cite}  score={hit.score:.3f}{dated}{_why_kept(hit, gate)}")
        if hit.superseded_by:
            print(f"   superseded by {hit.superseded_by} (newer, says otherwise)")
        if explain:
            print("   " + json.dumps(_rounded(hit.explanation.as_dict())))
        body = without_source_line(hit.snippet)
        print("   " + body.replace("\n", "\n   "))


def _rounded(factors: dict[str, Any]) -> dict[str, Any]:
    """Four decimals are what a person compares; --json keeps full precision."""
    return {key: round(value, 4) if isinstance(value, float) else value
            for key, value in factors.items()}


def _cmd_get(memory: Memory, args: argparse.Namespace) -> None:
    _check_scope(memory, args)
    note = memory.get(args.path, args.from_line, args.lines, chat_type=args.chat_type)
    # JSON says "missing" itself; plain text would print an empty line as if it had read one.
    if note.missing and not args.json:
        raise OpenClawMemoryError(f"{note.path} does not exist")
    if note.end_line < note.start_line and note.total_lines > 0 and not args.json:
        raise OpenClawMemoryError(f"{note.path} has {note.total_lines} line(s); line "
                                  f"{note.start_line} is past its end")
    if args.json:
        _print_json({"path": note.path, "text": note.text, "start_line": note.start_line,
                     "end_line": note.end_line, "missing": note.missing,
                     "truncated": note.truncated, "next_line": note.next_line})
    else:
        print(note.text)
        if note.truncated:  # on stderr: what stdout holds is the file's text, exactly
            print(note.marker(), file=sys.stderr)


def _without_source_lines(data: dict[str, Any]) -> dict[str, Any]:
    """The JSON answer's snippets without the "Source: path#L.." line a model is shown: the
    citation is a field of each hit already."""
    for key in ("results", "low_confidence_results"):
        for hit in data.get(key) or []:
            if isinstance(hit, dict) and isinstance(hit.get("snippet"), str):
                hit["snippet"] = without_source_line(hit["snippet"])
    return data


def _cmd_write(memory: Memory, args: argparse.Namespace) -> None:
    text = sys.stdin.read() if args.text == "-" else args.text
    result = memory.write(text, target=args.target)
    where = citation(result.path, result.start_line, result.end_line)
    if args.json:
        _print_json({"path": result.path, "start_line": result.start_line,
                     "end_line": result.end_line, "citation": where, "written": result.written,
                     "reason": result.reason, "warning": result.warning,
                     "existing": result.existing,
                     "related": [r.as_dict() for r in result.related]})
        return
    if result.appended:
        print(f"appended to {where}")
    elif result.reason == "duplicate":
        print(f"not written (duplicate): {where} already says this: {result.existing}")
    else:
        print(f"not written: {result.reason}")
    for related in result.related:
        print(f"related: {related.citation} ({related.learned or 'undated'}): "
              f"{related.text.strip()}")
    if result.warning:
        print(f"warning: {result.warning}", file=sys.stderr)


def _cmd_status(memory: Memory, args: argparse.Namespace) -> None:
    status = memory.status()
    if args.json:
        _print_json(status)
        return
    if not isinstance(memory, MemoryIndex):
        for key, value in status.items():
            print(f"{key}: {value}")
        return
    for line in format_status(status):
        print(line)


def _cmd_watch(memory: Memory, args: argparse.Namespace) -> None:
    cmd_watch(_folder_only(memory, "watch"), args, ProgressBar())


def _cmd_publish(memory: Memory, args: argparse.Namespace) -> None:
    report = _database_only(memory, "publish").publish(args.folder, mirror=args.mirror)
    if args.json:
        _print_json(dataclasses.asdict(report))
        return
    print(f"published {args.folder}: {report.scanned} files, {report.written} written, "
          f"{report.unchanged} unchanged, {report.deleted} deleted, {report.chunks} chunks")
    for skipped in report.skipped:
        print(f"skipped {skipped}")


def _cmd_export(memory: Memory, args: argparse.Namespace) -> None:
    count = _database_only(memory, "export").export(args.folder)
    print(f"exported {count} documents to {args.folder}")


_COMMANDS = {"index": _cmd_index, "search": _cmd_search, "get": _cmd_get, "write": _cmd_write,
             "edit": cmd_edit, "forget": cmd_forget, "history": cmd_history,
             "consolidate": cmd_consolidate,
             "status": _cmd_status, "watch": _cmd_watch, "publish": _cmd_publish,
             "export": _cmd_export}


def _requested_provider_unavailable(memory: Memory, args: argparse.Namespace) -> str | None:
    """Warn (stderr) when a provider asked for by name cannot be used: it is never silent."""
    requested = memory.settings.embedding.provider
    if args.command not in ("index", "search", "status") or requested in ("auto", "none"):
        return None
    reason = memory.provider_choice().unavailable_reason
    if reason is None:
        return None
    message = f"embedding provider {requested!r} is unavailable: {reason}"
    print(f"openclaw-memory: warning: {message}; answering keyword-only", file=sys.stderr)
    return message


def _is_storage_error(exc: Exception) -> bool:
    # pysqlite3's errors do not derive from the stdlib's: recognise both drivers by module.
    module = type(exc).__module__.split(".")[0]
    return isinstance(exc, OSError) or module in ("sqlite3", "pysqlite3")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "eval":  # opens one index per workspace itself
            run_eval(args, lambda: _workspace(args) or _env_workspace(), ProgressBar)
        else:
            with _open(args) as memory:
                unavailable = _requested_provider_unavailable(memory, args)
                _COMMANDS[args.command](memory, args)
                if unavailable and args.command == "index":
                    raise OpenClawMemoryError(f"{unavailable}; indexed keyword-only, no vectors")
    except OpenClawMemoryError as exc:
        print(f"openclaw-memory: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `... | head`: the reader has what it wanted
        _quiet_stdout()
        return EXIT_OK
    except Exception as exc:  # a storage failure that escaped translation: still one line
        if not _is_storage_error(exc):
            raise
        print(f"openclaw-memory: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("openclaw-memory: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK


def _quiet_stdout() -> None:
    """Point stdout somewhere that takes writes, so the interpreter's final flush of what
    is still buffered does not fail on the closed pipe again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # a /dev/null only root may write to: drop the stream instead
        sys.stdout = None  # type: ignore[assignment]
        return
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
