"""Human-readable lines for ``openclaw-memory status`` (``--json`` prints the dictionary)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["format_status"]

# Printed in this order, one "key: value" line each; anything else follows as plain lines.
_SCALARS = ("workspace", "index_path", "files", "chunks", "vectors", "vectors_missing",
            "cache_entries", "dirty", "pending_files", "vector_path", "vector_reason",
            "keyword_path", "sqlite_driver", "sqlite_version",
            "sqlite_vec_version", "provider", "model", "mode", "mode_reason", "provider_unavailable_reason",
            "fallback")
_HANDLED = {*_SCALARS, "last_sync_at", "last_sync_duration_s", "dirty_reasons",
            "background_sync", "watcher", "sync_triggers", "transcript_deltas", "last_flush_at",
            "flush_count", "last_flush_appended", "flush_failures", "last_flush_error", "skipped",
            "warnings", "notes", "configuration"}


def _when(epoch: Any) -> str:
    if not isinstance(epoch, int | float):
        return "never"
    ago = max(0.0, time.time() - epoch)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))
    return f"{stamp} ({ago:.0f}s ago)"


def _sync_lines(status: Mapping[str, Any]) -> Iterator[str]:
    duration = status.get("last_sync_duration_s")
    took = f", took {duration:.2f}s" if isinstance(duration, int | float) else ""
    yield f"last_sync: {_when(status.get('last_sync_at'))}{took}"
    for reason in status.get("dirty_reasons") or ():
        yield f"  dirty because: {reason['reason']}"
    bg = status.get("background_sync") or {}
    state = "running (" + ", ".join(bg.get("reasons") or ()) + ")" if bg.get("running") else "idle"
    yield (f"background_sync: {state}; {bg.get('runs', 0)} run(s), "
           f"{bg.get('failures', 0)} failure(s) in this process")
    if bg.get("last_error"):
        yield f"  last failure: {bg['last_error']} at {_when(bg.get('last_error_at'))}"
    triggers = status.get("sync_triggers") or {}
    if triggers:
        yield ("sync_triggers: " + ", ".join(f"{k}={v}" for k, v in triggers.items()))


def _watcher_line(status: Mapping[str, Any]) -> str:
    watcher = status.get("watcher")
    if not watcher:
        return "watcher: not running (start one with `openclaw-memory watch`)"
    where = "this process" if watcher.get("in_this_process") else f"pid {watcher.get('pid')}"
    return (f"watcher: running in {where} since {_when(watcher.get('started_at'))}, "
            f"{watcher.get('directories')} folder(s)")


def _activity_lines(status: Mapping[str, Any]) -> Iterator[str]:
    count = status.get("flush_count") or 0
    if count:
        yield (f"memory_flush: {count} flush(es), last {_when(status.get('last_flush_at'))}, "
               f"{status.get('last_flush_appended') or 0} note(s) appended")
    else:
        yield "memory_flush: none recorded"
    failures = status.get("flush_failures") or 0
    error = status.get("last_flush_error") or {}
    if failures:
        outcome = "gave up for that cycle" if error.get("gave_up") else "will retry"
        yield (f"memory_flush failures: {failures}, last {_when(error.get('at'))} ({outcome}): "
               f"{error.get('error')}")
    deltas = status.get("transcript_deltas") or []
    yield f"transcripts: {len(deltas)}"
    for d in deltas:
        flags = [name for name in ("new", "rewritten", "due") if d.get(name)]
        yield (f"  {d['path']}: +{d.get('pending_bytes', 0)} bytes, "
               f"+{d.get('pending_lines', 0)} lines pending" + (f" ({', '.join(flags)})"
                                                                if flags else ""))


def _configuration_lines(status: Mapping[str, Any]) -> Iterator[str]:
    config = status.get("configuration") or {}
    found = config.get("config_file")
    yield (f"config_file: {found}" if found else
           f"config_file: none ({status.get('workspace')}/openclaw-memory.toml does not exist)")
    yield f"settings precedence: {config.get('precedence', '')}"
    for name, entry in (config.get("settings") or {}).items():
        yield f"  {name} = {json.dumps(entry['value'], ensure_ascii=False)}  ({entry['from']})"


def format_status(status: Mapping[str, Any]) -> list[str]:
    """``status`` as readable lines (every key appears; nested values are spelled out)."""
    lines = [f"{key}: {_plain(status[key])}" for key in _SCALARS if status.get(key) is not None]
    lines += [*_sync_lines(status), _watcher_line(status), *_activity_lines(status),
              *_configuration_lines(status)]
    for key, label in (("skipped", "skipped"), ("warnings", "warning"), ("notes", "note")):
        for item in status.get(key) or ():
            text = f"{item['path']}: {item['reason']}" if isinstance(item, dict) else item
            lines.append(f"{label}: {text}")
    lines += [f"{key}: {_plain(value)}" for key, value in status.items() if key not in _HANDLED]
    return lines


def _plain(value: Any) -> str:
    """A value as a person reads it: "none" rather than Python's None, JSON for structures."""
    if value is None:
        return "none"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)
