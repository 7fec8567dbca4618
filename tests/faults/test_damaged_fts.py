"""Damage in the keyword index that only shows on use is found and repaired: a sync verifies the
FTS5 index, a search that hits damage sets the file aside and rebuilds, and status says so."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.store.connection import probe_driver

from .workspaces import write_workspace


def _garble_keyword_pages(index: Path) -> None:
    con = sqlite3.connect(index)
    con.execute("update chunks_fts_data set block = randomblob(length(block)) where id > 1")
    con.commit()
    con.close()


def _open(ws: Path, index: Path) -> MemoryIndex:
    return MemoryIndex.open(ws, index_path=index, embedding={"provider": "none"},
                            sync={"on_search": False})


def _garble_into_an_absurd_allocation(index: Path) -> None:
    """Garbage that makes FTS5 ask for gigabytes: SQLite reports NOMEM, not CORRUPT (random
    garbling does this about one time in five; this seed always does)."""
    driver = probe_driver()
    con = driver.module.connect(str(index))
    rng = random.Random(33)
    for rowid, size in con.execute("select id, length(block) from chunks_fts_data where id > 1"
                                   ).fetchall():
        con.execute("update chunks_fts_data set block = ? where id = ?", (rng.randbytes(size), rowid))
    con.commit()
    try:
        con.execute("insert into chunks_fts(chunks_fts) values('integrity-check')")
    except MemoryError:
        pass
    else:
        raise AssertionError("this garbage no longer makes SQLite run out of memory: pick a new seed")
    finally:
        con.close()


@pytest.mark.parametrize("garble", [_garble_keyword_pages, _garble_into_an_absurd_allocation],
                         ids=["random-pages", "out-of-memory"])
def test_a_sync_over_unchanged_files_finds_the_damage_and_rebuilds(
        tmp_path: Path, garble: Callable[[Path], None]) -> None:
    write_workspace(tmp_path / "ws", files=8)
    index = tmp_path / "i.sqlite"
    with _open(tmp_path / "ws", index) as memory:
        memory.sync()
    garble(index)
    with _open(tmp_path / "ws", index) as memory:
        report = memory.sync()
        assert report.indexed == 8  # rebuilt, not "8 unchanged"
        hits = memory.search("invoice billing").results
        assert hits and not [n for n in memory.search("invoice").notes if "failed" in n]
        assert any("keyword index is damaged" in n for n in memory.status()["notes"])
    assert list(tmp_path.glob("i.sqlite.corrupt-*"))  # set aside, never deleted


def test_a_search_that_hits_damage_repairs_the_index_and_answers(tmp_path: Path) -> None:
    write_workspace(tmp_path / "ws", files=8)
    index = tmp_path / "i.sqlite"
    with _open(tmp_path / "ws", index) as memory:
        memory.sync()
        _garble_keyword_pages(index)
        response = memory.search("invoice billing")
        assert response.results
        assert any("damaged" in n for n in response.notes)
        assert not [n for n in response.notes if n.startswith("keyword search failed")]


class _CountingConnection:
    """Forwards everything to the real connection and counts FTS5 integrity checks."""

    def __init__(self, conn: object) -> None:
        self._conn = conn
        self.checks = 0

    def execute(self, sql: str, *args: object) -> object:
        if "integrity-check" in sql:
            self.checks += 1
        return self._conn.execute(sql, *args)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


def test_the_keyword_index_is_verified_once_per_opened_index_not_on_every_sync(tmp_path: Path) -> None:
    write_workspace(tmp_path / "ws", files=8)
    with _open(tmp_path / "ws", tmp_path / "i.sqlite") as memory:
        counting = _CountingConnection(memory.store._conn)
        memory.store._conn = counting  # type: ignore[assignment]
        for _ in range(3):
            memory.sync()
        assert counting.checks == 1
