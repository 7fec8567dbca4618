"""Real passages embedded by the real model: a vector set with the geometry real notes have.

    python benchmarks/passages.py --n 1000000     # embed (about 10 minutes on 2 cores), cache

HNSW's recall depends on how the vectors are spread, not only on how many there are: random
vectors in 512 dimensions (every direction equally likely, the hardest case for a graph index)
give 0.65 at 1M where real embeddings, which vary along far fewer directions (effective rank
about 150 of 512 for this model on real sentences, 340 for the random clusters), give much
more. So the recall target is measured on vectors the offline default model made of real text.

No bundled text is large enough for a million distinct passages, so the text is what every
installation has: the English sentences of the installed Python's and its packages' sources
and documentation (docstrings, comments, READMEs; about 175 000 distinct sentences here),
taken in file order. A passage is 1 to 6 consecutive sentences of one file (as a chunk is
consecutive lines; overlapping passages are near one another, as overlapping chunks are).
Queries are 200 sentences held out of every passage. The set differs a little between
machines with different packages; its size and source are printed with the figures.

The vectors are cached (``--cache``, keyed by the model and the text's hash), so that one
embedding serves every run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_SENTENCE = re.compile(r"[A-Z][a-z][^.\n!?]{25,240}[.!?]")
_SUFFIXES = (".py", ".md", ".rst", ".txt")
MAX_WINDOW = 6
QUERIES = 200
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / \
    "openclaw-memory-bench"


@dataclass
class PassageSet:
    vectors: np.ndarray  # (n, dims) float32, unit length
    queries: np.ndarray  # (QUERIES, dims) float32, unit length
    sentences: int       # distinct sentences the passages were made of
    source: str


def _roots() -> list[Path]:
    roots = {Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])}
    return sorted(r for r in roots if r.is_dir())


def _files() -> Iterator[list[str]]:
    """Each source file's distinct sentences, in order; files in sorted order."""
    seen: set[str] = set()
    for root in _roots():
        for folder, dirs, names in os.walk(root):
            dirs.sort()
            for name in sorted(names):
                if not name.endswith(_SUFFIXES):
                    continue
                try:
                    text = (Path(folder) / name).read_text(encoding="utf-8", errors="ignore")
                except OSError:
                    continue
                fresh = [s for s in _SENTENCE.findall(text) if s not in seen]
                seen.update(fresh)
                if fresh:
                    yield fresh


def passages(n: int) -> tuple[list[str], list[str], int]:
    """(n passages, the held-out query sentences, distinct sentences used)."""
    files = list(_files())
    sentences = sum(len(f) for f in files)
    rng = np.random.default_rng(17)
    held = set(rng.choice(sentences, QUERIES, replace=False).tolist())
    texts: list[str] = []
    queries: list[str] = []
    position = 0
    for window in range(1, MAX_WINDOW + 1):  # all single sentences first, then pairs...
        position = 0
        for file in files:
            for start in range(len(file) - window + 1):
                span = range(position + start, position + start + window)
                if window == 1 and position + start in held:
                    queries.append(file[start])
                if not held.intersection(span):
                    texts.append(" ".join(file[start:start + window]))
            position += len(file)
        if len(texts) >= n:
            break
    if len(texts) < n:
        raise SystemExit(f"only {len(texts)} passages from {sentences} sentences; ask for fewer")
    return texts[:n], queries, sentences


def load(n: int, model: object, cache: Path = DEFAULT_CACHE) -> PassageSet:
    """The first n passages' vectors and the queries' vectors (cached)."""
    texts, queries, sentences = passages(n)
    key = hashlib.sha256("\n".join([getattr(model, "model", "?"), *texts, *queries])
                         .encode()).hexdigest()[:16]
    path = cache / f"passages-{n}-{key}.npz"
    source = f"{len(texts)} passages of {sentences} sentences from {', '.join(map(str, _roots()))}"
    if path.exists():
        data = np.load(path)
        return PassageSet(data["vectors"], data["queries"], sentences, source)
    # The model itself, not a caching wrapper: a million cache rows would outweigh the run.
    embed = getattr(model, "provider", model).embed_documents
    started = time.perf_counter()
    parts = []
    for i in range(0, len(texts), 20_000):
        parts.append(np.asarray(embed(texts[i:i + 20_000]), np.float32))
        done = i + len(parts[-1])
        print(f"  embedded {done}/{len(texts)} passages "
              f"({done / (time.perf_counter() - started):.0f}/s)", file=sys.stderr, flush=True)
    vectors = np.concatenate(parts)
    qv = np.asarray(embed(queries), np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, vectors=vectors, queries=qv)
    return PassageSet(vectors, qv, sentences, source)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args()
    import tempfile

    from openclaw_memory import MemoryIndex

    data = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "kestrel-team"
    with tempfile.TemporaryDirectory() as tmp, \
            MemoryIndex.open(data, index_path=Path(tmp) / "probe.sqlite") as probe:
        found = load(args.n, probe.provider, args.cache)
    print(f"{found.source}: {found.vectors.shape}, queries {found.queries.shape}")


if __name__ == "__main__":
    main()
