"""Daily files of the periods a question names, found by name in a sorted list: the same
files the name test accepts, whatever the windows, folders and names."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_memory.language.dates import DateWindow, name_filter
from openclaw_memory.store import Store
from openclaw_memory.store.daily_names import DailyNames
from openclaw_memory.types import Chunk, MemoryFile

days = st.dates(min_value=date(2019, 1, 1), max_value=date(2027, 12, 31))
folders = st.sampled_from(["memory/", "memory/users/alice/", "memory/users/bob/", "memory/c00007/s1/memory/"])
paths = st.builds(lambda folder, day: f"{folder}{day.isoformat()}.md", folders, days)
windows = st.one_of(
    st.builds(lambda day, span: DateWindow(day, day + timedelta(days=span)), days, st.integers(0, 40)),
    st.builds(lambda month: DateWindow(month=month), st.integers(1, 12)))


@settings(max_examples=200, deadline=None)
@given(st.lists(paths, max_size=60, unique=True), st.lists(windows, min_size=1, max_size=3),
       st.sampled_from([None, "memory/users/alice/", "memory/"]))
def test_found_by_name_equals_the_name_test(listed: list[str], asked: list[DateWindow],
                                             prefix: str | None) -> None:
    test = name_filter(asked)
    expected = {p for p in listed if test(p) and (prefix is None or p.startswith(prefix))}
    pairs = sorted((p[-13:], p) for p in listed)  # as the store reads them
    assert set(DailyNames().paths(1, lambda: pairs, asked, prefix)) == expected


def test_the_store_lists_the_daily_files_the_name_test_accepts(tmp_path: Path) -> None:
    store = Store(tmp_path / "i.sqlite", vector_backend="numpy")
    listed = [f"{folder}2026-{month:02d}-{day:02d}.md"
              for folder in ("memory/", "memory/users/alice/", "memory/z/")
              for month in (1, 5, 12) for day in (1, 15, 31)]
    for path in [*listed, "memory/notes.md", "memory/2026-05-xx.txt"]:
        store.replace_file(MemoryFile(path, f"/ws/{path}", "memory", 1, 10), "h",
                           [Chunk(path, "memory", 1, 1, "a note", f"h{path}")], None, "m")
    for asked in ([DateWindow(date(2026, 5, 1), date(2026, 5, 15))], [DateWindow(month=12)],
                  [DateWindow(date(2025, 12, 31), date(2026, 1, 1)), DateWindow(month=5)]):
        test = name_filter(asked)
        assert store.daily_paths(asked) == sorted((p for p in listed if test(p)),
                                                  key=lambda p: (p[-13:], p))
    store.close()


def test_the_list_is_read_again_only_when_the_index_changes() -> None:
    reads: list[int] = []
    names = DailyNames()
    may = [DateWindow(month=5)]

    def read() -> list[tuple[str, str]]:
        reads.append(1)
        return [("2026-05-01.md", "memory/2026-05-01.md")]

    assert names.paths(3, read, may) == ["memory/2026-05-01.md"]
    assert names.paths(3, read, may) == ["memory/2026-05-01.md"] and len(reads) == 1
    assert names.paths(4, lambda: [], may) == []
