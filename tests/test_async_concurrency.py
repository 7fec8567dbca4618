"""Async that does not block and does not race: 50 concurrent calls of the retriever, the tools
and the store on one index answer what sequential calls answer, and the event loop keeps
turning meanwhile (the longest stall is printed)."""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import OpenClawMemoryRetriever, memory_tools
from openclaw_memory.langgraph import OpenClawMemoryStore

QUESTIONS = ["billing database", "Lisbon flight", "coffee preference", "deploy freeze",
             "who leads platform", "nut allergy", "on-call rotation", "budget review",
             "office wifi", "launch date"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("async") / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Facts\n\nBilling runs on PostgreSQL 16.\nPriya leads the platform team.\n"
        "The office wifi is kestrel-guest.\n", encoding="utf-8")
    days = ["Flight to Lisbon on December 3rd.", "Coffee: dark roast, no sugar.",
            "Deploy freeze from Dec 20 to Jan 5.", "Joon has a nut allergy.",
            "On-call rotation: Amara this week.", "Budget review moved to Friday.",
            "Launch date is October 19."]
    for i, text in enumerate(days, 1):
        (root / "memory" / f"2026-01-{i:02d}.md").write_text(f"# Day {i}\n\n{text}\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def memory(workspace: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, index_path=workspace.parent / "i.sqlite") as index:
        index.sync()
        yield index


async def _stall_while(work: Any) -> tuple[Any, float, float]:
    """Run ``work`` while a ticker measures the longest time the loop did not turn."""
    done = asyncio.Event()
    longest = 0.0

    async def ticker() -> None:
        nonlocal longest
        while not done.is_set():
            started = time.perf_counter()
            await asyncio.sleep(0.001)
            longest = max(longest, time.perf_counter() - started - 0.001)

    # The test session's own heap (everything earlier tests left) would otherwise make a full
    # garbage collection, which stops every thread, land in the window: freeze it first.
    gc.collect()
    gc.freeze()
    tick = asyncio.create_task(ticker())
    started = time.perf_counter()
    try:
        result = await work
    finally:
        done.set()
        await tick
        gc.unfreeze()
    return result, longest, time.perf_counter() - started


def _paths(docs: list[Any]) -> list[tuple[str, int, int]]:
    return [(d.metadata["path"], d.metadata["start_line"], d.metadata["end_line"]) for d in docs]


async def test_fifty_concurrent_retriever_and_tool_calls_match_sequential_ones(memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(index=memory, k=3)
    search = memory_tools(memory)[0]
    queries = [QUESTIONS[i % len(QUESTIONS)] for i in range(50)]
    expected_docs = [_paths(retriever.invoke(q)) for q in queries]
    expected_tool = [json.loads(search.invoke({"query": q}))["results"] for q in queries]

    async def everything() -> tuple[list[Any], list[Any]]:
        docs = asyncio.gather(*(retriever.ainvoke(q) for q in queries))
        tools = asyncio.gather(*(search.ainvoke({"query": q}) for q in queries))
        return await docs, await tools

    (docs, tool_results), stall, wall = await _stall_while(everything())
    assert [_paths(d) for d in docs] == expected_docs
    assert [json.loads(r)["results"] for r in tool_results] == expected_tool
    print(f"\n100 concurrent retriever+tool calls: {wall * 1000:.0f} ms wall, "
          f"longest event-loop stall {stall * 1000:.1f} ms")
    # Run on the loop, the calls would stall it for about the whole run.
    assert stall < wall / 4


async def test_fifty_concurrent_store_writes_and_searches_lose_nothing(workspace: Path) -> None:
    with OpenClawMemoryStore.open(workspace, index_path=workspace.parent / "store.sqlite") as store:
        facts = {f"k{i:02d}": f"fact number {i} about {QUESTIONS[i % len(QUESTIONS)]}" for i in range(50)}

        async def writes() -> list[None]:
            return await asyncio.gather(*(store.aput(("team", "facts"), key, {"content": text})
                                          for key, text in facts.items()))

        _, write_stall, write_wall = await _stall_while(writes())
        stored = {item.key: item.value["content"] for item in store.search(("team", "facts"), limit=100)}
        assert stored == facts
        expected = [[i.key for i in store.search(("team",), query=q, limit=5)] for q in QUESTIONS]

        async def searches() -> list[list[Any]]:
            return await asyncio.gather(*(store.asearch(("team",), query=QUESTIONS[i % 10], limit=5)
                                          for i in range(50)))

        found, search_stall, search_wall = await _stall_while(searches())
        assert [[i.key for i in items] for items in found] == [expected[i % 10] for i in range(50)]
        print(f"\n50 concurrent store writes: {write_wall * 1000:.0f} ms wall, longest stall "
              f"{write_stall * 1000:.1f} ms; 50 searches: {search_wall * 1000:.0f} ms, "
              f"longest stall {search_stall * 1000:.1f} ms")
        assert write_stall < write_wall / 4 and search_stall < search_wall / 4
