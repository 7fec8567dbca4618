"""The keyword index's totals (what BM25 reads besides the postings) stay true: an index of
the old form is converted when opened, status reports drift, and `index --repair` fixes it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_entry import ENTRY_POINT

from openclaw_memory import MemoryIndex
from openclaw_memory.language.textsearch import fts_body
from openclaw_memory.store import probe_driver

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}}
QUESTIONS = ["postgres billing decision", "coffee lisbon trip", "redis cache cluster"]


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Facts\n\n- Billing runs on postgres since March.\n"
                                  "- The redis cache cluster has three nodes.\n")
    for day in range(1, 9):
        (ws / "memory" / f"2026-03-0{day}.md").write_text(
            f"- Day {day}: coffee in lisbon, billing tickets, postgres tuning.\n" * day)
    return ws


def _answers(memory: MemoryIndex) -> list[list[tuple[str | None, float]]]:
    return [[(h.citation, round(h.score, 9)) for h in memory.search(q).results]
            for q in QUESTIONS]


def _connect(index: Path) -> Any:
    conn = probe_driver().module.connect(str(index), isolation_level=None)
    return conn


def _make_old_form_with_drift(index: Path) -> None:
    """Rewrite the index's keyword table in the form earlier versions created
    (``contentless_delete=1``) and give it the history such a table kept: rows deleted by
    rowid, which never left its totals."""
    conn = _connect(index)
    try:
        conn.execute("begin")
        rows = conn.execute("select rowid, text from chunks").fetchall()
        conn.execute("drop table chunks_fts")
        conn.execute("create virtual table chunks_fts using fts5(body, tokenize='unicode61 "
                     "remove_diacritics 2', content='', contentless_delete=1)")
        ghost = 1 + max(r for r, _t in rows)
        for rowid, text in rows:  # every chunk once replaced: 2x the rows in the totals
            conn.execute("insert into chunks_fts(rowid, body) values (?, ?)", (ghost, "x y z"))
            conn.execute("delete from chunks_fts where rowid = ?", (ghost,))
            conn.execute("insert into chunks_fts(rowid, body) values (?, ?)",
                         (rowid, fts_body(text)))
            ghost += 1
        conn.execute("commit")
    finally:
        conn.close()


def test_an_index_of_the_old_form_is_converted_when_opened_and_answers_like_a_fresh_one(
        tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with MemoryIndex.open(ws, index_path=tmp_path / "fresh.sqlite", **OPTS) as fresh:
        fresh.sync()
        want = _answers(fresh)
    aged = tmp_path / "aged.sqlite"
    with MemoryIndex.open(ws, index_path=aged, **OPTS) as memory:
        memory.sync()
    _make_old_form_with_drift(aged)
    conn = _connect(aged)
    sql = conn.execute("select sql from sqlite_master where name = 'chunks_fts'").fetchone()[0]
    conn.close()
    assert "contentless_delete" in sql
    with MemoryIndex.open(ws, index_path=aged, **OPTS) as memory:
        totals = memory.status()["keyword_index"]
        assert totals["drift"] is False and totals["rows"] == totals["chunks"]
        assert _answers(memory) == want


def test_deleted_and_replaced_chunks_leave_the_keyword_totals(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as memory:
        memory.sync()
        first = memory.status()["keyword_index"]
        for day in range(1, 5):
            (ws / "memory" / f"2026-03-0{day}.md").write_text("- rewritten: one short line.\n")
        (ws / "memory" / "2026-03-08.md").unlink()
        memory.sync()
        after = memory.status()["keyword_index"]
    assert after["rows"] == after["chunks"] < first["rows"]
    assert after["tokens"] < first["tokens"]
    assert after["drift"] is False


def _cli(*args: str) -> str:
    done = subprocess.run([ENTRY_POINT, *args], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_status_reports_drift_and_index_repair_fixes_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    index = tmp_path / "i.sqlite"
    with MemoryIndex.open(ws, index_path=index, **OPTS) as memory:
        memory.sync()
        want = _answers(memory)
    conn = _connect(index)  # a row no chunk has: the totals now count one row too many
    conn.execute("insert into chunks_fts(rowid, body) values (999999, 'postgres postgres')")
    conn.close()
    args = ["--workspace", str(ws), "--index", str(index), "--provider", "none"]
    status = json.loads(_cli(*args, "status", "--json"))
    assert status["keyword_index"]["drift"] is True
    assert any("index --repair" in w for w in status["warnings"])
    assert "keyword index rebuilt" in _cli(*args, "index", "--repair")
    with MemoryIndex.open(ws, index_path=index, **OPTS) as memory:
        status = memory.status()
        assert status["keyword_index"]["drift"] is False
        assert not any("index --repair" in w for w in status["warnings"])
        assert _answers(memory) == want
