"""Shared pieces of the benchmarks: machine report, peer imports, synthetic corpus, embedders.

The synthetic corpus is word-like text drawn from a Zipf vocabulary (so BM25 has common and
rare words to weigh, like real notes) with a topic mixture, and 384-dim float32 vectors that
cluster by topic. Queries take words from a target chunk and a vector near that chunk's. The
"precomputed" embedders map every corpus text and every query to its stored vector, so the
cost of an embedding model is excluded for every system measured.
"""

from __future__ import annotations

import base64
import json
import os
import platform
import re
import resource
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_memory.config import ChunkingSettings
from openclaw_memory.embeddings.base import EmbeddingProvider, FloatArray, provider_key_for
from openclaw_memory.indexing.chunking import chunk_text
from openclaw_memory.store.connection import probe_driver

DIMS = 384
BENCH_EXTRA_HINT = 'the peers are in the "bench" extra: pip install -e ".[bench]"'


def require_peers() -> None:
    """Exit with a clear message when the optional peer packages are missing."""
    missing = []
    for module, package in (("langgraph.store.sqlite", "langgraph-checkpoint-sqlite"),
                            ("langchain_core.vectorstores", "langchain-core")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        sys.exit(f"missing {', '.join(missing)}; {BENCH_EXTRA_HINT}")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_report() -> str:
    """CPU, cores, load, Python, SQLite and sqlite-vec versions and the driver that loads it."""
    driver = probe_driver(True)
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return (f"machine: {cpu_model()}, {os.cpu_count()} cores, load avg {load}; "
            f"{platform.system()} {platform.release()}\n"
            f"python {platform.python_version()}, SQLite {driver.sqlite_version} via "
            f"{driver.name}, sqlite-vec {driver.vec_version or 'not loadable'} "
            f"({driver.reason}); numpy {np.__version__}")


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


# -- synthetic corpus ------------------------------------------------------------------------
_SYLLABLES = ("ka lo mi re ta su ne po vi da ge ru an el os ip ut ber can dor fen gal hin jor "
              "kel mun nor pel quin ros sal tor ul ven wes yar zen").split()


def _vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        lengths = rng.integers(1, 4, size)
        parts = rng.integers(0, len(_SYLLABLES), (size, 3))
        for n, row in zip(lengths.tolist(), parts.tolist(), strict=True):
            words.setdefault("".join(_SYLLABLES[i] for i in row[:n]))
    return list(words)[:size]


@dataclass
class Corpus:
    """Markdown files, their chunks (cut by our chunker, shared by every system) and queries."""

    files: dict[str, str]
    texts: list[str]
    vectors: FloatArray
    queries: list[str]
    query_vectors: FloatArray

    def lookup(self) -> dict[str, FloatArray]:
        table = {t: self.vectors[i] for i, t in enumerate(self.texts)}
        table.update({q: self.query_vectors[i] for i, q in enumerate(self.queries)})
        return table


class _Words:
    """A Zipf vocabulary with a topic mixture: 70 % global words, 30 % a topic's rarer words."""

    def __init__(self, rng: np.random.Generator, vocab_size: int = 30_000, topics: int = 200):
        self.rng, self.topics = rng, topics
        self.vocab = _vocabulary(vocab_size, rng)
        self.common = frozenset(self.vocab[:60])
        zipf = 1.0 / np.arange(1, vocab_size + 1, dtype=np.float64) ** 1.07
        self.cdf = np.cumsum(zipf / zipf.sum())
        self.slice = (vocab_size - 2000) // topics

    def draw(self, topic: int, n: int) -> list[str]:
        rng = self.rng
        glob = np.minimum(np.searchsorted(self.cdf, rng.random(n)), len(self.vocab) - 1)
        topical = 2000 + topic * self.slice + rng.integers(0, self.slice, n)
        ids = np.where(rng.random(n) < 0.3, topical, glob)
        return [self.vocab[i] for i in ids]


def _render(words: list[str], rng: np.random.Generator, day: date) -> str:
    """A daily log: a heading, timestamped sections and bullet lines of 8-20 words."""
    lines, pos, hour = [f"# {day.isoformat()}", ""], 0, 8
    while pos < len(words):
        if rng.random() < 0.15:
            lines += ["", f"## {hour:02d}:{int(rng.integers(0, 60)):02d}"]
            hour = min(hour + 1, 23)
        n = int(rng.integers(8, 21))
        lines.append("- " + " ".join(words[pos:pos + n]) + ".")
        pos += n
    return "\n".join(lines) + "\n"


def make_corpus(n_chunks: int | None = None, *, n_files: int | None = None, n_queries: int = 200,
                words: tuple[int, int] = (300, 900), seed: int = 7, dims: int = DIMS) -> Corpus:
    """Deterministic daily-log files, grown until ``n_chunks`` chunks or ``n_files`` files.

    Files hold ``words`` words (by default 300-900: 1-7 chunks of 400 tokens with 80 overlap, like real daily
    logs); every chunk of a file gets a vector near the file's topic centroid. Queries take
    three content words of a random chunk and a vector near that chunk's.
    """
    rng = np.random.default_rng(seed)
    vocab = _Words(rng)
    settings = ChunkingSettings()
    files: dict[str, str] = {}
    texts: list[str] = []
    topic_of: list[int] = []
    day = date(1990, 1, 1)
    while (n_chunks is None or len(texts) < n_chunks) and (n_files is None or len(files) < n_files):
        topic = int(rng.integers(0, vocab.topics))
        text = _render(vocab.draw(topic, int(rng.integers(words[0], words[1] + 1))), rng, day)
        path = f"memory/{day.year}/{day.isoformat()}.md"
        files[path] = text
        for chunk in chunk_text(text, path=path, source="memory", settings=settings):
            texts.append(chunk.text)
            topic_of.append(topic)
        day += timedelta(days=1)
    centroids = rng.standard_normal((vocab.topics, dims)).astype(np.float32)
    vectors = centroids[topic_of] + 0.9 * rng.standard_normal((len(texts), dims)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    targets = rng.choice(len(texts), size=min(n_queries, len(texts)), replace=False)
    queries: list[str] = []
    for t in targets:
        content = sorted(set(re.findall(r"[a-z]+", texts[t])) - vocab.common)
        query = ""
        while not query or query in queries:  # each query text maps to one vector
            query = " ".join(rng.choice(content, size=min(3, len(content)), replace=False))
        queries.append(query)
    qv = vectors[targets] + 0.06 * rng.standard_normal((len(targets), dims)).astype(np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    return Corpus(files, texts, vectors.astype(np.float32), queries, qv.astype(np.float32))


def write_workspace(root: Path, corpus: Corpus) -> None:
    """Write the corpus's Markdown files under ``root`` (a workspace)."""
    for rel, text in corpus.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# -- embedders that return stored vectors -----------------------------------------------------
class PrecomputedProvider(EmbeddingProvider):
    """Our provider interface over a text -> vector table: the engine's cost alone."""

    id = "precomputed"
    max_input_tokens = 1 << 20
    costly = False  # stands in for a local model

    def __init__(self, table: dict[str, FloatArray], name: str = "bench") -> None:
        super().__init__(dims=len(next(iter(table.values()))) if table else DIMS)
        self.table = table
        self.model = f"precomputed-{name}"
        self.provider_key = provider_key_for(self.id, name=name)

    def _embed(self, texts: list[str]) -> FloatArray:
        try:
            return np.stack([self.table[t.strip()] for t in texts])
        except KeyError as exc:
            raise RuntimeError(f"text not in the precomputed table: {str(exc)[:80]}") from exc


def precomputed_embeddings(table: dict[str, FloatArray]) -> Any:
    """The same table as a LangChain ``Embeddings`` (lists of floats, like every integration)."""
    from langchain_core.embeddings import Embeddings

    class PrecomputedEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [table[t.strip()].tolist() for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return table[text.strip()].tolist()  # type: ignore[no-any-return]

    return PrecomputedEmbeddings()



class EmbeddingsServer:
    """``POST /v1/embeddings`` on 127.0.0.1, answered by ``provider``: an embedding provider
    that costs per call (the ``openai`` client over real HTTP) with vectors the benchmark
    controls. ``requests`` counts the calls; ``url`` is the ``base_url`` to give it."""

    def __init__(self, provider: EmbeddingProvider) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        server = self
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
                vectors = provider.embed_documents(texts)
                server.requests += 1
                # As OpenAI answers: base64 float32 when asked (our client asks), else numbers.
                packed = body.get("encoding_format") == "base64"
                payload = json.dumps({
                    "object": "list", "model": body.get("model", "bench"),
                    "data": [{"object": "embedding", "index": i,
                              "embedding": base64.b64encode(np.asarray(v, "<f4").tobytes()).decode()
                              if packed else v.tolist()}
                             for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                return None

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
