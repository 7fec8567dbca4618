"""Daily files of the periods a question names, found by name in a sorted list: the same
files the name test accepts, whatever the windows, folders and names."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_memory.search.dates import DateWindow, name_filter
from openclaw_memory.store.daily_names import DailyNames

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
    assert set(DailyNames().paths(1, lambda: listed, asked, prefix)) == expected


def test_the_list_is_read_again_only_when_the_index_changes() -> None:
    reads: list[int] = []
    names = DailyNames()
    may = [DateWindow(month=5)]

    def read() -> list[str]:
        reads.append(1)
        return ["memory/2026-05-01.md"]

    assert names.paths(3, read, may) == ["memory/2026-05-01.md"]
    assert names.paths(3, read, may) == ["memory/2026-05-01.md"] and len(reads) == 1
    assert names.paths(4, lambda: [], may) == []
