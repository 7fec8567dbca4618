"""OpenClawMemoryVectorStore: Markdown files are the source of truth for every document."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import threading
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from openclaw_memory import ConfigError, ContentError, MemoryIndex, PathRefusedError
from openclaw_memory.files.atomic import _nudge_mtime
from openclaw_memory.langchain import OpenClawMemoryVectorStore
from openclaw_memory.langchain._docfile import decode_document, file_name

FOLDER = "memory/vectorstore"


class KeywordEmbeddings(Embeddings):
    """Vectors counting a few words: similarity is predictable, unlike random fakes."""

    words = ("cat", "dog", "fish")

    def _vector(self, text: str) -> list[float]:
        return [float(text.count(w)) for w in self.words] + [0.01]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "notes.md").write_text("# Notes\n\nThe cat sleeps on the dog.\n",
                                              encoding="utf-8")
    return root


def open_store(ws: Path, tmp_path: Path, embedding: Embeddings | None = None,
               **kwargs: object) -> OpenClawMemoryVectorStore:
    return OpenClawMemoryVectorStore(workspace=ws, index_path=tmp_path / "index.sqlite",
                                     embedding=embedding or DeterministicFakeEmbedding(size=8),
                                     **kwargs)


@pytest.fixture()
def store(ws: Path, tmp_path: Path) -> Iterator[OpenClawMemoryVectorStore]:
    vs = open_store(ws, tmp_path)
    yield vs
    vs.close()


def doc_files(ws: Path) -> list[Path]:
    return sorted((ws / FOLDER).glob("*.md"))


RICH_METADATA = {
    "zeta": 1, "alpha": 2.5, "flag": False, "nothing": None, "big": 2**70, "tiny": 1e-300,
    "nested": {"list": [1, "two", 3.0, [True, None]], "empty": {}}, "unicode": "café 東京 🚀",
    "tricky": "line\nbreak --- \u2028 \"quotes\"",
}


def test_metadata_round_trips_with_types_and_key_order(store: OpenClawMemoryVectorStore) -> None:
    [doc_id] = store.add_documents([Document(page_content="cat", metadata=RICH_METADATA)])
    [back] = store.get_by_ids([doc_id])
    assert back.metadata == RICH_METADATA
    assert list(back.metadata) == list(RICH_METADATA)
    assert type(back.metadata["zeta"]) is int and type(back.metadata["alpha"]) is float
    assert type(back.metadata["nested"]["list"][2]) is float
    [hit] = store.similarity_search("cat", k=1)
    assert hit.metadata == RICH_METADATA


@pytest.mark.parametrize("content", [
    "plain", "", "\n\nleading and trailing blank lines\n\n", "---\nlooks like front matter\n---\n",
    "windows\r\nline endings\r\n", "no final newline", "tab\tand NUL\x00byte", "emoji 🚀 東京\n",
])
def test_page_content_round_trips_exactly(store: OpenClawMemoryVectorStore, content: str) -> None:
    [doc_id] = store.add_texts([content])
    assert store.get_by_ids([doc_id])[0].page_content == content


def test_file_is_front_matter_json_then_the_page_content(store: OpenClawMemoryVectorStore,
                                                        ws: Path) -> None:
    store.add_texts(["body line\n"], [{"n": 1}], ids=["doc-1"])
    [path] = doc_files(ws)
    assert path.read_text(encoding="utf-8") == (
        '---\n{"id": "doc-1", "metadata": {"n": 1}}\n---\nbody line\n')


@pytest.mark.parametrize("doc_id", [
    "../../etc/passwd", "a/b\\c", "MEMORY.md", "2026-01-10", ".hidden", "x" * 600, "東京 café",
    "CaseSensitive", "casesensitive", " spaces ", "\x00\n",
])
def test_any_id_maps_to_a_safe_file_inside_the_folder(store: OpenClawMemoryVectorStore, ws: Path,
                                                      doc_id: str) -> None:
    store.add_texts(["cat"], ids=[doc_id])
    [path] = doc_files(ws)
    assert path.parent == ws / FOLDER and len(path.name.encode()) <= 100
    assert store.get_by_ids([doc_id])[0].id == doc_id


def test_ids_that_cannot_exist_are_skipped_when_reading_and_deleting(
        store: OpenClawMemoryVectorStore) -> None:
    store.add_texts(["cat"], ids=["a"])
    assert [d.id for d in store.get_by_ids(["", "a", "missing"])] == ["a"]
    store.delete([""])
    with pytest.raises(ContentError, match="non-empty"):
        store.add_texts(["dog"], ids=[""])


def test_a_document_file_copied_by_hand_is_returned_once(store: OpenClawMemoryVectorStore,
                                                         ws: Path) -> None:
    store.add_texts(["cat"], ids=["a"])
    [path] = doc_files(ws)
    (ws / FOLDER / "copy.md").write_bytes(path.read_bytes())
    store.index.sync()
    assert [d.id for d in store.similarity_search("cat", k=5)] == ["a"]


def test_ids_differing_in_case_get_separate_files() -> None:
    assert file_name("Doc").lower() != file_name("doc").lower()


def test_missing_ids_are_generated_as_uuid4(store: OpenClawMemoryVectorStore) -> None:
    ids = store.add_documents([Document(page_content="cat"), Document(id="kept", page_content="dog")])
    assert ids[1] == "kept"
    assert uuid.UUID(ids[0]).version == 4


def test_re_adding_the_same_documents_is_idempotent(store: OpenClawMemoryVectorStore,
                                                    ws: Path) -> None:
    docs = [Document(page_content="cat", metadata={"n": 1}), Document(page_content="dog")]
    store.add_documents(docs, ids=["a", "b"])
    before = {p.name: p.stat().st_mtime_ns for p in doc_files(ws)}
    chunks_before = store.index.status()["chunks"]
    store.add_documents(docs, ids=["a", "b"])
    assert {p.name: p.stat().st_mtime_ns for p in doc_files(ws)} == before
    assert store.index.status()["chunks"] == chunks_before
    assert len(store.similarity_search("cat", k=10)) == 2


def test_upsert_replaces_content_and_metadata(store: OpenClawMemoryVectorStore) -> None:
    store.add_texts(["cat"], [{"v": 1}], ids=["a"])
    store.add_texts(["dog"], [{"v": 2}], ids=["a"])
    assert store.get_by_ids(["a"]) == [Document(id="a", page_content="dog", metadata={"v": 2})]
    assert [d.page_content for d in store.similarity_search("cat", k=5)] == ["dog"]


def test_inputs_are_never_mutated(store: OpenClawMemoryVectorStore) -> None:
    docs = [Document(page_content="cat", metadata={"nested": {"a": [1, 2]}}),
            Document(page_content="dog", metadata={})]
    snapshot = copy.deepcopy(docs)
    metadatas = [{"k": [1]}, {"k": {"x": None}}]
    metas_snapshot = copy.deepcopy(metadatas)
    store.add_documents(docs)
    store.add_texts(["fish", "bird"], metadatas)
    assert docs == snapshot and all(d.id is None for d in docs)
    assert metadatas == metas_snapshot


@pytest.mark.parametrize("bad", [{"t": (1, 2)}, {"s": {1, 2}}, {1: "int key"}, {"b": b"bytes"},
                                 {"deep": [{"x": object()}]}])
def test_metadata_that_cannot_round_trip_is_refused_and_nothing_is_written(
        store: OpenClawMemoryVectorStore, ws: Path, bad: dict[object, object]) -> None:
    with pytest.raises(ContentError, match=r"round-trip|JSON keys"):
        store.add_texts(["cat", "dog"], [{"ok": 1}, bad])  # type: ignore[list-item]
    assert doc_files(ws) == []


def test_delete_removes_the_file_and_its_rows(store: OpenClawMemoryVectorStore, ws: Path) -> None:
    store.add_texts(["cat", "dog"], ids=["a", "b"])
    assert store.delete(["a", "missing"]) is True
    assert [p.name for p in doc_files(ws)] == [file_name("b")]
    indexed = store.index.store.files()
    assert f"{FOLDER}/{file_name('a')}" not in indexed and f"{FOLDER}/{file_name('b')}" in indexed
    assert [d.id for d in store.similarity_search("cat", k=5)] == ["b"]
    assert store.get_by_ids(["a"]) == []


def test_delete_all_keeps_files_that_are_not_documents_of_the_store(
        store: OpenClawMemoryVectorStore, ws: Path) -> None:
    store.add_texts(["cat", "dog"])
    foreign = ws / FOLDER / "readme.md"
    foreign.write_text("# Not a document\n", encoding="utf-8")
    store.delete()
    assert doc_files(ws) == [foreign]
    assert (ws / "memory" / "notes.md").exists()
    assert store.similarity_search("cat", k=5) == []


def test_index_is_rebuilt_from_the_files_alone(ws: Path, tmp_path: Path) -> None:
    embedding = DeterministicFakeEmbedding(size=8)
    with_store = open_store(ws, tmp_path, embedding)
    with_store.add_texts(["cat", "dog"], [{"n": 1}, {"n": [2.0, None]}], ids=["a", "b"])
    before = with_store.similarity_search_with_score("dog", k=2)
    with_store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'index.sqlite'}{suffix}").unlink(missing_ok=True)
    reopened = open_store(ws, tmp_path, embedding)
    try:
        assert reopened.similarity_search_with_score("dog", k=2) == before
    finally:
        reopened.close()


def test_searches_only_return_documents_of_the_store_folder(ws: Path, tmp_path: Path) -> None:
    # notes.md holds "cat" too, and a second store lives in another folder.
    mine = open_store(ws, tmp_path, KeywordEmbeddings())
    other = OpenClawMemoryVectorStore(mine.index, folder="memory/other-store")
    try:
        mine.add_texts(["cat"], ids=["mine"])
        other.add_texts(["cat cat"], ids=["theirs"])
        assert [d.id for d in mine.similarity_search("cat", k=10)] == ["mine"]
        assert [d.id for d in other.similarity_search("cat", k=10)] == ["theirs"]
        # The agent's memory search does see store documents: they are memory files too.
        paths = {h.path for h in mine.index.search("cat", min_score=0).results}
        assert f"{FOLDER}/{file_name('mine')}" in paths and "memory/notes.md" in paths
    finally:
        mine.close()


def test_long_document_is_returned_once_with_its_best_chunk_score(ws: Path, tmp_path: Path) -> None:
    store = open_store(ws, tmp_path, KeywordEmbeddings(), chunking={"tokens": 8, "overlap": 0})
    try:
        long_text = "\n".join(["zzz"] * 20 + ["cat"] + ["zzz"] * 20)
        store.add_texts([long_text, "fish"], ids=["long", "short"])
        assert store.index.status()["chunks"] > 3
        results = store.similarity_search_with_score("cat", k=5)
        assert [d.id for d, _ in results] == ["long", "short"]
        assert results[0][0].page_content == long_text
        assert results[0][1] == pytest.approx(1.0, abs=1e-3)
    finally:
        store.close()


def test_search_by_vector_ranks_by_cosine(ws: Path, tmp_path: Path) -> None:
    store = open_store(ws, tmp_path, KeywordEmbeddings())
    try:
        store.add_texts(["cat", "dog", "cat dog"], ids=["c", "d", "cd"])
        assert [d.id for d in store.similarity_search_by_vector([1.0, 0.1, 0, 0], k=3)] == [
            "c", "cd", "d"]
        with pytest.raises(ValueError, match="dimensions"):
            store.similarity_search_by_vector([1.0, 0.0], k=1)
    finally:
        store.close()


def test_mmr_prefers_a_diverse_document_over_a_duplicate(ws: Path, tmp_path: Path) -> None:
    store = open_store(ws, tmp_path, KeywordEmbeddings())
    try:
        store.add_texts(["cat", "cat", "cat fish"], ids=["one", "twin", "mixed"])
        plain = [d.id for d in store.similarity_search("cat", k=2)]
        assert set(plain) == {"one", "twin"}
        diverse = [d.id for d in store.max_marginal_relevance_search(
            "cat", k=2, fetch_k=3, lambda_mult=0.25)]
        assert diverse[0] in {"one", "twin"} and diverse[1] == "mixed"
    finally:
        store.close()


def test_relevance_scores_stay_between_zero_and_one(store: OpenClawMemoryVectorStore) -> None:
    store.add_texts(["cat", "dog", "fish", "bird"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scored = store.similarity_search_with_relevance_scores("cat", k=4)
    assert scored[0][1] == pytest.approx(1.0, abs=1e-5)
    assert all(0.0 <= s <= 1.0 for _, s in scored)


def test_unsupported_search_options_are_refused_not_ignored(
        store: OpenClawMemoryVectorStore) -> None:
    with pytest.raises(TypeError, match="filter"):
        store.similarity_search("cat", k=1, where={"n": 1})


TRIPS = [("Flight to Lisbon in March", {"kind": "travel", "year": 2026, "tags": ["flight"]}),
         ("Train to Porto last spring", {"kind": "travel", "year": 2024, "tags": ["train"]}),
         ("Dentist appointment on Monday", {"kind": "health", "year": 2026}),
         ("Hotel booked in Lisbon", {"kind": "travel", "year": 2025, "city": "Lisbon"})]


def test_metadata_filters_select_documents_as_pgvector_does(store: OpenClawMemoryVectorStore) -> None:
    store.add_texts([text for text, _ in TRIPS], [meta for _, meta in TRIPS],
                    ids=["lisbon", "porto", "dentist", "hotel"])

    def ids(**kwargs: object) -> set[str | None]:
        return {d.id for d in store.similarity_search("a trip", k=4, **kwargs)}

    assert ids(filter={"kind": "travel", "year": {"$gte": 2025}}) == {"lisbon", "hotel"}
    assert ids(filter={"year": {"$between": [2024, 2025]}}) == {"porto", "hotel"}
    assert ids(filter={"kind": {"$in": ["health"]}}) == {"dentist"}
    assert ids(filter={"kind": {"$nin": ["travel"]}}) == {"dentist"}
    assert ids(filter={"city": {"$exists": True}}) == {"hotel"}
    assert ids(filter={"city": {"$ilike": "lis%"}}) == {"hotel"}
    assert ids(filter={"$or": [{"kind": "health"}, {"year": {"$lt": 2025}}]}) == {"dentist", "porto"}
    assert ids(filter={"$and": [{"kind": "travel"}, {"$not": {"year": 2026}}]}) == {"porto", "hotel"}
    assert ids(filter={"kind": {"$ne": "travel"}}) == {"dentist"}
    assert ids(filter={"tags": ["flight"]}) == {"lisbon"}
    by_vector = store.similarity_search_by_vector(
        store.embeddings.embed_query("a trip"), k=4, filter={"kind": "health"})  # type: ignore[union-attr]
    assert [d.id for d in by_vector] == ["dentist"]
    assert {d.id for d in store.max_marginal_relevance_search(
        "a trip", k=2, fetch_k=4, filter={"kind": "travel"})} <= {"lisbon", "porto", "hotel"}


def test_a_selective_filter_still_fills_k_from_beyond_the_first_fetch(
        store: OpenClawMemoryVectorStore) -> None:
    texts = [f"note {i} about lisbon flights" for i in range(60)] + ["a rare dentist visit"]
    metas = [{"kind": "travel"}] * 60 + [{"kind": "health"}]
    store.add_texts(texts, metas)
    found = store.similarity_search("lisbon flights", k=1, filter={"kind": "health"})
    assert [d.page_content for d in found] == ["a rare dentist visit"]


def test_an_unknown_filter_operator_is_a_clear_error(store: OpenClawMemoryVectorStore) -> None:
    store.add_texts(["cat"], [{"n": 1}])
    with pytest.raises(ConfigError, match=r"unknown filter operator '\$regex'"):
        store.similarity_search("cat", k=1, filter={"n": {"$regex": "x"}})


def test_without_an_embedding_provider_search_falls_back_to_keywords(ws: Path,
                                                                    tmp_path: Path) -> None:
    store = OpenClawMemoryVectorStore(workspace=ws, index_path=tmp_path / "kw.sqlite",
                                      embedding={"provider": "none"})
    try:
        store.add_texts(["the zebra migration", "a quiet harbour"], ids=["z", "h"])
        assert [d.id for d in store.similarity_search("zebra", k=3)] == ["z"]
        with pytest.raises(ConfigError, match="embedding"):
            store.max_marginal_relevance_search("zebra")
    finally:
        store.close()


def test_folder_outside_memory_is_refused(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="under memory/"):
        open_store(ws, tmp_path, folder="notes")


def test_a_symlinked_folder_is_refused_and_nothing_is_written_outside(
        store: OpenClawMemoryVectorStore, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / FOLDER).symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefusedError):
        store.add_texts(["cat"])
    assert list(outside.iterdir()) == []


def test_existing_files_are_searchable_by_a_freshly_opened_store(ws: Path, tmp_path: Path) -> None:
    first = open_store(ws, tmp_path, KeywordEmbeddings())
    first.add_texts(["dog"], ids=["d"])
    first.close()
    second = OpenClawMemoryVectorStore(workspace=ws, index_path=tmp_path / "other.sqlite",
                                       embedding=KeywordEmbeddings())
    try:
        assert [d.id for d in second.similarity_search("dog", k=1)] == ["d"]
    finally:
        second.close()


def test_from_texts_and_as_retriever(ws: Path, tmp_path: Path) -> None:
    store = OpenClawMemoryVectorStore.from_texts(
        ["cat", "dog"], KeywordEmbeddings(), [{"n": 1}, {"n": 2}], ids=["c", "d"],
        workspace=ws, index_path=tmp_path / "ft.sqlite")
    try:
        docs = store.as_retriever(search_kwargs={"k": 1}).invoke("dog")
        assert docs == [Document(id="d", page_content="dog", metadata={"n": 2})]
    finally:
        store.close()


def test_concurrent_writers_and_readers_lose_nothing(store: OpenClawMemoryVectorStore) -> None:
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(5):
                store.add_texts([f"text {worker}-{i}"], ids=[f"{worker}-{i}"])
                store.similarity_search("text", k=3)
        except BaseException as exc:  # collected: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    ids = [f"{w}-{i}" for w in range(6) for i in range(5)]
    assert len(store.get_by_ids(ids)) == 30
    assert len(store.similarity_search("text", k=100)) == 30


async def test_async_methods_run_concurrently_and_agree(store: OpenClawMemoryVectorStore) -> None:
    batches = [[Document(page_content=f"doc {n}", id=f"id-{n}")] for n in range(8)]
    await asyncio.gather(*(store.aadd_documents(b) for b in batches))
    found = await store.asimilarity_search("doc 3", k=1)
    assert found[0].id == "id-3"
    assert len(await store.aget_by_ids([f"id-{n}" for n in range(8)])) == 8
    await store.adelete(["id-0"])
    assert await store.aget_by_ids(["id-0"]) == []


def test_a_same_size_rewrite_within_one_clock_tick_still_changes_mtime(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"abc")
    fd = os.open(path, os.O_RDONLY)
    try:
        info = os.fstat(fd)
        _nudge_mtime(fd, (info.st_size, info.st_mtime_ns))
        assert os.fstat(fd).st_mtime_ns == info.st_mtime_ns + 1
    finally:
        os.close(fd)


def test_files_edited_by_hand_are_read_back(store: OpenClawMemoryVectorStore, ws: Path) -> None:
    store.add_texts(["cat"], [{"n": 1}], ids=["a"])
    [path] = doc_files(ws)
    header = json.dumps({"id": "a", "metadata": {"n": 2}})
    path.write_bytes(f"\ufeff---\r\n{header}\r\n---\r\nedited\r\n".encode())
    assert decode_document(path.read_bytes()) is not None
    assert store.get_by_ids(["a"]) == [Document(id="a", page_content="edited\r\n",
                                                metadata={"n": 2})]


def test_an_open_index_can_be_shared_with_the_store(ws: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(ws, index_path=tmp_path / "shared.sqlite",
                          embedder=None, embedding={"provider": "none"}) as index:
        store = OpenClawMemoryVectorStore(index)
        store.add_texts(["shared zebra"], ids=["z"])
        assert store.embeddings is None
        assert [h.path for h in index.search("zebra").results] == [f"{FOLDER}/{file_name('z')}"]
        with pytest.raises(ConfigError, match="not both"):
            OpenClawMemoryVectorStore(index, embedding=KeywordEmbeddings())


def test_local_model_ranks_by_meaning_end_to_end(ws: Path, tmp_path: Path) -> None:
    store = OpenClawMemoryVectorStore(workspace=ws, index_path=tmp_path / "local.sqlite",
                                      embedding={"provider": "local"})
    try:
        store.add_texts(["The user is allergic to peanuts.", "We deploy to Frankfurt.",
                         "The build takes eleven minutes."], ids=["food", "deploy", "build"])
        assert store.index.provider is not None and store.index.provider.id == "local"
        assert store.similarity_search("food intolerance", k=1)[0].id == "food"
        assert store.similarity_search("which datacenter region?", k=1)[0].id == "deploy"
    finally:
        store.close()


def test_a_store_on_a_workspace_folder_that_does_not_exist_yet_creates_it(tmp_path: Path) -> None:
    folder = tmp_path / "kb" / "notes"
    store = OpenClawMemoryVectorStore(workspace=folder, index_path=tmp_path / "i.sqlite",
                                      embedding={"provider": "none"})
    try:
        [doc_id] = store.add_texts(["The ferry to Lisbon leaves at nine."])
        assert store.get_by_ids([doc_id])[0].page_content.startswith("The ferry")
        assert folder.is_dir() and (folder.stat().st_mode & 0o777) == 0o700
    finally:
        store.close()
