"""The indexed daily files (``.../YYYY-MM-DD.md``) by name, for a question naming a period.

A question that names a period gets the daily files of that period as candidates. Listing
every daily file and testing each name cost 50-70 ms a question at 100k chunks (tens of
thousands of files); here their names are read once per index generation, sorted by SQLite
(sorting 47 000 of them in Python, and the lists built beside, was 60 ms of a new process's
first dated question), so a window is two binary searches, and a month of any year one
dictionary look-up in an index built the first time a question names one.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from operator import itemgetter

from openclaw_memory.language.dates import DateWindow

__all__ = ["DailyNames"]


class DailyNames:
    """Daily file paths sorted by their ``YYYY-MM-DD.md`` name (callers hold the store lock)."""

    def __init__(self) -> None:
        self._generation: int | None = None
        self._pairs: list[tuple[str, str]] = []
        self._by_month: dict[str, list[int]] | None = None

    def _months(self) -> dict[str, list[int]]:
        if self._by_month is None:
            self._by_month = {}
            for at, (name, _path) in enumerate(self._pairs):
                self._by_month.setdefault(name[4:8], []).append(at)
        return self._by_month

    def paths(self, generation: int, read: Callable[[], list[tuple[str, str]]],
              windows: Sequence[DateWindow], path_prefix: str | None = None) -> list[str]:
        """The paths whose name falls in a window's range of names, or in a month of any year
        that a window names: what ``search.dates.name_filter`` accepts, found by name.
        ``read``: (the path's last 13 characters, the path) of every daily file, sorted."""
        if generation != self._generation:
            self._pairs, self._by_month = read(), None
            self._generation = generation
        found: set[int] = set()
        name = itemgetter(0)
        for window in windows:
            named = window.name_range()
            if named is not None:
                low, high = named
                found.update(range(bisect.bisect_left(self._pairs, low, key=name),
                                   bisect.bisect_right(self._pairs, high, key=name)))
            if window.month is not None:
                found.update(self._months().get(f"-{window.month:02d}-", ()))
        return [self._pairs[at][1] for at in sorted(found)
                if path_prefix is None or self._pairs[at][1].startswith(path_prefix)]

    def forget(self) -> None:
        self._generation = None
