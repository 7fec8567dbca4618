"""The logical state of an index file, for "repaired index == fresh full index" comparisons.

Row ids differ between two indexes of the same files, so the state is keyed by content:
files (path, source, hash, size, mtime, chunk count) and, per path, the chunks (lines, text,
source, model, hash and a digest of the embedding). Internal consistency that row ids *do*
have to satisfy (FTS rows and vec0 rows mirror ``chunks`` exactly) is checked while reading.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_memory.language.textsearch import fts_body
from openclaw_memory.store import probe_driver

__all__ = ["ChunkState", "IndexState", "fresh_state", "read_state"]

ChunkState = tuple[int, int, str, str, str, str, str | None]  # start, end, source, model, hash, text, emb


@dataclass(frozen=True)
class IndexState:
    files: dict[str, tuple[str, str, int, int, int]]  # path -> source, hash, size, mtime_ns, chunks
    chunks: dict[str, tuple[ChunkState, ...]]  # path -> chunks in line order
    fingerprint: str | None
    vec0_rows: int

    def per_file(self) -> dict[str, tuple[ChunkState, ...]]:
        return dict(self.chunks)

    def content(self) -> tuple[dict[str, tuple[str, str, int]], dict[str, tuple[ChunkState, ...]]]:
        """Files without mtime (for comparing indexes of files whose stat moved)."""
        return ({p: (s, h, size) for p, (s, h, size, _m, _c) in self.files.items()}, self.chunks)


def _connect(path: Path) -> Any:
    driver = probe_driver(True)
    conn = driver.module.connect(f"file:{path}?mode=ro", uri=True)
    if driver.vec_loadable:
        import sqlite_vec

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
    return conn


def _digest(blob: bytes | None) -> str | None:
    return None if blob is None else hashlib.sha256(blob).hexdigest()[:16]


def read_state(path: Path) -> IndexState:
    """Read ``path`` in one read transaction and check its internal consistency."""
    conn = _connect(path)
    try:
        conn.execute("begin")  # one snapshot for every query below
        return _read(conn)
    finally:
        conn.close()


def _read(conn: Any) -> IndexState:
    problems: list[str] = []
    check = conn.execute("pragma integrity_check").fetchall()
    if check != [("ok",)]:
        problems.append(f"integrity_check: {check[:3]}")
    files = {r[0]: tuple(r[1:]) for r in conn.execute(
        "select path, source, hash, size, mtime_ns, chunks from files")}
    rows = conn.execute("select rowid, path, start_line, end_line, source, model, hash, text, "
                        "embedding from chunks order by path, start_line, end_line").fetchall()
    chunks: dict[str, list[ChunkState]] = {}
    for _rowid, path, start, end, source, model, chash, text, emb in rows:
        chunks.setdefault(path, []).append((start, end, source, model, chash, text, _digest(emb)))
    for path, (_s, _h, _size, _m, count) in files.items():
        if len(chunks.get(path, [])) != count:
            problems.append(f"{path}: files.chunks={count} but {len(chunks.get(path, []))} rows")
    for path in set(chunks) - set(files):
        problems.append(f"{path}: chunk rows without a files row")
    by_rowid = {r[0]: r for r in rows}
    _check_fts(conn, by_rowid, problems)
    vec0_rows = _check_vec0(conn, by_rowid, problems)
    fp = conn.execute("select value from meta where key = 'fingerprint'").fetchone()
    assert not problems, "inconsistent index:\n" + "\n".join(problems[:20])
    return IndexState(files=files, chunks={p: tuple(c) for p, c in chunks.items()},
                      fingerprint=fp[0] if fp else None, vec0_rows=vec0_rows)


def _check_fts(conn: Any, by_rowid: dict[int, Any], problems: list[str]) -> None:
    """FTS5 rows must index exactly each chunk's body: compared term by term and position by
    position with a scratch FTS5 table (same tokenizer) holding the bodies the chunks imply,
    which also works where the table keeps no copy of the text (contentless)."""
    ddl = conn.execute("select sql from sqlite_master where name = 'chunks_fts'").fetchone()[0]
    tokenize = re.search(r"tokenize='([^']*)'", ddl)
    conn.execute("create virtual table temp.expected using fts5(body, tokenize='"
                 f"{tokenize.group(1) if tokenize else 'unicode61'}')")
    conn.executemany("insert into temp.expected(rowid, body) values (?, ?)",
                     [(rid, fts_body(row[7])) for rid, row in by_rowid.items()])
    conn.execute("create virtual table temp.v_have using fts5vocab(main, chunks_fts, instance)")
    conn.execute("create virtual table temp.v_want using fts5vocab(temp, expected, instance)")
    query = "select term, doc, offset from temp.{}"
    have = set(conn.execute(query.format("v_have")).fetchall())
    want = set(conn.execute(query.format("v_want")).fetchall())
    docs = {r[0] for r in conn.execute("select rowid from chunks_fts")}
    if docs != set(by_rowid):
        problems.append(f"FTS rows {len(docs)} != chunk rows {len(by_rowid)}")
    wrong = sorted({doc for _t, doc, _o in have ^ want})
    problems.extend(f"FTS terms of rowid {rid} differ from its chunk" for rid in wrong)
    # BM25 also reads the table's totals (rows, tokens): an index whose deletes never left
    # them ranks differently from a fresh one though every posting is right.
    totals = {name: _totals(conn, name) for name in ("main.chunks_fts", "temp.expected")}
    if totals["main.chunks_fts"] != totals["temp.expected"]:
        problems.append(f"FTS totals (rows, tokens) {totals['main.chunks_fts']} != "
                        f"{totals['temp.expected']} of the chunks")


def _totals(conn: Any, table: str) -> tuple[int, ...]:
    schema, name = table.split(".")
    row = conn.execute(f"select block from {schema}.{name}_data where id = 1").fetchone()
    values = _varints(bytes(row[0])) if row and row[0] is not None else []
    return tuple(values) if any(values) else ()  # an emptied table keeps a record of zeros


def _varints(blob: bytes) -> list[int]:
    """FTS5's averages record: SQLite varints (7 bits a byte, high bit = more follows)."""
    out, value = [], 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = 0
    return out


def _check_vec0(conn: Any, by_rowid: dict[int, Any], problems: list[str]) -> int:
    """vec0 rows must mirror the chunks that have an embedding: same rowid, source, vector."""
    if conn.execute("select 1 from sqlite_master where name = 'chunks_vec'").fetchone() is None:
        return 0
    try:
        vec = conn.execute("select rowid, source, embedding from chunks_vec").fetchall()
    except sqlite3.OperationalError as exc:  # vec0 not loadable in this driver
        problems.append(f"chunks_vec unreadable: {exc}")
        return 0
    with_emb = {rid: r for rid, r in by_rowid.items() if r[8] is not None}
    if {r[0] for r in vec} != set(with_emb):
        problems.append(f"vec0 rows {len(vec)} != chunks with embeddings {len(with_emb)}")
    for rid, source, blob in vec:
        row = with_emb.get(rid)
        if row is not None and (source != row[4] or bytes(blob) != bytes(row[8])):
            problems.append(f"vec0 row {rid} differs from its chunk")
    return len(vec)


def fresh_state(workspace: Path, index_path: Path, **open_kwargs: Any) -> IndexState:
    """State of a brand-new full index of ``workspace`` (same settings, another file)."""
    from openclaw_memory import MemoryIndex

    with MemoryIndex.open(workspace, index_path=index_path, **open_kwargs) as memory:
        memory.sync()
    return read_state(index_path)
