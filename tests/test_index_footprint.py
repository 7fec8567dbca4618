"""Each vector is stored once: in its chunk while the text is indexed, in the embedding cache
only once the text is gone; FTS5 keeps no second copy of the text; the vec0 table exists
only when it answers. Text seen before is never embedded again."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np
import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.embeddings.base import EmbeddingProvider, provider_key_for


class Counting(EmbeddingProvider):
    id = "counting"
    model = "counting-16"
    max_input_tokens = 10_000

    def __init__(self) -> None:
        super().__init__(dims=16)
        self.provider_key = provider_key_for(self.id)
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.texts.extend(texts)
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], np.uint8) for t in texts]
        return np.asarray(rows, np.float32) + 1.0


def _note(n: int, topic: str) -> str:
    return "\n".join(f"- {topic} item {i}: " + "word " * 60 for i in range(n)) + "\n"


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    for day, topic in ((1, "walrus"), (2, "narwhal"), (3, "puffin")):
        (root / "memory" / f"2026-01-0{day}.md").write_text(_note(12, topic), encoding="utf-8")
    return root


def _open(ws: Path, provider: Counting, **overrides: object) -> MemoryIndex:
    return MemoryIndex.open(ws, index_path=ws.parent / "index.sqlite", embedder=provider,
                            **overrides)


def _cache_rows(memory: MemoryIndex) -> int:
    return int(memory.store.query("select count(*) from embedding_cache")[0][0])


def test_an_indexed_vector_lives_in_its_chunk_only(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider) as memory:
        memory.sync()
        counts = memory.store.counts()
        assert counts["vectors"] == counts["chunks"] > 3
        assert _cache_rows(memory) == 0
        tables = {r[0] for r in memory.store.query("select name from sqlite_master")}
        assert "chunks_vec" not in tables  # the matrix answers: no second copy on disk
        assert "chunks_fts_content" not in tables  # no second copy of the text
        assert memory.search("walrus item").results


def test_an_edit_embeds_only_new_text_and_keeps_the_old_vectors_in_the_cache(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider) as memory:
        memory.sync()
        chunks = memory.store.counts()["chunks"]
        provider.texts.clear()
        path = ws / "memory" / "2026-01-02.md"
        original = path.read_text(encoding="utf-8")
        path.write_text(original.replace("narwhal item 0:", "narwhal item zero:"),
                        encoding="utf-8")
        report = memory.sync()
        assert report.embedded == len(provider.texts) >= 1
        assert report.cache_hits >= 1  # unchanged chunks of the edited file
        assert memory.store.counts()["chunks"] == chunks
        retired = _cache_rows(memory)
        assert retired == report.embedded  # the replaced chunks' vectors, and nothing else
        provider.texts.clear()
        path.write_text(original, encoding="utf-8")  # undo: every vector is known again
        report = memory.sync()
        assert provider.texts == [] and report.embedded == 0
        assert _cache_rows(memory) == retired  # now the edited version's vectors wait there


def test_a_deleted_file_comes_back_without_embedding_and_the_cache_empties(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider) as memory:
        memory.sync()
        path = ws / "memory" / "2026-01-03.md"
        text = path.read_text(encoding="utf-8")
        path.unlink()
        removed = memory.sync().chunks_removed
        assert _cache_rows(memory) == removed > 0
        provider.texts.clear()
        path.write_text(text, encoding="utf-8")
        assert memory.sync().embedded == 0 and provider.texts == []
        assert _cache_rows(memory) == 0


def test_a_rebuild_embeds_nothing_the_old_index_held(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider) as memory:
        chunks = memory.sync().chunks_added
    provider.texts.clear()
    with _open(ws, provider, store={"fts_tokenizer": "unicode61"}) as memory:
        report = memory.sync()
        assert report.full_rebuild and report.embedded == 0 and report.cache_hits == chunks
        assert provider.texts == [] and _cache_rows(memory) == 0


def test_another_models_vectors_are_not_served_from_the_chunks(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider) as memory:
        memory.sync()
        hashes = [r[0] for r in memory.store.query("select hash from chunks")]
        assert memory.store.get_many("counting", "other-model", provider.provider_key,
                                     hashes) == {}
        served = memory.store.get_many(provider.id, provider.model, provider.provider_key,
                                       hashes)
        assert set(served) == set(hashes)


def test_vectors_of_text_gone_are_kept_up_to_the_configured_number(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider, embedding={"cache_max_entries": 2}) as memory:
        memory.sync()
        (ws / "memory" / "2026-01-01.md").unlink()
        assert memory.sync().chunks_removed > 2
        assert _cache_rows(memory) == 2
        assert memory.store.counts()["vectors"] == memory.store.counts()["chunks"]


def test_an_index_with_the_older_4k_pages_is_rebuilt_in_place(ws: Path) -> None:
    """Indexes written before 16 KB pages keep theirs: the backup that swaps a rebuilt index
    in cannot change the page size of a database in WAL mode ("readonly database")."""
    from openclaw_memory.store import Store

    index = ws.parent / "index.sqlite"
    Store(index, page_size=4096).close()  # what an earlier version created
    provider = Counting()
    with _open(ws, provider) as memory:
        memory.sync()
        report = memory.sync(full=True)
        assert report.full_rebuild and report.embedded == 0
        assert memory.store.query("pragma page_size")[0][0] == 4096
        assert memory.search("walrus item").results
    fresh = ws.parent / "fresh.sqlite"
    with MemoryIndex.open(ws, index_path=fresh, embedder=provider) as memory:
        memory.sync()
        assert memory.store.query("pragma page_size")[0][0] == 16384
