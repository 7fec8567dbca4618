"""Model file checksums are remembered across processes, and a file changed since is hashed
again: the check that a pinned model file is the expected one stays, without its cost on
every one-shot CLI call."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from openclaw_memory.embeddings import digests
from openclaw_memory.embeddings.digests import file_sha256


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENCLAW_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(digests, "_digests", {})
    return tmp_path / "cache"


def test_a_digest_is_remembered_for_the_next_process(cache: Path, tmp_path: Path) -> None:
    model = tmp_path / "weights.bin"
    model.write_bytes(b"weights" * 1000)
    expected = hashlib.sha256(model.read_bytes()).hexdigest()
    assert file_sha256(model) == expected
    memo = json.loads((cache / "models" / "digests.json").read_text())
    assert list(memo.values()) == [expected]
    digests._digests.clear()  # as a new process
    memo_key = next(iter(memo))
    (cache / "models" / "digests.json").write_text(json.dumps({memo_key: "remembered"}))
    assert file_sha256(model) == "remembered"  # read from the memo, not hashed


def test_a_file_rewritten_since_is_hashed_again(cache: Path, tmp_path: Path) -> None:
    model = tmp_path / "weights.bin"
    model.write_bytes(b"genuine!" * 1000)
    file_sha256(model)
    digests._digests.clear()
    model.write_bytes(b"swapped!" * 1000)  # same size, new content
    assert file_sha256(model) == hashlib.sha256(b"swapped!" * 1000).hexdigest()


def test_a_memo_others_could_write_is_not_read(cache: Path, tmp_path: Path) -> None:
    model = tmp_path / "weights.bin"
    model.write_bytes(b"weights" * 1000)
    genuine = file_sha256(model)
    memo = cache / "models" / "digests.json"
    key = next(iter(json.loads(memo.read_text())))
    memo.write_text(json.dumps({key: "forged"}))
    memo.chmod(0o666)
    digests._digests.clear()
    assert file_sha256(model) == genuine


def test_an_unwritable_cache_only_costs_the_hash(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("OPENCLAW_MEMORY_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(digests, "_digests", {})
    model = tmp_path / "weights.bin"
    model.write_bytes(b"w" * 10)
    assert file_sha256(model) == hashlib.sha256(b"w" * 10).hexdigest()
