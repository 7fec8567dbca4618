"""Keyword queries answered from FTS5's postings in memory rank and score exactly as FTS5.

Every comparison here is against the query FTS5 answers on the same index file (its own
``bm25()``), so a difference in one token, one count or one floating-point operation fails.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory import MemoryIndex, MemorySettings
from openclaw_memory.language.textsearch import keyword_terms, match_expression, quote_term
from openclaw_memory.store import Store
from openclaw_memory.store.postings import SPAN, Postings
from openclaw_memory.store.postings_read import read_postings
from openclaw_memory.store.term_lookup import CandidateTerms
from openclaw_memory.types import Chunk, MemoryFile

ROOT = Path(__file__).resolve().parent.parent
TEAM = ROOT / "notebooks" / "data" / "kestrel-team"

_WORDS = ("running runs ran runner billing billed bills invoice invoices café naïve résumé "
          "Zoë déjà-vu e-mail x_y user_id 2024 10.01.2024 v2 GPU gpus Postgres postgres's "
          "meeting meetings met Amara Joon Dev Granite Hall climbing climbed slots slot").split()
_CJK = ["我们决定使用方案", "方案已经通过评审", "明天开会讨论预算", "预算超支需要调整方案",
        "北京的会议改到周三", "用户反馈支付失败", "支付服务迁移完成", "周三之前提交报告",
        "東京オフィスの会議", "회의는 수요일입니다"]


def _lines() -> list[str]:
    lines = [line.strip("- ").strip() for f in sorted((TEAM / "memory").glob("*.md"))
             for line in f.read_text(encoding="utf-8").splitlines() if line.strip("#- ").strip()]
    rng = random.Random(7)
    for _ in range(300):
        words = rng.sample(_WORDS, rng.randint(3, 9))
        if rng.random() < 0.4:
            words.append(rng.choice(_CJK) + rng.choice(_CJK)[: rng.randint(1, 6)])
        lines.append(" ".join(words))
    return lines


def _questions() -> list[str]:
    asked = [json.loads(line)["question"]
             for line in (TEAM / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return [*asked, "who ran the billing run?", "café résumé", "naive resume", "user_id x_y",
            "方案", "我们的方案和预算", "会议改到周三", "支付失败了吗", "東京の会議", "회의",
            "10.01.2024 meeting", "postgres's GPUs", "déjà vu e-mail", "the of and"]


def _store(tmp_path: Path, **kwargs: object) -> Store:
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy", fts_tokenizer="porter",
                  postings_min_chunks=0, **kwargs)  # type: ignore[arg-type]
    lines = _lines()
    halves = {"memory/notes.md": ("memory", lines[::2]), "sessions/s.jsonl": ("sessions", lines[1::2])}
    for path, (source, texts) in halves.items():
        chunks = [Chunk(path, source, n, n, t, f"{path}{n}") for n, t in enumerate(texts, 1)]  # type: ignore[arg-type]
        store.replace_file(MemoryFile(path, f"/ws/{path}", source, 1, 10), "h", chunks, None, "m")  # type: ignore[arg-type]
    return store


def _fts5(store: Store, match: str, limit: int, where: str = "", params: tuple[object, ...] = ()
          ) -> list[tuple[int, float]]:
    rows = store.query(f"select f.rowid, bm25(chunks_fts) as r from chunks_fts f "
                       f"join chunks c on c.rowid = f.rowid where chunks_fts match ?{where} "
                       f"order by r, f.rowid limit ?", (match, *params, limit))
    return [(int(a), float(b)) for a, b in rows]


def _expressions() -> list[str]:
    out = []
    for question in _questions():
        terms = keyword_terms(question)
        if terms:
            out.append(" OR ".join(quote_term(t) for t in terms))
            out.append(" AND ".join(quote_term(t) for t in terms[:2]))
    return out


@pytest.fixture()
def ready(tmp_path: Path) -> Store:
    store = _store(tmp_path)
    assert store.wait_for_keyword_postings(60), store.keyword_path()
    assert store.keyword_path().startswith("postings in memory")
    return store


def test_rankings_and_scores_are_fts5s_to_the_last_bit(ready: Store) -> None:
    compared = 0
    for match in _expressions():
        mine = ready.keyword_search(match, 25, ["memory", "sessions"])
        assert mine == _fts5(ready, match, 25), match
        compared += bool(mine)
    assert compared > 30  # most questions match something: the comparison is not vacuous


def test_a_source_filter_and_the_newest_window_match_fts5(ready: Store) -> None:
    newest = ready.max_rowid() - 200
    for match in _expressions():
        assert ready.keyword_search(match, 10, ["memory"]) == _fts5(
            ready, match, 10, " and c.source in (?)", ("memory",)), match
        assert ready.keyword_search(match, 10, ["memory", "sessions"], min_rowid=newest) == _fts5(
            ready, match, 10, " and f.rowid >= ?", (newest,)), match


def test_cjk_pairs_match_as_phrases_like_fts5(ready: Store) -> None:
    match = match_expression("预算方案")
    assert match is not None and '"预 算"' in match
    found = ready.keyword_search(match, 50, ["memory", "sessions"])
    assert found and found == _fts5(ready, match, 50)


def test_scores_of_given_chunks_and_term_counts_match_fts5(ready: Store) -> None:
    everything = [r for (r,) in ready.query("select rowid from chunks")]
    asked = everything[::3]
    for match in _expressions()[:40]:
        reference = {r: s for r, s in _fts5(ready, match, 10_000) if r in set(asked)}
        assert ready.keyword_scores(match, asked) == reference, match
    terms = list(dict.fromkeys(t for q in _questions() for t in keyword_terms(q)))
    _total, counted = ready.term_statistics(terms)
    for term in terms:
        expected = ready.query("select count(*) from chunks_fts where chunks_fts match ?",
                               (quote_term(term),))[0][0]
        assert counted[term] == expected, term


def test_which_candidates_hold_which_terms_matches_the_scratch_table(ready: Store) -> None:
    texts = {int(r): str(t) for r, t in ready.query("select rowid, text from chunks")}
    keys = sorted(texts)[::4]
    terms = list(dict.fromkeys(t for q in _questions() for t in keyword_terms(q)))
    with ready._lock:
        reference = CandidateTerms().lookup(ready._conn, {k: texts[k] for k in keys}, terms)
    assert ready.terms_in(terms, keys) == reference
    assert sum(len(v) for v in reference.values()) > 50


def test_an_edit_is_answered_by_fts5_until_the_new_postings_are_read(ready: Store) -> None:
    match = match_expression("zeppelin")
    assert match is not None
    assert ready.keyword_search(match, 5, ["memory"]) == []
    chunk = Chunk("memory/z.md", "memory", 1, 1, "the zeppelin landed", "z1")
    ready.replace_file(MemoryFile("memory/z.md", "/ws/memory/z.md", "memory", 1, 10), "z",
                       [chunk], None, "m")
    assert [r for r, _ in ready.keyword_search(match, 5, ["memory"])] == [ready.max_rowid()]
    assert ready.wait_for_keyword_postings(60)
    assert ready.keyword_search(match, 5, ["memory"]) == _fts5(ready, match, 5)


def test_postings_are_not_read_past_the_memory_budget_or_below_the_size(tmp_path: Path) -> None:
    tight = _store(tmp_path / "a", max_matrix_mb=0)
    assert not tight.wait_for_keyword_postings(60)
    assert "exceed" in tight.keyword_path()
    small = Store(tmp_path / "b.sqlite", vector_backend="numpy")
    assert not small.wait_for_keyword_postings(60)
    assert "2000+ chunks" in small.keyword_path() or "from 2000" in small.keyword_path()
    off = _store(tmp_path / "c", keyword_backend="fts5")
    assert not off.wait_for_keyword_postings(60)
    assert "off" in off.keyword_path()
    for store in (tight, small, off):
        store.close()


def test_totals_that_disagree_with_the_postings_leave_fts5_answering(
        ready: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.store import postings_read
    from openclaw_memory.store.fts_table import KeywordTotals, totals

    def read(tokens_off: int, rows_off: int) -> Postings | None:
        real = totals(ready._conn)
        monkeypatch.setattr(postings_read, "totals", lambda _conn: KeywordTotals(
            real.rows + rows_off, real.tokens + tokens_off, real.chunks))
        return read_postings(ready._conn, ready.generation(), lambda: False)

    with ready._lock:
        assert read(0, 0) is not None
        assert read(5, 0) is None  # drifted token total
        assert read(0, 3) is None  # drifted row count


def test_the_room_left_beside_the_vectors_is_that_of_the_path_auto_takes_now(
        tmp_path: Path) -> None:
    from openclaw_memory.store.binary_vectors import code_bytes

    store = Store(tmp_path / "i.sqlite", vector_backend="auto", max_matrix_mb=1)
    vectors = np.random.default_rng(3).standard_normal((1000, 512)).astype(np.float32)
    chunks = [Chunk("memory/a.md", "memory", n, n, f"note {n}", f"h{n}") for n in range(1000)]
    store.replace_file(MemoryFile("memory/a.md", "/ws/memory/a.md", "memory", 1, 10), "a",
                       chunks, vectors, "m")
    # 2 MB of float vectors exceed 1 MB: compressed vectors, whatever path the empty index had.
    assert store.vector_memory_bytes() == code_bytes(1000, 512) < 1024 * 1024
    store.close()


def test_closing_stops_a_read_under_way(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.wait_for_keyword_postings(0)  # starts the read, does not wait
    store.close()
    assert store._postings.wait(0)


def test_whole_searches_are_the_same_with_postings_in_memory(tmp_path: Path) -> None:
    questions = _questions()
    results = {}
    for backend in ("fts5", "auto"):
        settings = MemorySettings.model_validate({
            "workspace": str(TEAM), "embedding": {"provider": "none"},
            "store": {"keyword_backend": backend}})
        with MemoryIndex(settings, index_path=tmp_path / f"{backend}.sqlite") as memory:
            memory.sync()
            memory.store._postings.min_chunks = 0
            assert memory.store.wait_for_keyword_postings(60) == (backend == "auto")
            results[backend] = [[(h.path, h.start_line, h.end_line, h.score)
                                 for h in memory.search(q, max_results=6).results]
                                for q in questions]
    assert results["auto"] == results["fts5"]
    assert sum(bool(r) for r in results["auto"]) > 20


def _by_term(postings: Postings) -> dict[str, tuple[list[int], list[float], list[int]]]:
    out = {}
    for term, tid in postings.terms.items():
        lo, hi = int(postings.starts[tid]), int(postings.starts[tid + 1])
        rowids = postings.rowids[postings.docs[lo:hi]].tolist()
        keys = postings.positions.get(tid)
        spots = [] if keys is None else [
            int(postings.rowids[k // SPAN]) * SPAN + int(k % SPAN) for k in keys]
        if rowids:
            out[term] = (rowids, postings.freqs[lo:hi].tolist(), spots)
    return out


def test_an_edit_updates_the_postings_in_place_to_what_a_full_read_gives(ready: Store) -> None:
    edits = {"memory/notes.md": ["the zeppelin 方案 landed at Granite Hall", "billing runs"],
             "memory/new.md": ["a brand new note about 预算 and the zeppelin"]}
    for path, texts in edits.items():
        chunks = [Chunk(path, "memory", n, n, t, f"{path}{n}{t}") for n, t in enumerate(texts, 1)]
        ready.replace_file(MemoryFile(path, f"/ws/{path}", "memory", 1, 10), "e", chunks, None, "m")
    assert ready.wait_for_keyword_postings(60)
    assert (ready._postings.last_read or "").startswith("incremental"), ready._postings.last_read
    _same_as_a_full_read(ready)
    # Only additions (nothing gone): the previous arrays are reused as they are.
    chunk = Chunk("memory/more.md", "memory", 1, 1, "a quokka and 方案 again", "q1")
    ready.replace_file(MemoryFile("memory/more.md", "/ws/memory/more.md", "memory", 1, 10), "q",
                       [chunk], None, "m")
    assert ready.wait_for_keyword_postings(60)
    assert "0 gone" in (ready._postings.last_read or "")
    _same_as_a_full_read(ready)


def _same_as_a_full_read(ready: Store) -> None:
    merged = ready._postings.get(ready.generation())
    assert merged is not None
    with ready._lock:
        ready._conn.execute("begin")
        try:
            full = read_postings(ready._conn, ready.generation(), lambda: False)
        finally:
            ready._conn.execute("rollback")
    assert full is not None
    assert merged.rowids.tolist() == full.rowids.tolist()
    assert _by_term(merged) == _by_term(full)
    assert np.array_equal(merged.norms, full.norms)
    assert [merged.source_names[c] for c in merged.sources] == [
        full.source_names[c] for c in full.sources]
    for match in _expressions():
        assert ready.keyword_search(match, 25, ["memory", "sessions"]) == _fts5(ready, match, 25)


def test_a_vocabulary_of_identifiers_stops_the_read_at_the_budget_and_fts5_answers(
        tmp_path: Path) -> None:
    # 60 000 distinct tokens in few occurrences: the token count alone (the old estimate:
    # 1.4 MB) fits 16 MB; what holding 60 000 terms takes does not.
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy", postings_min_chunks=0,
                  max_matrix_mb=16)
    chunks = [Chunk("memory/ids.md", "memory", n, n,
                    " ".join(f"ref{n:05d}x{k:02d}" for k in range(30)), f"h{n}")
              for n in range(1, 2001)]
    store.replace_file(MemoryFile("memory/ids.md", "/ws/memory/ids.md", "memory", 1, 10), "h",
                       chunks, None, "m")
    assert not store.wait_for_keyword_postings(60)
    assert "exceed" in store.keyword_path() and "distinct terms" in store.keyword_path()
    assert store.keyword_search('"ref00042x07"', 5, ["memory"])[0][0] == 42
    store.close()


def test_the_size_in_status_counts_the_terms_it_holds(ready: Store) -> None:
    postings = ready._postings.get(ready.generation())
    assert postings is not None
    arrays = postings.rowids.nbytes + postings.docs.nbytes + postings.freqs.nbytes
    assert postings.nbytes > arrays + 50 * len(postings.terms)


def test_a_new_process_loads_the_postings_saved_beside_the_index_and_ranks_as_fts5(
        tmp_path: Path) -> None:
    from openclaw_memory.store.postings_file import postings_path

    first = _store(tmp_path)
    assert first.wait_for_keyword_postings(60) and first._postings.last_read == "full"
    saved = postings_path(tmp_path / "i.sqlite")
    assert saved.is_file() and saved.stat().st_mode & 0o777 == 0o600
    first.close()
    second = Store(tmp_path / "i.sqlite", vector_backend="numpy", fts_tokenizer="porter",
                   postings_min_chunks=0)
    assert second.wait_for_keyword_postings(60)
    assert second._postings.last_read == "loaded from the file beside the index"
    compared = 0
    for match in _expressions():
        mine = second.keyword_search(match, 25, ["memory", "sessions"])
        assert mine == _fts5(second, match, 25), match
        compared += bool(mine)
    assert compared > 30
    # Notes added since: the saved postings are brought up to date, and saved again.
    chunks = [Chunk("memory/more.md", "memory", 1, 1, "a brand new zeppelin note", "hz")]
    second.replace_file(MemoryFile("memory/more.md", "/ws/memory/more.md", "memory", 1, 10),
                        "hz", chunks, None, "m")
    second.close()
    third = Store(tmp_path / "i.sqlite", vector_backend="numpy", fts_tokenizer="porter",
                  postings_min_chunks=0)
    assert third.wait_for_keyword_postings(60)
    assert (third._postings.last_read or "").startswith("loaded from the file beside the index, "
                                                        "then incremental")
    assert third.keyword_search('"zeppelin"', 5, ["memory", "sessions"]) == _fts5(
        third, '"zeppelin"', 5) != []
    third.close()


def test_postings_saved_beside_another_index_file_are_never_used(tmp_path: Path) -> None:
    import shutil

    from openclaw_memory.store.postings_file import postings_path

    first = _store(tmp_path / "a")
    assert first.wait_for_keyword_postings(60)
    first.close()
    other = _store(tmp_path / "b")  # same rows and generation, another file
    other.close()
    shutil.copy(postings_path(tmp_path / "a" / "i.sqlite"), postings_path(tmp_path / "b" / "i.sqlite"))
    reopened = Store(tmp_path / "b" / "i.sqlite", vector_backend="numpy", fts_tokenizer="porter",
                     postings_min_chunks=0)
    assert reopened.wait_for_keyword_postings(60) and reopened._postings.last_read == "full"
    reopened.close()
