"""Fuzzed query text in every mode: search never raises, and what one query can cost is bounded
(length, terms, time), with the response saying what was cut."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import memory_tools
from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.search.querylimits import MAX_QUERY_CHARS, MAX_QUERY_TERMS, bound_query

from .workspaces import write_workspace

QUERIES_PER_MODE = 600  # every query shape still drawn (1 %: 160 000 characters); suite time
_PIECES = ["billing", "\ud800", "\udfff", "\x00", "\x1b[31m", '"', "*", "NEAR(", "OR", "AND NOT",
           "col:", "(", ")", "'", "\\", "%_", "缓存", "会議", "회의", "🙂", "\u202e", "\ufeff",
           "ﾊﾝｶｸ", "ß", "İ", "\r\n", "\t", "  ", "-", "redis", "frankfurt", "x" * 300]


def _query(rng: random.Random) -> str:
    shape = rng.random()
    if shape < 0.01:
        return "billing " * 20_000  # 160 000 characters
    if shape < 0.03:
        return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(rng.randint(500, 5_000)))
    if shape < 0.05:
        return " ".join(f"word{rng.randint(0, 10**9)}" for _ in range(rng.randint(500, 3_000)))
    if shape < 0.08:
        return "".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(rng.randint(1, 200)))
    return " ".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 12)))


@pytest.fixture(scope="module", params=["keyword-only", "hybrid"])
def memory(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[MemoryIndex]:
    root = tmp_path_factory.mktemp("hostile")
    write_workspace(root / "ws", files=12)
    embedding = {"provider": "none"} if request.param == "keyword-only" else {}
    with MemoryIndex.open(root / "ws", index_path=root / "i.sqlite", embedding=embedding) as index:
        index.sync()
        yield index


@pytest.mark.slow
def test_fuzzed_queries_never_raise_and_their_cost_is_bounded(memory: MemoryIndex) -> None:
    rng = random.Random(20261123)
    worst = (0.0, "")
    cut = 0
    for _ in range(QUERIES_PER_MODE):
        query = _query(rng)
        started = time.perf_counter()
        response = memory.search(query)  # must not raise
        elapsed = time.perf_counter() - started
        worst = max(worst, (elapsed, query[:40]))
        bounded = bound_query(query)
        assert len(bounded.text) <= MAX_QUERY_CHARS
        assert len(keyword_terms(bounded.keyword_text)) <= MAX_QUERY_TERMS
        if bounded.notes:
            cut += 1
            assert set(bounded.notes) <= set(response.notes)  # the response says what was cut
    # Timings are printed, not asserted (benchmarks measure; tests prove behaviour).
    print(f"\n{memory.status()['mode']}: worst query {worst[0] * 1000:.0f} ms ({worst[1]!r}); "
          f"{cut} of {QUERIES_PER_MODE} cut")
    assert cut > 0


def test_the_search_tool_answers_hostile_text_with_a_message(memory: MemoryIndex) -> None:
    tool = memory_tools(memory)[0]
    for text in ["billing \ud800", "\x00", "缓存" * 3_000, '"NEAR(']:
        message = tool.invoke({"type": "tool_call", "id": "c", "name": "memory_search",
                               "args": {"query": text}})
        assert message.status in ("success", "error") and message.content


def test_a_huge_query_is_cut_and_says_so(memory: MemoryIndex, tmp_path: Path) -> None:
    response = memory.search("billing " * 50_000)
    assert f"query cut to its first {MAX_QUERY_CHARS} characters" in response.notes
    many = memory.search(" ".join(f"w{i}" for i in range(500)) + " billing")
    assert f"keyword search used the first {MAX_QUERY_TERMS} search terms of the query" in many.notes


@pytest.mark.parametrize("model", ["use-multilingual-v3", "all-MiniLM-L6-v2"])
def test_every_local_model_embeds_lone_surrogates(model: str) -> None:
    from openclaw_memory.config import EmbeddingSettings
    from openclaw_memory.embeddings.factory import build_provider

    provider = build_provider("local", EmbeddingSettings(provider="local", model=model))
    vectors = provider.embed_documents(["billing \ud800", "\udfff", "ok"])
    assert vectors.shape[0] == 3
