"""``vector_backend="auto"`` answers from the in-memory matrix while it fits the budget and
builds the vec0 table only past it, ranks exactly as vec0 does, and keeps its matrix up to
date incrementally."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openclaw_memory.store import Store
from openclaw_memory.store.vectors import NumpyVectors
from openclaw_memory.types import Chunk, MemoryFile

DIMS = 8


def add(store: Store, name: str, n: int, rng: np.random.Generator) -> None:
    path = f"memory/{name}.md"
    chunks = [Chunk(path, "memory", i + 1, i + 1, f"line {i} of {name}", f"h-{name}-{i}") for i in range(n)]
    vectors = rng.standard_normal((n, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.replace_file(MemoryFile(path, "memory", 1, n, 1), f"hash-{name}", chunks, vectors, "m")


def same(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    return [r for r, _ in a] == [r for r, _ in b] and np.allclose([s for _, s in a], [s for _, s in b],
                                                                  atol=1e-5)


def unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(3)


def has_vec0(store: Store) -> bool:
    return bool(store.query("select 1 from sqlite_master where name = 'chunks_vec'"))


def assert_numpy_path_agrees(path: Path, query: np.ndarray, k: int,
                             hits: list[tuple[int, float]]) -> None:
    numpy_store = Store(path, vector_backend="numpy")
    try:
        assert same(numpy_store.vector_search(query, k, ("memory",)), hits)
    finally:
        numpy_store.close()


def needs_vec(tmp_path: Path) -> None:
    probe = Store(tmp_path / "probe.sqlite")
    loadable = probe.driver.vec_loadable
    probe.close()
    if not loadable:
        pytest.skip("sqlite-vec does not load here")


def test_auto_answers_from_memory_and_builds_no_vec0_table_it_does_not_need(
        tmp_path: Path, rng: np.random.Generator) -> None:
    needs_vec(tmp_path)
    store = Store(tmp_path / "i.sqlite")
    add(store, "a", 30, rng)
    assert store.settle_vector_index() is None and not has_vec0(store)
    query = unit(rng)
    hits = store.vector_search(query, 5, ("memory",))
    assert store.vector_path == "numpy" and "in-memory matrix of" in store.vector_reason
    assert "no vec0 table needed" in store.vector_reason
    vec0 = Store(tmp_path / "i.sqlite", vector_backend="vec0")
    assert vec0.settle_vector_index() == "built" and has_vec0(vec0)
    assert same(vec0.vector_search(query, 5, ("memory",)), hits)
    vec0.close()
    # Back under auto, the table it does not answer from is dropped, not kept up to date.
    assert store.settle_vector_index() == "dropped" and not has_vec0(store)
    assert same(store.vector_search(query, 5, ("memory",)), hits)
    store.close()


def test_auto_falls_back_to_vec0_past_the_memory_budget_once_the_table_is_built(
        tmp_path: Path, rng: np.random.Generator) -> None:
    needs_vec(tmp_path)
    store = Store(tmp_path / "i.sqlite", max_matrix_mb=0)
    add(store, "a", 30, rng)
    query = unit(rng)
    before = store.vector_search(query, 5, ("memory",))
    assert store.vector_path == "numpy" and "not built yet" in store.vector_reason
    assert store.settle_vector_index() == "built"
    hits = store.vector_search(query, 5, ("memory",))
    assert store.vector_path == "vec0" and "exceed store.max_matrix_mb" in store.vector_reason
    assert_numpy_path_agrees(tmp_path / "i.sqlite", query, 5, hits)
    assert same(before, hits)
    store.close()


def test_a_built_vec0_table_is_kept_complete_by_later_writes(
        tmp_path: Path, rng: np.random.Generator) -> None:
    needs_vec(tmp_path)
    store = Store(tmp_path / "i.sqlite", max_matrix_mb=0)
    add(store, "a", 10, rng)
    store.settle_vector_index()
    add(store, "b", 12, rng)
    add(store, "a", 5, rng)  # replaced: its old rows leave vec0 too
    late = Chunk("memory/c.md", "memory", 1, 1, "a note whose vector came later", "h-c")
    store.replace_file(MemoryFile("memory/c.md", "memory", 1, 1, 1), "hash-c", [late], None, "m")
    rowid = store.chunks_without_vectors(10)[0][0]
    assert store.set_vectors([rowid], unit(rng)[None, :]) == 1  # a backfill reaches vec0 too
    query = unit(rng)
    hits = store.vector_search(query, 40, ("memory",))
    assert store.vector_path == "vec0" and len(hits) == 18 and rowid in {r for r, _ in hits}
    assert_numpy_path_agrees(tmp_path / "i.sqlite", query, 40, hits)
    store.close()


def test_the_matrix_follows_adds_deletes_and_backfills_without_a_full_reload(
        tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy")
    add(store, "a", 20, rng)
    add(store, "b", 20, rng)
    query = unit(rng)
    store.vector_search(query, 3, ("memory",))
    full_loads = []
    original = NumpyVectors._load

    def counting(self: NumpyVectors, conn: object, sources: object) -> object:
        full_loads.append(1)
        return original(self, conn, sources)  # type: ignore[arg-type]

    monkeypatch.setattr(NumpyVectors, "_load", counting)
    store.delete_files(["memory/a.md"])
    add(store, "c", 15, rng)
    add(store, "b", 10, rng)  # replaced: old rows gone, new rowids
    incremental = store.vector_search(query, 40, ("memory",))
    assert full_loads == []
    fresh = Store(tmp_path / "i.sqlite", vector_backend="numpy")
    assert same(fresh.vector_search(query, 40, ("memory",)), incremental)
    assert len(incremental) == 25
    rows = store.chunks([rowid for rowid, _ in incremental])
    assert {row.path for row in rows.values()} == {"memory/b.md", "memory/c.md"}
    store.close()
    fresh.close()


# ---------------------------------------------------------------------- binary codes


def add_clustered(store: Store, name: str, n: int, dims: int, rng: np.random.Generator,
                  centers: np.ndarray) -> None:
    """Vectors the way embeddings lie: around topics, not spread evenly over the sphere."""
    path = f"memory/{name}.md"
    chunks = [Chunk(path, "memory", i + 1, i + 1, f"line {i} of {name}", f"h-{name}-{i}") for i in range(n)]
    vectors = centers[rng.integers(0, len(centers), n)] + 0.1 * rng.standard_normal((n, dims))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    store.replace_file(MemoryFile(path, "memory", 1, n, 1), f"hash-{name}", chunks, vectors, "m")


def binary_store(tmp_path: Path, rng: np.random.Generator, dims: int = 128) -> tuple[Store, np.ndarray]:
    store = Store(tmp_path / "i.sqlite")
    centers = rng.standard_normal((40, dims)) / np.sqrt(dims) * 2
    for part in range(4):
        add_clustered(store, f"p{part}", 1500, dims, rng, centers)
    # Over the float matrix's budget, within the codes': the budget auto reads, in bytes.
    store.max_matrix_bytes = 6000 * dims * 4 - 1
    return store, centers


def test_past_the_matrix_budget_auto_answers_from_binary_codes_with_exact_scores(
        tmp_path: Path, rng: np.random.Generator) -> None:
    store, centers = binary_store(tmp_path, rng)
    store._binary.pool = 300  # a pool of 5 % of the rows, so the pre-selection is what is tested
    assert store.settle_vector_index() is None and not has_vec0(store)  # no vec0 needed
    exact = Store(tmp_path / "i.sqlite", vector_backend="numpy")
    found = 0
    for _ in range(60):
        query = centers[rng.integers(0, len(centers))] + 0.1 * rng.standard_normal(centers.shape[1])
        query = (query / np.linalg.norm(query)).astype(np.float32)
        hits = store.vector_search(query, 6, ("memory",))
        truth = exact.vector_search(query, 6, ("memory",))
        assert store.vector_path == "binary" and "compressed vectors in memory" in store.vector_reason
        scores = exact.cosines(query, [r for r, _ in hits])
        assert all(abs(score - scores[r]) < 1e-5 for r, score in hits)  # scores are exact
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        found += len({r for r, _ in hits} & {r for r, _ in truth})
    assert found / (60 * 6) >= 0.97
    assert store._binary.nbytes() < store.max_matrix_bytes / 3  # a byte a dimension, not four
    assert store._numpy.nbytes() == 0  # no float matrix kept beside the codes
    exact.close()
    store.close()


def test_binary_codes_follow_adds_and_deletes_and_filter_by_folder(
        tmp_path: Path, rng: np.random.Generator) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend="binary")
    add(store, "a", 20, rng)
    add(store, "b", 20, rng)
    query = unit(rng)
    store.vector_search(query, 3, ("memory",))
    store.delete_files(["memory/a.md"])
    add(store, "c", 15, rng)
    hits = store.vector_search(query, 40, ("memory",))
    assert store.vector_path == "binary" and len(hits) == 35  # a pool larger than the index: all
    assert_numpy_path_agrees(tmp_path / "i.sqlite", query, 40, hits)
    inside = store.vector_search(query, 40, ("memory",), path_prefix="memory/c")
    assert len(inside) == 15
    paths = {r[0] for r in store.query(
        f"select path from chunks where rowid in ({','.join(str(r) for r, _ in inside)})")}
    assert paths == {"memory/c.md"}
    store.close()


def test_cosines_of_chosen_chunks_come_from_the_loaded_matrix_and_agree_with_the_database(
        tmp_path: Path, rng: np.random.Generator) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy")
    add(store, "a", 40, rng)
    add(store, "b", 30, rng)
    query = unit(rng)
    wanted = [r for r, in store.query("select rowid from chunks order by rowid desc limit 25")]
    from_database = store.cosines(query, [*wanted, 10_000])  # one rowid no chunk has
    assert store._numpy.loaded(store.generation()) is None  # nothing read yet
    store.vector_search(query, 6, ("memory",))  # the matrix searches use is read
    assert store._numpy.loaded(store.generation()) is not None
    reads: list[str] = []
    store._conn.set_trace_callback(reads.append)
    from_matrix = store.cosines(query, [*wanted, 10_000])
    store._conn.set_trace_callback(None)
    assert from_matrix.keys() == from_database.keys() == set(wanted)
    assert all(abs(from_matrix[r] - from_database[r]) < 1e-6 for r in wanted)
    # Only the rowid the matrix lacks is looked for in the database.
    assert [sql for sql in reads if "embedding from chunks" in sql] == [
        "select rowid, embedding from chunks where embedding is not null and rowid in (10000)"]
    add(store, "c", 5, rng)  # a new generation: the matrix is stale until a search reads it
    assert store._numpy.loaded(store.generation()) is None
    store.close()


def test_the_matrix_is_read_in_batches_exactly_and_refuses_vectors_of_two_widths(
        tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.store import vectors as vectors_module

    monkeypatch.setattr(vectors_module, "_READ_BATCH", 7)  # batches end inside the rows
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy")
    add(store, "a", 40, rng)
    sql = "select rowid, embedding from chunks order by rowid"
    rowids, matrix = NumpyVectors()._read(store._conn, sql, (), 40)
    expected = store.query(sql)
    assert rowids.tolist() == [r for r, _ in expected]
    assert np.array_equal(matrix, np.stack([np.frombuffer(b, np.float32) for _, b in expected]))
    store._conn.execute("update chunks set embedding = ? where rowid = (select max(rowid) "
                        "from chunks)", (np.ones(DIMS * 2, np.float32).tobytes(),))
    with pytest.raises(ValueError, match="changed shape"):
        NumpyVectors()._read(store._conn, sql, (), 40)
    store.close()
