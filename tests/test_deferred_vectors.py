"""A very large workspace: text and keywords first, vectors later, in bounded and resumable
steps. ``index --vectors-later`` makes the notes searchable by keyword at once; later syncs
embed what is missing (a search's sync for a few seconds at most, ``index`` all of it)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from cli_entry import ENTRY_POINT

from openclaw_memory import MemoryIndex
from openclaw_memory.embeddings.base import EmbeddingProvider, provider_key_for
from openclaw_memory.errors import EmbeddingError


class Counting(EmbeddingProvider):
    id = "counting"
    model = "counting-8"
    max_input_tokens = 10_000
    costly = False

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__(dims=8)
        self.provider_key = provider_key_for(self.id)
        self.embedded = 0
        self.fail_after = fail_after
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            if self.fail_after is not None and self.embedded >= self.fail_after:
                raise EmbeddingError("the embedding server went away")
            self.embedded += len(texts)
        rng = np.random.default_rng(len(texts))
        return rng.standard_normal((len(texts), 8)).astype(np.float32) + 0.5


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    for i in range(300):  # one chunk each: 300 chunks, more than one backfill batch (256)
        (root / "memory" / f"note-{i:03d}.md").write_text(f"- note {i} about heron {i}\n")
    return root


def _open(ws: Path, provider: Counting) -> MemoryIndex:
    return MemoryIndex.open(ws, index_path=ws.parent / "index.sqlite", embedder=provider)


def test_deferred_vectors_leave_keyword_search_working_and_embed_nothing(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider) as memory:
        report = memory.sync(defer_vectors=True)
        assert report.indexed == 300 and report.vectors_deferred == 300
        assert report.vectors_pending == 300 and provider.embedded == 0
        assert memory.status()["vectors_missing"] == 300
        hits = memory.search("note 17 heron", min_score=0.0).results
        assert hits and hits[0].path == "memory/note-017.md"


def test_a_bounded_sync_embeds_one_batch_and_index_embeds_the_rest(ws: Path) -> None:
    provider = Counting()
    with _open(ws, provider) as memory:
        memory.sync(defer_vectors=True)
        some = memory.sync(backfill_s=0)
        assert some.vectors_backfilled == 256 and some.vectors_pending == 44
        seen: list[tuple[int, int]] = []
        rest = memory.sync(backfill_s=None, vector_progress=lambda d, t, _: seen.append((d, t)))
        assert rest.vectors_backfilled == 44 and rest.vectors_pending == 0
        assert seen[-1] == (44, 44)
        assert provider.embedded == 300
        counts = memory.store.counts()
        assert counts["vectors"] == counts["chunks"] == 300


def test_an_interrupted_backfill_keeps_what_it_embedded_and_goes_on_later(ws: Path) -> None:
    with _open(ws, Counting()) as memory:
        memory.sync(defer_vectors=True)
    failing = Counting(fail_after=256)
    with _open(ws, failing) as memory:
        report = memory.sync(backfill_s=None)
        assert report.vectors_backfilled == 256 and report.vectors_pending == 44
        assert any("still unavailable" in w for w in report.warnings)
    with _open(ws, Counting()) as memory:
        report = memory.sync(backfill_s=None)
        assert report.vectors_backfilled == 44 and report.vectors_pending == 0


def test_cli_index_vectors_later_then_index_embeds_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for i in range(4):
        (ws / "memory" / f"2026-03-0{i + 1}.md").write_text(f"- the kestrel nested on day {i}\n")
    base = [ENTRY_POINT, "--workspace", str(ws), "--index", str(tmp_path / "i.sqlite")]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args], capture_output=True, text=True, timeout=300)

    first = run("index", "--vectors-later")
    assert first.returncode == 0, first.stderr
    assert "4 chunks wait for their vectors" in first.stdout
    found = run("search", "kestrel nested", "--no-sync", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["results"]
    second = run("index")
    assert second.returncode == 0, second.stderr
    assert "4 missing vectors embedded" in second.stdout
    status = json.loads(run("status", "--json").stdout)
    assert status["vectors_missing"] == 0
