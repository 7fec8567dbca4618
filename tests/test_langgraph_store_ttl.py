"""TTLs as LangGraph stores define them, over the files: ``put(..., ttl=minutes)``,
``default_ttl``, ``refresh_on_read`` / ``refresh_ttl``, a sweep that removes expired items'
files (the index follows), expired items never returned; on both backends."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from store_backends import open_store

from openclaw_memory.langgraph.store import OpenClawMemoryStore

START = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


@pytest.fixture(params=["sqlite", "postgres"])
def base(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenClawMemoryStore]:
    with open_store(request, tmp_path, "ttl") as opened:
        yield opened


def _with(base: OpenClawMemoryStore, clock: Clock, **ttl: object) -> OpenClawMemoryStore:
    return OpenClawMemoryStore(base.memory, ttl=ttl or None, clock=clock)  # type: ignore[arg-type]


def test_an_item_expires_after_its_ttl_and_the_sweep_removes_its_file(
        base: OpenClawMemoryStore) -> None:
    clock = Clock()
    store = _with(base, clock)
    assert store.supports_ttl
    store.put(("users", "alice"), "otp", {"content": "The one-time code is 4471"}, ttl=5)
    store.put(("users", "alice"), "tea", {"content": "Alice drinks green tea"})
    assert store.get(("users", "alice"), "otp") is not None
    clock.advance(6)
    assert store.get(("users", "alice"), "otp") is None
    assert [i.key for i in store.search(("users",))] == ["tea"]
    assert not store.search(("users",), query="one-time code 4471")
    assert store.sweep_ttl() == 1
    assert [p for p in store.space.paths("memory") if "otp" in p] == []
    assert store.sweep_ttl() == 0
    assert store.list_namespaces() == [("users", "alice")]


def test_the_default_ttl_applies_to_puts_without_one(base: OpenClawMemoryStore) -> None:
    clock = Clock()
    store = _with(base, clock, default_ttl=1.0)
    store.put(("s",), "k", {"content": "short-lived"})
    store.put(("s",), "keep", {"content": "kept"}, ttl=None)
    clock.advance(2)
    assert store.get(("s",), "k") is None
    assert store.get(("s",), "keep") is not None


def test_reads_refresh_the_ttl_when_asked(base: OpenClawMemoryStore) -> None:
    clock = Clock()
    store = _with(base, clock, refresh_on_read=True)
    store.put(("s",), "k", {"content": "refreshed by reads"}, ttl=10)
    clock.advance(8)
    assert store.get(("s",), "k") is not None  # refreshed: 10 more minutes from now
    clock.advance(8)
    assert store.get(("s",), "k", refresh_ttl=False) is not None
    clock.advance(3)
    assert store.get(("s",), "k") is None  # 19 minutes after the last refresh
    store.put(("s",), "q", {"content": "found and refreshed"}, ttl=10)
    clock.advance(8)
    assert [i.key for i in store.search(("s",), refresh_ttl=True)] == ["q"]
    clock.advance(8)
    assert store.get(("s",), "q", refresh_ttl=False) is not None


def test_the_sweeper_task_removes_expired_items(base: OpenClawMemoryStore) -> None:
    clock = Clock()
    store = _with(base, clock)
    store.put(("s",), "k", {"content": "gone soon"}, ttl=1)
    clock.advance(2)

    async def run() -> None:
        task = asyncio.create_task(store.start_ttl_sweeper(sweep_interval_minutes=0.001))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if not [p for p in store.space.paths("memory") if "/s/" in p]:
                break
        store.stop_ttl_sweeper()
        await task

    asyncio.run(run())
    assert [p for p in store.space.paths("memory") if "/s/" in p] == []


@pytest.mark.parametrize("ttl", [1e10, 1e16, 1e308, float("inf"), 0, -5])
def test_a_ttl_no_date_can_hold_or_not_above_zero_keeps_the_item_as_langgraph_does(
        base: OpenClawMemoryStore, ttl: float) -> None:
    clock = Clock()
    store = _with(base, clock)
    store.put(("notes",), "k", {"text": "kayaks"}, ttl=ttl)  # no OverflowError
    clock.advance(60 * 24 * 365 * 50)
    item = store.get(("notes",), "k", refresh_ttl=True)
    assert item is not None and item.value == {"text": "kayaks"}
    assert store.sweep_ttl() == 0
