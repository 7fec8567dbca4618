"""The SQLite store on real files, on both vector paths."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory.errors import IndexCorruptError
from openclaw_memory.language.textsearch import match_expression
from openclaw_memory.store import Store
from openclaw_memory.types import Chunk, MemoryFile


def _chunk(path: str, n: int, text: str) -> Chunk:
    return Chunk(path, "memory", n, n, text, f"h{n}-{text}")


def _file(path: str) -> MemoryFile:
    return MemoryFile(path, f"/ws/{path}", "memory", 1, 10)


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, np.float32)
    return a / np.linalg.norm(a)


def test_vector_path_is_reported(tmp_path: Path, vector_backend: str) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend=vector_backend)
    assert store.vector_path == vector_backend
    assert store.vector_reason


def test_replace_file_swaps_rows_and_both_searches_find_them(tmp_path: Path,
                                                            vector_backend: str) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend=vector_backend)
    chunks = [_chunk("a.md", 1, "postgres billing"), _chunk("a.md", 2, "coffee roast")]
    vecs = np.stack([_unit([1, 0, 0]), _unit([0, 1, 0])])
    assert store.replace_file(_file("a.md"), "x", chunks, vecs, "m") == (0, 2)
    hits = store.vector_search(_unit([0.9, 0.1, 0]), 5, ["memory"])
    assert [store.chunks([k])[k].text for k, _ in hits] == ["postgres billing", "coffee roast"]
    expr = match_expression("coffee")
    assert expr is not None
    kw = store.keyword_search(expr, 5, ["memory"])
    assert len(kw) == 1 and kw[0][1] < 0
    removed, added = store.replace_file(_file("a.md"), "y", chunks[:1], vecs[:1], "m")
    assert (removed, added) == (2, 1)
    assert store.counts()["chunks"] == 1
    assert len(store.vector_search(_unit([0, 1, 0]), 5, ["memory"])) == 1


def test_vec0_and_numpy_rank_identically(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(300, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    chunks = [_chunk("a.md", i + 1, f"text {i}") for i in range(300)]
    results = []
    query = _unit(list(rng.normal(size=32)))
    for backend in ("vec0", "numpy"):
        store = Store(tmp_path / f"{backend}.sqlite", vector_backend=backend)
        store.replace_file(_file("a.md"), "x", chunks, vecs, "m")
        hits = store.vector_search(query, 10, ["memory"])
        results.append(([k for k, _ in hits], [s for _, s in hits]))
        store.close()
    assert results[0][0] == results[1][0]
    assert np.allclose(results[0][1], results[1][1], atol=1e-5)


def test_numpy_matrix_reloads_after_another_connection_writes(tmp_path: Path) -> None:
    path = tmp_path / "i.sqlite"
    reader = Store(path, vector_backend="numpy")
    writer = Store(path, vector_backend="numpy")
    writer.replace_file(_file("a.md"), "x", [_chunk("a.md", 1, "one")],
                        np.stack([_unit([1, 0])]), "m")
    assert len(reader.vector_search(_unit([1, 0]), 5, ["memory"])) == 1
    writer.replace_file(_file("b.md"), "x", [_chunk("b.md", 1, "two")],
                        np.stack([_unit([0, 1])]), "m")
    assert len(reader.vector_search(_unit([1, 0]), 5, ["memory"])) == 2


def test_delete_files_removes_chunks_fts_and_vectors(tmp_path: Path, vector_backend: str) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend=vector_backend)
    store.replace_file(_file("a.md"), "x", [_chunk("a.md", 1, "alpha")],
                       np.stack([_unit([1, 0])]), "m")
    assert store.delete_files(["a.md"]) == 1
    assert store.counts() == {"files": 0, "chunks": 0, "vectors": 0, "cache_entries": 0}
    assert store.keyword_search('"alpha"', 5, ["memory"]) == []
    assert store.vector_search(_unit([1, 0]), 5, ["memory"]) == []


def test_vectors_are_stored_as_float32_blobs(tmp_path: Path) -> None:
    path = tmp_path / "i.sqlite"
    store = Store(path, vector_backend="numpy")
    store.replace_file(_file("a.md"), "x", [_chunk("a.md", 1, "alpha")],
                       np.stack([_unit([3, 4])]), "m")
    store.close()
    blob = sqlite3.connect(path).execute("select embedding from chunks").fetchone()[0]
    assert isinstance(blob, bytes) and len(blob) == 8
    assert np.allclose(np.frombuffer(blob, np.float32), [0.6, 0.8])


def test_dimension_change_recreates_the_vec0_table(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend="vec0")
    store.replace_file(_file("a.md"), "x", [_chunk("a.md", 1, "a")], np.stack([_unit([1, 0])]),
                       "m")
    store.delete_files(["a.md"])
    store.replace_file(_file("a.md"), "x", [_chunk("a.md", 1, "a")],
                       np.stack([_unit([1, 0, 0])]), "m2")
    assert len(store.vector_search(_unit([1, 0, 0]), 5, ["memory"])) == 1


def test_embedding_cache_round_trip_and_prune(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite")
    store.put_many("p", "m", "k", {"h1": _unit([1, 0]), "h2": _unit([0, 1])})
    got = store.get_many("p", "m", "k", ["h1", "h2", "h3"])
    assert set(got) == {"h1", "h2"} and got["h1"].dtype == np.float32
    assert store.get_many("p", "m", "other-key", ["h1"]) == {}
    assert store.prune_cache(1) == 1


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "foreign.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("create table customers(id integer)")
    conn.commit()
    conn.close()
    with pytest.raises(IndexCorruptError, match="another application"):
        Store(path)


def test_garbage_file_is_refused_as_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexCorruptError):
        Store(path)


def test_rebuild_copy_replaces_the_live_index_in_one_step(tmp_path: Path) -> None:
    live = Store(tmp_path / "live.sqlite", vector_backend="vec0")
    live.replace_file(_file("old.md"), "x", [_chunk("old.md", 1, "old")],
                      np.stack([_unit([1, 0])]), "m")
    reader = Store(tmp_path / "live.sqlite", vector_backend="vec0")
    fresh = Store(tmp_path / "fresh.sqlite", vector_backend="vec0")
    fresh.replace_file(_file("new.md"), "x", [_chunk("new.md", 1, "new")],
                       np.stack([_unit([0, 1])]), "m")
    live.replace_with(fresh)
    assert set(reader.files()) == {"new.md"}
    assert [live.chunks([k])[k].path for k, _ in live.vector_search(_unit([0, 1]), 5,
                                                                      ["memory"])] == ["new.md"]


@pytest.mark.parametrize("backend", ["numpy", "binary"])
def test_editing_the_newest_file_never_leaves_its_old_vector_in_memory(tmp_path: Path,
                                                                      backend: str) -> None:
    # The newest file's chunks hold the highest rowids; SQLite would hand them out again to
    # the chunks replacing them, and the in-memory copy (brought up to date by rowid) would
    # keep the old vectors under them.
    store = Store(tmp_path / "i.sqlite", vector_backend=backend)
    axes = np.eye(4, dtype=np.float32)
    store.replace_file(_file("b.md"), "b", [_chunk("b.md", 1, "bee")], axes[:1], "m")
    store.replace_file(_file("a.md"), "x", [_chunk("a.md", 1, "old text")], axes[1:2], "m")
    [(old, _)] = store.vector_search(axes[1], 1, ["memory"])  # the copy is in memory now
    store.replace_file(_file("a.md"), "y", [_chunk("a.md", 1, "new text")], axes[2:3], "m")
    [(new, score)] = store.vector_search(axes[2], 1, ["memory"])
    assert new != old and score == pytest.approx(1.0)
    assert store.chunks([new])[new].text == "new text"
    assert all(s < 0.5 for _, s in store.vector_search(axes[1], 2, ["memory"]))
    store.close()
