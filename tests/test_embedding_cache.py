"""CachedProvider: content-hash cache in front of any provider."""

from __future__ import annotations

import hashlib
import threading
import uuid

import numpy as np

from openclaw_memory.embeddings.base import EmbeddingProvider, provider_key_for
from openclaw_memory.embeddings.cache import CachedProvider, MemoryCacheBackend, text_hash


class CountingProvider(EmbeddingProvider):
    """Deterministic 4-d vectors; records every batch it is asked to embed."""

    id = "fake"
    model = "fake-model"
    max_input_tokens = 100

    def __init__(self, key: str = "k1") -> None:
        super().__init__(dims=4)
        self.provider_key = provider_key_for(self.id, variant=key)
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.batches.append(list(texts))
        return np.array([_vector(t) for t in texts], dtype=np.float32)


def _vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [digest[i] + 1.0 for i in range(4)]


def test_misses_are_embedded_once_and_then_served_from_cache():
    inner, backend = CountingProvider(), MemoryCacheBackend()
    cached = CachedProvider(inner, backend)

    first = cached.embed_documents(["a", "b"])
    second = cached.embed_documents(["b", "c", "a"])

    assert inner.batches == [["a", "b"], ["c"]]
    np.testing.assert_allclose(second, inner.embed_documents(["b", "c", "a"]), atol=1e-6)
    np.testing.assert_allclose(second[[2, 0]], first, atol=1e-6)
    assert (cached.hits, cached.misses) == (2, 3)


def test_duplicate_texts_are_embedded_once_and_counted_once():
    inner = CountingProvider()
    cached = CachedProvider(inner, MemoryCacheBackend())

    vectors = cached.embed_documents(["x", "x", "y", "x"])

    assert inner.batches == [["x", "y"]]
    assert vectors.shape == (4, 4)
    np.testing.assert_array_equal(vectors[0], vectors[1])
    np.testing.assert_array_equal(vectors[0], vectors[3])
    assert (cached.hits, cached.misses) == (0, 2)


def test_entries_are_scoped_to_provider_key():
    backend = MemoryCacheBackend()
    CachedProvider(CountingProvider("k1"), backend).embed_documents(["a"])
    other_inner = CountingProvider("k2")
    other = CachedProvider(other_inner, backend)

    other.embed_documents(["a"])

    assert other_inner.batches == [["a"]] and other.hits == 0


def test_cache_entries_are_stored_under_text_sha256():
    backend = MemoryCacheBackend()
    inner = CountingProvider()
    CachedProvider(inner, backend).embed_documents(["hello"])
    assert backend.get_many(
        "fake", "fake-model", inner.provider_key, [hashlib.sha256(b"hello").hexdigest()]
    ).keys() == {text_hash("hello")}


def test_cached_row_of_wrong_width_is_embedded_again():
    backend = MemoryCacheBackend()
    inner = CountingProvider()
    backend.put_many("fake", "fake-model", inner.provider_key, {text_hash("a"): np.ones(7, dtype=np.float32)})
    cached = CachedProvider(inner, backend)

    assert cached.embed_documents(["a"]).shape == (1, 4)
    assert inner.batches == [["a"]]


def test_empty_input_and_queries_bypass_the_backend():
    inner = CountingProvider()
    cached = CachedProvider(inner, MemoryCacheBackend())
    assert cached.embed_documents([]).shape == (0, 4)
    cached.embed_query("q")
    cached.embed_query("q")
    assert inner.batches == [["q"], ["q"]] and (cached.hits, cached.misses) == (0, 0)


def test_wrapper_exposes_the_inner_identity():
    inner = CountingProvider()
    cached = CachedProvider(inner, MemoryCacheBackend())
    assert (cached.id, cached.model, cached.provider_key, cached.dims, cached.max_input_tokens) == (
        "fake",
        "fake-model",
        inner.provider_key,
        4,
        100,
    )


def test_counters_are_exact_under_concurrent_callers():
    inner = CountingProvider()
    cached = CachedProvider(inner, MemoryCacheBackend())
    cached.embed_documents([f"t{i}" for i in range(10)])

    def work() -> None:
        for _ in range(20):
            cached.embed_documents([f"t{i}" for i in range(10)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (cached.hits, cached.misses) == (800, 10)


def test_search_vectors_are_shared_by_every_wrapper_of_one_provider_key_and_no_other():
    """A memory opened per request (a server, a notebook) finds the lines earlier searches
    of the process embedded; another model's wrapper does not."""
    key = f"shared-{uuid.uuid4()}"  # a key of this test alone: the map lives for the process
    first, second, other = CountingProvider(key), CountingProvider(key), CountingProvider(f"{key}-b")
    CachedProvider(first, MemoryCacheBackend()).embed_for_search(["line one", "line two"])
    CachedProvider(second, MemoryCacheBackend()).embed_for_search(["line one", "line three"])
    CachedProvider(other, MemoryCacheBackend()).embed_for_search(["line one"])
    assert first.batches == [["line one", "line two"]]
    assert second.batches == [["line three"]]  # "line one" came from the shared map
    assert other.batches == [["line one"]]


def test_a_shared_vector_of_another_width_is_a_miss():
    key = f"width-{uuid.uuid4()}"
    narrow = CountingProvider(key)
    CachedProvider(narrow, MemoryCacheBackend()).embed_for_search(["a line"])

    class Wide(CountingProvider):
        def __init__(self) -> None:
            super().__init__(key)
            self._dims = 8

        def _embed(self, texts: list[str]) -> np.ndarray:
            self.batches.append(list(texts))
            return np.ones((len(texts), 8), dtype=np.float32)

    wide = Wide()
    vectors = CachedProvider(wide, MemoryCacheBackend()).embed_for_search(["a line"])
    assert vectors.shape == (1, 8) and wide.batches == [["a line"]]


def test_a_costly_providers_search_vectors_are_saved_once_and_only_when_asked():
    key = f"save-{uuid.uuid4()}"
    costly, backend = CountingProvider(key), MemoryCacheBackend()
    costly.costly = True
    cached = CachedProvider(costly, backend)
    cached.embed_for_search(["line one", "line two"])
    assert backend.entries == {}  # a search never writes
    assert cached.save_search_vectors() == 2
    assert {k[3] for k in backend.entries} == {text_hash("line one"), text_hash("line two")}
    assert cached.save_search_vectors() == 0  # each once
    cached.embed_for_search(["line two", "line three"])
    assert cached.save_search_vectors() == 1


def test_a_local_providers_search_vectors_are_never_saved():
    # The index keeps a local model's vectors with their chunks; a line costs nothing again.
    local = CountingProvider(f"local-{uuid.uuid4()}")
    local.costly = False
    backend = MemoryCacheBackend()
    cached = CachedProvider(local, backend)
    cached.embed_for_search(["line one"])
    assert cached.save_search_vectors() == 0 and backend.entries == {}
