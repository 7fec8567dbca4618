"""``OpenClawMemoryStore`` is a LangGraph ``BaseStore`` over Markdown files, and behaves like
LangGraph's own ``InMemoryStore`` wherever their semantics overlap."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, Item, PutOp
from langgraph.store.memory import InMemoryStore
from store_backends import open_store

from openclaw_memory.errors import ContentError
from openclaw_memory.langgraph.store import OpenClawMemoryStore

NAMESPACES = [("memories", "alice"), ("memories", "bob"), ("memories", "bob", "work"),
              ("docs", "alice"), ("docs", "team", "alice")]
VALUES: dict[str, dict[str, Any]] = {
    "tea": {"content": "Alice drinks green tea without sugar", "kind": "preference", "year": 2025},
    "trip": {"content": "Flight to Lisbon on December 3rd", "kind": "travel", "year": 2026,
             "tags": ["flight", "lisbon"], "nested": {"seat": "12A", "ok": True, "n": None}},
    "db": {"content": "Billing runs on PostgreSQL 16", "kind": "decision", "year": 2026,
           "score": 0.75},
}


@pytest.fixture(params=["sqlite", "postgres"])
def ours(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenClawMemoryStore]:
    """The store on a workspace folder, and on a PostgreSQL workspace (documents as rows)."""
    with open_store(request, tmp_path, "store") as store:
        yield store


def fill(store: BaseStore) -> None:
    for namespace in NAMESPACES:
        for key, value in VALUES.items():
            store.put(namespace, key, value)


def plain(item: Item | None) -> tuple[tuple[str, ...], str, dict[str, Any]] | None:
    return None if item is None else (tuple(item.namespace), item.key, item.value)


def test_get_put_delete_and_namespace_listing_match_in_memory_store(ours: OpenClawMemoryStore) -> None:
    theirs = InMemoryStore()
    for store in (ours, theirs):
        fill(store)
        store.put(("memories", "alice"), "tea", {"content": "now oolong", "kind": "preference"})
        store.delete(("memories", "bob"), "db")
    for namespace in NAMESPACES:
        for key in [*VALUES, "missing"]:
            assert plain(ours.get(namespace, key)) == plain(theirs.get(namespace, key)), (namespace, key)
    # (InMemoryStore's get of an unknown namespace creates it empty, and then lists it;
    # a get never creates anything here.)
    assert ours.get(("nobody",), "k") is None
    listings: list[dict[str, Any]] = [
        {}, {"prefix": ("memories",)}, {"suffix": ("alice",)}, {"prefix": ("*", "alice")},
        {"prefix": ("memories", "*", "work")}, {"max_depth": 1}, {"max_depth": 2},
        {"prefix": ("docs",), "max_depth": 2}, {"limit": 2}, {"limit": 2, "offset": 2},
        {"suffix": ("*",), "max_depth": 1}, {"prefix": ("nothing",)},
    ]
    for options in listings:
        assert ours.list_namespaces(**options) == theirs.list_namespaces(**options), options


def test_filters_limit_and_offset_select_the_same_items(ours: OpenClawMemoryStore) -> None:
    theirs = InMemoryStore()
    for store in (ours, theirs):
        fill(store)
    filters: list[dict[str, Any] | None] = [
        None, {"kind": "travel"}, {"year": {"$gte": 2026}}, {"year": {"$lt": 2026}},
        {"kind": {"$ne": "travel"}}, {"nested": {"seat": "12A"}}, {"tags": ["flight", "lisbon"]},
        {"kind": "travel", "year": 2026}, {"kind": "nothing"},
    ]
    for prefix in [("memories",), ("memories", "bob"), ("docs",), ()]:
        for spec in filters:
            mine = {(tuple(i.namespace), i.key) for i in ours.search(prefix, filter=spec, limit=100)}
            their = {(tuple(i.namespace), i.key) for i in theirs.search(prefix, filter=spec, limit=100)}
            assert mine == their, (prefix, spec)
    # Pages partition the listing (the order differs: newest first here, insertion order there).
    everything = [(tuple(i.namespace), i.key) for i in ours.search((), limit=100)]
    pages = [(tuple(i.namespace), i.key) for offset in range(0, 15, 4)
             for i in ours.search((), limit=4, offset=offset)]
    assert pages == everything and len(everything) == len(NAMESPACES) * len(VALUES)
    # A range on a field some items lack: those items do not match (InMemoryStore raises).
    assert {i.key for i in ours.search(("docs",), filter={"score": {"$lte": 0.75}})} == {"db"}


def test_listing_without_a_query_is_newest_first(ours: OpenClawMemoryStore) -> None:
    for key in ("a", "b", "c"):
        ours.put(("n",), key, {"v": key})
        time.sleep(0.002)
    ours.put(("n",), "a", {"v": "a2"})
    assert [i.key for i in ours.search(("n",))] == ["a", "c", "b"]


def test_updated_at_moves_and_created_at_survives_an_update(ours: OpenClawMemoryStore) -> None:
    ours.put(("n",), "k", {"v": 1})
    first = ours.get(("n",), "k")
    time.sleep(0.01)
    ours.put(("n",), "k", {"v": 2})
    second = ours.get(("n",), "k")
    assert first is not None and second is not None
    assert second.updated_at > first.updated_at
    assert second.created_at == first.created_at  # documented: InMemoryStore resets it
    theirs = InMemoryStore()
    theirs.put(("n",), "k", {"v": 1})
    created = theirs.get(("n",), "k").created_at  # type: ignore[union-attr]
    time.sleep(0.01)
    theirs.put(("n",), "k", {"v": 2})
    assert theirs.get(("n",), "k").created_at > created  # type: ignore[union-attr]


def test_values_round_trip_exactly_and_are_readable_markdown(ours: OpenClawMemoryStore) -> None:
    value = {"z": 1, "a": [1, 2.5, "x", None, True, {"deep": ["é", "漢字"]}], "text": "line\nnext"}
    ours.put(("prefs", "ünïcode user"), "k/1?", value)
    got = ours.get(("prefs", "ünïcode user"), "k/1?")
    assert got is not None and got.value == value and list(got.value) == ["z", "a", "text"]
    paths = ours.space.paths("memory")  # files in a folder, rows in a database
    assert len(paths) == 1 and paths[0].split("/")[-2] == "%C3%BCn%C3%AFcode%20user"
    text = (ours.space.read(paths[0]) or b"").decode("utf-8")
    assert "\n# k/1?\n" in text and "text: line\nnext" in text


def test_a_namespace_label_with_a_slash_stays_one_folder(ours: OpenClawMemoryStore) -> None:
    # BaseStore.put refuses labels with dots; batch() is reached directly by other callers.
    ours.batch([PutOp(("a/b", "..", ".hidden"), "k", {"v": 1})])
    assert ours.list_namespaces() == [("a/b", "..", ".hidden")]
    got = ours.batch([GetOp(("a/b", "..", ".hidden"), "k")])[0]
    assert isinstance(got, Item) and plain(got) == (("a/b", "..", ".hidden"), "k", {"v": 1})
    paths = ours.space.paths("memory")
    assert [p.split("/")[1] for p in paths] == ["a%2Fb"]
    assert not any(name.startswith(".") for p in paths for name in p.split("/"))


def test_values_that_would_not_read_back_identical_are_refused(ours: OpenClawMemoryStore) -> None:
    for bad in ({"t": (1, 2)}, {"f": float("nan")}, {1: "int key"}, {"o": object()}):
        with pytest.raises(ContentError):
            ours.put(("n",), "k", bad)
    assert ours.get(("n",), "k") is None


def test_index_false_stores_without_making_the_item_findable(ours: OpenClawMemoryStore) -> None:
    ours.put(("n",), "hidden", {"content": "the zebra code is 1234"}, index=False)
    ours.put(("n",), "shown", {"content": "the zebra crossing"})
    assert [i.key for i in ours.search(("n",), query="zebra")] == ["shown"]
    assert {i.key for i in ours.search(("n",))} == {"hidden", "shown"}


def test_index_fields_choose_what_is_searchable(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    with OpenClawMemoryStore.open(tmp_path / "ws", index={"dims": 1, "embed": None,  # type: ignore[typeddict-item]
                                                          "fields": ["content"]},
                                  index_path=tmp_path / "i.sqlite",
                                  embedding={"provider": "none"}) as store:
        store.put(("n",), "k", {"content": "green tea", "private": "zebra"})
        store.put(("n",), "j", {"content": "coffee", "tags": ["zebra"]}, index=["tags[*]"])
        assert [i.key for i in store.search(("n",), query="green tea")] == ["k"]
        assert [i.key for i in store.search(("n",), query="zebra")] == ["j"]


def test_deleting_the_index_file_loses_nothing(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    index = tmp_path / "i.sqlite"
    with OpenClawMemoryStore.open(tmp_path / "ws", index_path=index,
                                  embedding={"provider": "none"}) as store:
        fill(store)
        before = [(tuple(i.namespace), i.key) for i in store.search(("memories",), query="Lisbon flight")]
    for leftover in tmp_path.glob("i.sqlite*"):
        leftover.unlink()
    with OpenClawMemoryStore.open(tmp_path / "ws", index_path=index,
                                  embedding={"provider": "none"}) as store:
        after = [(tuple(i.namespace), i.key) for i in store.search(("memories",), query="Lisbon flight")]
        assert after == before and before
        assert plain(store.get(("docs", "alice"), "db")) == (("docs", "alice"), "db", VALUES["db"])


def test_a_query_ranks_by_meaning_and_an_off_topic_one_finds_nothing(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    with OpenClawMemoryStore.open(tmp_path / "ws", index_path=tmp_path / "i.sqlite") as store:
        fill(store)
        hits = store.search(("memories", "alice"), query="what does she like to drink?", limit=2)
        assert hits[0].key == "tea" and hits[0].score is not None and hits[0].score > 0
        assert all(tuple(h.namespace) == ("memories", "alice") for h in hits)
        assert store.search(("memories",), query="How tall is Mount Everest?") == []
        filtered = store.search(("memories",), query="flight to Lisbon", filter={"year": 2026})
        assert filtered and all(h.value["year"] == 2026 for h in filtered)
        assert filtered[0].key == "trip"


def test_notes_that_are_not_items_are_ignored_by_the_store(ours: OpenClawMemoryStore) -> None:
    ours.put(("memories", "alice"), "tea", VALUES["tea"])
    ours.space.write("memory/memories/alice/2026-11-23.md", b"Alice mentioned tea again.\n")
    ours.space.write("memory/2026-11-23.md", b"tea\n")
    ours.space.settle("notes written beside the items")
    assert [i.key for i in ours.search(("memories",))] == ["tea"]
    assert [i.key for i in ours.search(("memories",), query="tea")] == ["tea"]
    assert ours.list_namespaces() == [("memories", "alice")]


async def test_async_calls_return_what_sync_calls_do(ours: OpenClawMemoryStore) -> None:
    await ours.aput(("n",), "k", {"content": "async note"})
    assert plain(await ours.aget(("n",), "k")) == (("n",), "k", {"content": "async note"})
    assert [i.key for i in await ours.asearch(("n",), query="async note")] == ["k"]
    assert await ours.alist_namespaces() == [("n",)]
    await ours.adelete(("n",), "k")
    assert await ours.aget(("n",), "k") is None
    results = await asyncio.gather(*(ours.aput(("n",), f"k{i}", {"v": i}) for i in range(10)))
    assert results == [None] * 10 and len(await ours.asearch(("n",), limit=20)) == 10


def test_opening_a_workspace_that_does_not_exist_yet_creates_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with OpenClawMemoryStore.open("~/agent-workspace", index_path=tmp_path / "s.sqlite",
                                  embedding={"provider": "none"}) as store:
        store.put(("memories", "alice"), "pref", {"text": "likes kayaks"})
        item = store.get(("memories", "alice"), "pref")
        assert item is not None and item.value == {"text": "likes kayaks"}
    assert (tmp_path / "agent-workspace").stat().st_mode & 0o777 == 0o700


def test_a_query_pages_through_every_match_whatever_the_text_budget(
        ours: OpenClawMemoryStore) -> None:
    # search.max_injected_chars bounds what a model is handed, not a store's pages.
    for n in range(100):
        ours.put(("trips",), f"t{n:03d}", {"text": f"Trip {n}: rented kayaks on the lake, "
                                                    "paddled for hours and had a picnic after."})
    everything = ours.search(("trips",), query="kayaks", limit=100)
    assert len(everything) == 100 and len({i.key for i in everything}) == 100
    page = ours.search(("trips",), query="kayaks", offset=40, limit=20)
    assert [i.key for i in page] == [i.key for i in everything[40:60]]


def test_a_none_filter_matches_items_whose_field_is_null_or_absent_as_in_memory_store(
        ours: OpenClawMemoryStore) -> None:
    theirs = InMemoryStore()
    for store in (ours, theirs):
        store.put(("f",), "set", {"x": 1})
        store.put(("f",), "null", {"x": None})
        store.put(("f",), "absent", {"y": 2})
    assert ({i.key for i in ours.search(("f",), filter={"x": None})}
            == {i.key for i in theirs.search(("f",), filter={"x": None})} == {"null", "absent"})
