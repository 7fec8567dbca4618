"""The bilingual dictionary kept as an SQLite file in the cache directory, read word by word.

A question needs a few dozen entries of CC-CEDICT's 120 000; loading the whole dictionary
into a process (a pickle: ~0.15 s) was a fifth of a one-shot CLI search. The file is built
once per machine from the checked dictionary, written whole then renamed into place, and
only read from a folder and file this user owns that nobody else can write. Lookups are
memoised per process (bounded): a long-running agent asks the same words again.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from openclaw_memory.embeddings.model_cache import private_to_user

__all__ = ["Lookup", "open_tables", "write_tables"]

#: Distinct words a process remembers the answer for, per table.
MEMO = 65_536
_SEPARATOR = "\x1f"
_TABLES = ("zh_en", "en_zh")


class Lookup(Mapping[str, tuple[str, ...]]):
    """One table of the file as a read-only mapping: word -> renderings."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock, table: str) -> None:
        self._conn, self._lock, self._table = conn, lock, table
        self._memo: dict[str, tuple[str, ...] | None] = {}

    def get_renderings(self, word: str) -> tuple[str, ...] | None:
        if word in self._memo:
            return self._memo[word]
        with self._lock:
            row = self._conn.execute(f"select v from {self._table} where k = ?",
                                     (word,)).fetchone()
        found = tuple(row[0].split(_SEPARATOR)) if row is not None else None
        if len(self._memo) >= MEMO:
            self._memo.clear()
        self._memo[word] = found
        return found

    def __getitem__(self, word: str) -> tuple[str, ...]:
        found = self.get_renderings(word)
        if found is None:
            raise KeyError(word)
        return found

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.get_renderings(word) is not None

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            words = [row[0] for row in self._conn.execute(f"select k from {self._table}")]
        return iter(words)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute(f"select count(*) from {self._table}").fetchone()[0])


def write_tables(path: Path, tables: Mapping[str, Mapping[str, tuple[str, ...]]]) -> None:
    """The tables written to a new file beside ``path``, then renamed over it (readers see the
    old file or the whole new one). Owner-only folder and file."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".dictionary-", suffix=".tmp")
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            for name in _TABLES:
                conn.execute(f"create table {name} (k text primary key, v text not null) "
                             "without rowid")
                conn.executemany(f"insert into {name} values (?, ?)",
                                 ((k, _SEPARATOR.join(v)) for k, v in tables[name].items()))
            conn.commit()
        finally:
            conn.close()
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def open_tables(path: Path) -> dict[str, Lookup] | None:
    """The file's tables, or None when it is missing, not private to this user or unreadable
    (the caller builds it again)."""
    if not path.is_file() or not private_to_user(path):
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        for name in _TABLES:
            conn.execute(f"select k, v from {name} limit 1").fetchall()
    except sqlite3.Error:
        conn.close()
        return None
    lock = threading.Lock()
    return {name: Lookup(conn, lock, name) for name in _TABLES}
