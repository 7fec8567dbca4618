"""The indexed daily files (``.../YYYY-MM-DD.md``) by name, for a question naming a period.

A question that names a period gets the daily files of that period as candidates. Listing
every daily file and testing each name cost 50-70 ms a question at 100k chunks (tens of
thousands of files); here their names are read once per index generation, sorted, so a
window is two binary searches and a month of any year one dictionary look-up.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence

from openclaw_memory.search.dates import DateWindow

__all__ = ["DailyNames"]


class DailyNames:
    """Daily file paths sorted by their ``YYYY-MM-DD.md`` name (callers hold the store lock)."""

    def __init__(self) -> None:
        self._generation: int | None = None
        self._names: list[str] = []
        self._paths: list[str] = []
        self._by_month: dict[str, list[int]] = {}

    def _load(self, paths: list[str]) -> None:
        pairs = sorted((path[-13:], path) for path in paths)
        self._names = [name for name, _ in pairs]
        self._paths = [path for _, path in pairs]
        self._by_month = {}
        for at, name in enumerate(self._names):
            self._by_month.setdefault(name[4:8], []).append(at)

    def paths(self, generation: int, read: Callable[[], list[str]],
              windows: Sequence[DateWindow], path_prefix: str | None = None) -> list[str]:
        """The paths whose name falls in a window's range of names, or in a month of any year
        that a window names: what ``search.dates.name_filter`` accepts, found by name."""
        if generation != self._generation:
            self._load(read())
            self._generation = generation
        found: set[int] = set()
        for window in windows:
            named = window.name_range()
            if named is not None:
                low, high = named
                found.update(range(bisect.bisect_left(self._names, low),
                                   bisect.bisect_right(self._names, high)))
            if window.month is not None:
                found.update(self._by_month.get(f"-{window.month:02d}-", ()))
        return [self._paths[at] for at in sorted(found)
                if path_prefix is None or self._paths[at].startswith(path_prefix)]

    def forget(self) -> None:
        self._generation = None
