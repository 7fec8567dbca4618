"""The postings file beside the index: mapped in place, the terms read where they lie, and a
damaged or foreign file never trusted (FTS5's postings are read again instead)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openclaw_memory.store import Store
from openclaw_memory.store.postings_file import load_postings, postings_path
from openclaw_memory.store.term_ids import TermIds, term_arrays
from openclaw_memory.types import Chunk, MemoryFile

_TERMS = ["zeta", "alpha", "方案", "ref00042x07", "é", "e", "alphabet", "", "🙂", "z"]


def _term_ids(terms: list[str]) -> TermIds:
    blob, ends, order = term_arrays(terms)
    return TermIds(blob, ends, order)


def test_term_ids_answer_every_term_with_its_id_and_nothing_for_others() -> None:
    ids = _term_ids(_TERMS)
    assert [ids.get(t) for t in _TERMS] == list(range(len(_TERMS)))
    assert [ids[t] for t in _TERMS] == list(range(len(_TERMS)))
    for absent in ("alph", "alphabets", "zz", "方", "E", "ref00042x0"):
        assert ids.get(absent) is None and absent not in ids
    with pytest.raises(KeyError):
        ids["missing"]
    assert len(ids) == len(_TERMS)


def test_term_ids_iterate_in_id_order_with_or_without_non_ascii_terms() -> None:
    assert list(_term_ids(_TERMS)) == _TERMS
    ascii_only = ["b", "a", "ref1x2", "c"]
    assert list(_term_ids(ascii_only)) == ascii_only
    assert list(_term_ids([])) == [] and _term_ids([]).get("a") is None


def test_term_ids_refuse_ends_that_do_not_match_their_blob() -> None:
    blob, ends, order = term_arrays(["a", "bc"])
    with pytest.raises(ValueError):
        TermIds(blob + b"x", ends, order)


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy", fts_tokenizer="porter",
                  postings_min_chunks=0)
    texts = [f"note {n} about the harbor deploy ref{n:04d}x1 方案{n % 7}" for n in range(300)]
    chunks = [Chunk("memory/a.md", "memory", n, n, t, f"h{n}") for n, t in enumerate(texts, 1)]
    store.replace_file(MemoryFile("memory/a.md", "/ws/memory/a.md", "memory", 1, 10), "h",
                       chunks, None, "m")
    assert store.wait_for_keyword_postings(60)
    return store


def _reopened(tmp_path: Path) -> Store:
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy", fts_tokenizer="porter",
                  postings_min_chunks=0)
    store.keyword_search('"harbor"', 3, ["memory"])  # the first search starts the read
    assert store.wait_for_keyword_postings(60)
    return store


def test_saved_postings_are_mapped_read_only_and_their_terms_read_in_place(
        tmp_path: Path) -> None:
    _store(tmp_path).close()
    loaded = load_postings(tmp_path / "i.sqlite", 1 << 30)
    assert loaded is not None and isinstance(loaded.terms, TermIds)
    assert not loaded.docs.flags.writeable and not loaded.norms.flags.writeable
    assert loaded.terms.get("ref0042x1") is not None and loaded.terms.get("nowhere") is None


def test_saved_norms_are_the_ones_computed_from_the_postings(tmp_path: Path) -> None:
    store = _store(tmp_path)
    computed = store._postings.get(store.generation())
    store.close()
    loaded = load_postings(tmp_path / "i.sqlite", 1 << 30)
    assert computed is not None and loaded is not None
    assert np.array_equal(loaded.norms, computed.norms)


@pytest.mark.parametrize("damage", ["truncated", "magic", "header", "empty"])
def test_a_damaged_postings_file_is_removed_and_fts5_read_again(tmp_path: Path,
                                                                 damage: str) -> None:
    _store(tmp_path).close()
    saved = postings_path(tmp_path / "i.sqlite")
    data = saved.read_bytes()
    saved.write_bytes({"truncated": data[: len(data) // 2], "magic": b"NOTOURS!" + data[8:],
                       "header": data[:16] + b"[" + data[17:], "empty": b""}[damage])
    store = _reopened(tmp_path)
    assert store._postings.last_read == "full"
    assert store.keyword_search('"ref0042x1"', 3, ["memory"])[0][0] == 43
    store.close()
    assert load_postings(tmp_path / "i.sqlite", 1 << 30) is not None  # saved anew


@pytest.mark.parametrize("array", ["docs", "term_order", "term_ends", "starts", "sources"])
def test_an_index_out_of_range_in_the_file_is_refused_not_searched(tmp_path: Path,
                                                                    array: str) -> None:
    import json
    import struct

    _store(tmp_path).close()
    saved = postings_path(tmp_path / "i.sqlite")
    data = bytearray(saved.read_bytes())
    (length,) = struct.unpack_from("<Q", data, 8)
    header = json.loads(data[16:16 + length])
    dtype, _shape, at = header["arrays"][array]
    start = -(-(16 + length) // 64) * 64 + at
    # The type's largest value: past any row, term, byte or source name of this file.
    value = np.array([np.iinfo(np.dtype(dtype)).max], dtype=dtype)
    data[start:start + value.nbytes] = value.tobytes()
    saved.write_bytes(bytes(data))
    assert load_postings(tmp_path / "i.sqlite", 1 << 30) is None
    store = _reopened(tmp_path)
    assert store._postings.last_read == "full"
    assert store.keyword_search('"ref0042x1"', 3, ["memory"])[0][0] == 43
    store.close()


def test_a_postings_file_larger_than_the_budget_is_not_loaded(tmp_path: Path) -> None:
    _store(tmp_path).close()
    size = postings_path(tmp_path / "i.sqlite").stat().st_size
    assert load_postings(tmp_path / "i.sqlite", size - 1) is None
    assert load_postings(tmp_path / "i.sqlite", size) is not None


def test_saving_removes_the_older_npz_postings_file(tmp_path: Path) -> None:
    legacy = tmp_path / "i.sqlite.postings.npz"
    legacy.write_bytes(b"PK older format")
    _store(tmp_path).close()
    assert not legacy.exists() and postings_path(tmp_path / "i.sqlite").is_file()


def test_term_ids_remember_a_bounded_number_of_answers_and_stay_right(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.store import term_ids

    monkeypatch.setattr(term_ids, "MEMO_TERMS", 3)
    ids = _term_ids(_TERMS)
    for _ in range(3):  # past the bound several times over: answers come from the search again
        assert [ids.get(t) for t in _TERMS] == list(range(len(_TERMS)))
        assert ids.get("absent") is None
        assert len(ids._memo) <= 3
