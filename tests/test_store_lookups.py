"""The per-candidate lookups hybrid search makes: BM25 of given chunks, vectors of a file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from openclaw_memory.language.textsearch import match_expression
from openclaw_memory.store import Store
from openclaw_memory.types import Chunk, MemoryFile


def _file(path: str) -> MemoryFile:
    return MemoryFile(path, f"/ws/{path}", "memory", 1, 10)


def _store_with(tmp_path: Path, texts: list[str], vector_backend: str = "numpy") -> Store:
    store = Store(tmp_path / "i.sqlite", vector_backend=vector_backend)
    chunks = [Chunk("a.md", "memory", n, n, t, f"h{n}") for n, t in enumerate(texts, 1)]
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((len(texts), 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store.replace_file(_file("a.md"), "x", chunks, vecs, "m")
    return store


def test_keyword_scores_returns_only_the_requested_chunks_that_match(tmp_path: Path) -> None:
    texts = ["billing postgres", "billing again", "coffee", "billing three", "billing four"]
    store = _store_with(tmp_path, texts)
    rowid = {row.text: r for r, row in store.chunks(list(range(1, 6))).items()}
    match = match_expression("billing")
    assert match is not None
    asked = [rowid["billing postgres"], rowid["coffee"], rowid["billing four"]]
    scores = store.keyword_scores(match, asked)
    # Rows 2 and 4 match and lie between the asked rowids, but were not asked for.
    assert set(scores) == {rowid["billing postgres"], rowid["billing four"]}
    everything = dict(store.keyword_search(match, 10, ["memory"]))
    assert all(scores[k] == everything[k] for k in scores)


def test_keyword_scores_of_no_chunks_is_empty(tmp_path: Path) -> None:
    store = _store_with(tmp_path, ["billing"])
    match = match_expression("billing")
    assert match is not None
    assert store.keyword_scores(match, []) == {}


def test_every_chunk_of_a_file_gets_its_own_vector(tmp_path: Path, vector_backend: str) -> None:
    # vec0 rows are inserted once per file: each rowid must still get its own vector.
    store = _store_with(tmp_path, ["one", "two", "three", "four"], vector_backend)
    rows = store.query("select rowid, embedding from chunks order by rowid")
    for rowid, blob in rows:
        hits = store.vector_search(np.frombuffer(blob, np.float32), 1, ["memory"])
        assert hits[0][0] == rowid
        assert abs(hits[0][1] - 1.0) < 1e-5
