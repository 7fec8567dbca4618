"""Many writers on one shared daily document, in separate processes, against a real server:
nothing lost, nothing twice, per-writer order kept, each note findable once its write
returns, and a writer killed mid-write leaves no trace."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pg_writer import DAY

from openclaw_memory.indexing.chunking import chunk_text
from openclaw_memory.postgres import PostgresMemory

WRITER = Path(__file__).with_name("pg_writer.py")
PATH = "memory/2026-03-02.md"
KEYWORD_ONLY = {"embedding": {"provider": "none"}, "timezone": "UTC"}


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(WRITER.parent.parent)}
    return subprocess.Popen([sys.executable, str(WRITER), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _index_matches_document(memory: PostgresMemory) -> None:
    body = memory.documents_bytes(PATH) or b""
    expected = [(c.start_line, c.end_line, c.text) for c in chunk_text(
        body.decode(), path=PATH, source="memory", settings=memory.settings.chunking)]
    rows = memory.tenant.rows(
        "select start_line, end_line, text from openclaw_memory.chunks "
        "where workspace = %(ws)s and path = %(p)s order by start_line, end_line", {"p": PATH})
    assert [tuple(r) for r in rows] == sorted(expected)


@pytest.mark.slow
def test_eight_processes_append_to_one_daily_file_and_find_their_notes(pg_dsn: str) -> None:
    writers, count = 8, 12
    PostgresMemory.open(pg_dsn, workspace="fleet", **KEYWORD_ONLY).close()  # schema once
    procs = [_spawn("append", pg_dsn, str(w), str(count)) for w in range(writers)]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    results = [json.loads(line) for out, _ in outputs for line in out.splitlines()]
    assert len(results) == writers * count
    assert [r for r in results if not r["found"]] == []  # searchable once the write returned
    with PostgresMemory.open(pg_dsn, workspace="fleet", **KEYWORD_ONLY) as memory:
        text = (memory.documents_bytes(PATH) or b"").decode()
        notes = re.findall(r"^writer (\d+) note (\d+) w\1n\2tok$", text, flags=re.M)
        assert len(notes) == writers * count == len(set(notes))  # each exactly once
        assert text.count("\n\n") == writers * count - 1  # blocks, one blank line apart
        for w in range(writers):
            order = [int(i) for ww, i in notes if int(ww) == w]
            assert order == list(range(count))  # in each writer's order
        _index_matches_document(memory)


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_no_half_note_and_others_go_on(pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="fleet", **KEYWORD_ONLY) as memory:
        memory.write("before the crash", now=DAY)
        holder = _spawn("hold", pg_dsn)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        waiting = _spawn("append", pg_dsn, "1", "1")  # queues on the locked row
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        out, err = waiting.communicate(timeout=120)
        assert waiting.returncode == 0, err
        assert json.loads(out)["found"]
        text = (memory.documents_bytes(PATH) or b"").decode()
        assert "half written" not in text
        assert text == "before the crash\n\nwriter 1 note 0 w1n0tok\n"
        assert memory.search("half written killed").results == ()
        _index_matches_document(memory)

