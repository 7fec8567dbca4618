"""Dates in a question, matched against the dates of daily files.

"What did Joanna do in May 2022?", "what did we decide last week?", "2022年5月": the day a note
was written is in its name (``memory/YYYY-MM-DD.md``), and a question that names a period is
asking about notes of that period, whatever words they use. :func:`question_dates` reads the
periods a question names (absolute dates in English and Chinese, and the common relative ones
against the user's today); the search pipeline adds the daily files of those periods to the
candidates and gives their chunks a bonus (``search.date_weight``), which the relevance gate
does not count: naming a date is not evidence of being on topic.

Measured on LoCoMo dev, where 75 of 472 questions name a date: their recall@6 went from 85.1
to 89.1, and no question without one moved.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from openclaw_memory.files.workspace import dated_name

__all__ = ["DateWindow", "about_a_period", "file_date", "in_windows", "question_dates"]

_MONTHS = {name: i for i, name in enumerate(
    "january february march april may june july august september october november december"
    .split(), 1)}
_MONTHS.update({name[:3]: i for name, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|" \
         r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11)}
# A day named exactly is widened by a day each side: a conversation late at night is filed
# under the next day, and "on 1 May" often refers to a note written the day after.
_DAY_SLACK = timedelta(days=1)

_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+(\d{{4}}))?\b", re.I)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\s*\d{{3}})(?:,?\s+(\d{{4}}))?", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.I)
_SEASON_YEAR = re.compile(r"\b(spring|summer|autumn|fall)\s+(?:of\s+)?(\d{4})\b", re.I)
_BARE_MONTH = re.compile(rf"\b(?:in|during|since|until|of|early|late|mid|last|this)\s+{_MONTH}\b",
                         re.I)
_YEAR = re.compile(r"\b(?:in|during|since|of)\s+(\d{4})\b", re.I)
_AGO = re.compile(r"\b(\d{1,3}|a|an|one|two|three|four|five|six)\s+(day|week|month)s?\s+ago\b",
                  re.I)
_LAST_WEEKDAY = re.compile(r"\b(?:last|on)\s+(" + "|".join(_WEEKDAYS) + r")\b", re.I)
_ZH_DAY = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]")
_ZH_MONTH = re.compile(r"(\d{4})年(\d{1,2})月(?!\d)")
_ZH_YEAR = re.compile(r"(\d{4})年(?!\d{1,2}月)")
_WORD_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True, slots=True)
class DateWindow:
    """A period a question names: ``start``..``end`` inclusive, or a month of any year
    (``month``: "in May" over notes of several years)."""

    start: date | None = None
    end: date | None = None
    month: int | None = None

    def contains(self, day: date) -> bool:
        if self.month is not None:
            return day.month == self.month
        return self.start is not None and self.end is not None and self.start <= day <= self.end

    def name_range(self) -> tuple[str, str] | None:
        """The window as the first and last ``YYYY-MM-DD.md`` file names it holds (names of
        one shape sort as their dates do), or None for a month of any year."""
        if self.start is None or self.end is None:
            return None
        return f"{self.start.isoformat()}.md", f"{self.end.isoformat()}.md"


def _day(year: int, month: int, day: int) -> DateWindow | None:
    try:
        exact = date(year, month, day)
    except ValueError:
        return None
    return DateWindow(exact - _DAY_SLACK, exact + _DAY_SLACK)


def _month(year: int, month: int) -> DateWindow | None:
    if not 1 <= month <= 12 or not 1 <= year <= 9999:
        return None
    return DateWindow(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _recent(month: int, day: int, today: date) -> DateWindow | None:
    """A day named without a year: its latest occurrence up to today."""
    for year in (today.year, today.year - 1):
        window = _day(year, month, day)
        if window is not None and window.start is not None and window.start <= today:
            return window
    return None


def _absolute(query: str, today: date) -> list[DateWindow | None]:
    found: list[DateWindow | None] = []
    found += [_day(int(y), int(m), int(d)) for y, m, d in _ISO.findall(query)]
    for d, m, y in _DAY_MONTH.findall(query):
        month = _MONTHS[m.lower()]
        found.append(_day(int(y), month, int(d)) if y else _recent(month, int(d), today))
    for m, d, y in _MONTH_DAY.findall(query):
        month = _MONTHS[m.lower()]
        found.append(_day(int(y), month, int(d)) if y else _recent(month, int(d), today))
    if not found:  # "May 2022" only where no day of May 2022 was named
        found += [_month(int(y), _MONTHS[m.lower()]) for m, y in _MONTH_YEAR.findall(query)]
        for season, y in _SEASON_YEAR.findall(query):
            first, last = _SEASONS[season.lower()]
            start, end = _month(int(y), first), _month(int(y), last)
            if start is not None and end is not None:
                found.append(DateWindow(start.start, end.end))
    if not found:
        found += [DateWindow(month=_MONTHS[m.lower()]) for m in _BARE_MONTH.findall(query)]
        found += [DateWindow(date(int(y), 1, 1), date(int(y), 12, 31))
                  for y in _YEAR.findall(query) if 1 <= int(y) <= 9999]
    return found


def _chinese(query: str, today: date) -> list[DateWindow | None]:
    found: list[DateWindow | None] = []
    for y, m, d in _ZH_DAY.findall(query):
        found.append(_day(int(y), int(m), int(d)) if y else _recent(int(m), int(d), today))
    found += [_month(int(y), int(m)) for y, m in _ZH_MONTH.findall(query)]
    found += [DateWindow(date(int(y), 1, 1), date(int(y), 12, 31))
              for y in _ZH_YEAR.findall(query) if 1 <= int(y) <= 9999]
    return found


def _week(monday: date) -> DateWindow:
    return DateWindow(monday, monday + timedelta(days=6))


def _day_at(day: date) -> DateWindow:
    return DateWindow(day, day)


def _monday(today: date) -> date:
    return today - timedelta(days=today.weekday())


def _last_month(today: date) -> DateWindow:
    end = today.replace(day=1) - timedelta(days=1)
    return DateWindow(end.replace(day=1), end)


# Relative periods: the words that name one, and the period they name from the user's today.
_RELATIVE: tuple[tuple[tuple[str, ...], Callable[[date], DateWindow]], ...] = (
    (("day before yesterday", "前天"), lambda t: _day_at(t - timedelta(days=2))),
    (("yesterday", "昨天", "昨日"), lambda t: _day_at(t - timedelta(days=1))),
    (("today", "this morning", "tonight", "今天", "今日"), _day_at),
    (("last week", "previous week", "上周", "上星期", "上个星期"),
     lambda t: _week(_monday(t) - timedelta(7))),
    (("this week", "本周", "这周", "这个星期"), lambda t: DateWindow(_monday(t), t)),
    (("last month", "previous month", "上个月", "上月"), _last_month),
    (("this month", "本月", "这个月"), lambda t: DateWindow(t.replace(day=1), t)),
    (("last year", "去年"), lambda t: DateWindow(date(t.year - 1, 1, 1), date(t.year - 1, 12, 31))),
    (("this year", "今年"), lambda t: DateWindow(date(t.year, 1, 1), t)),
)


def _relative(query: str, today: date) -> list[DateWindow | None]:
    text = query.lower()
    found: list[DateWindow | None] = []
    for words, period in _RELATIVE:
        if any(_phrase(text, w) for w in words):
            found.append(period(today))
            text = _drop(text, words)  # "day before yesterday" is not also "yesterday"
    for count, unit in _AGO.findall(text):
        n = _WORD_NUMBERS.get(count) or int(count)
        days = {"day": n, "week": 7 * n, "month": 30 * n}[unit]
        slack = {"day": 1, "week": 3, "month": 7}[unit]
        centre = today - timedelta(days=days)
        found.append(DateWindow(centre - timedelta(slack), centre + timedelta(slack)))
    for name in _LAST_WEEKDAY.findall(text):
        back = (today.weekday() - _WEEKDAYS.index(name.lower()) - 1) % 7 + 1
        found.append(_day_at(today - timedelta(days=back)))
    return found


def _phrase(text: str, phrase: str) -> bool:
    if not phrase.isascii():
        return phrase in text
    return re.search(rf"\b{re.escape(phrase)}\b", text) is not None


def _drop(text: str, phrases: Iterable[str]) -> str:
    for phrase in phrases:
        text = text.replace(phrase, " ")
    return text


def question_dates(query: str, today: date) -> tuple[DateWindow, ...]:
    """The periods ``query`` names, relative ones read against ``today`` (the user's date)."""
    found = [*_absolute(query, today), *_chinese(query, today)]
    if not any(found):  # "last Friday, 23 January 2022": the named date is the period
        found = _relative(query, today)
    return tuple(dict.fromkeys(w for w in found if w is not None))


_DATE_PATTERNS = (_ISO, _DAY_MONTH, _MONTH_DAY, _MONTH_YEAR, _SEASON_YEAR, _BARE_MONTH, _YEAR,
                  _AGO, _LAST_WEEKDAY, _ZH_DAY, _ZH_MONTH, _ZH_YEAR)
_PERIOD_WORDS = frozenset("""what happened happen did do done we i you our my us was were
    anything something new say said talk talked discuss discussed decide decided plan plans
    note notes write wrote see saw about on in during from of the a any""".split())


_PERIOD_CHARS = frozenset("我你们做了什么的呢吗啊有发生过说讨论决定计划记写事情那天些")


def about_a_period(query: str) -> bool:
    """Whether ``query`` asks about a period rather than a topic ("what did we do yesterday?",
    "notes from 3 March"): once its date words are gone, nothing but question words is left.
    Such a question is relevant when notes of that period exist; "who won the chess final in
    March 2026?" is not (its topic still needs evidence)."""
    text = query.lower()
    for pattern in _DATE_PATTERNS:
        text = pattern.sub(" ", text)
    for phrases, _ in _RELATIVE:
        text = _drop(text, phrases)
    text = "".join(" " if ch in _PERIOD_CHARS else ch for ch in text)
    words = re.findall(r"\w+", text)
    return not [w for w in words if w not in _PERIOD_WORDS and not w.isdigit()]


file_date = dated_name


def name_filter(windows: Sequence[DateWindow]) -> Callable[[str], bool]:
    """A quick test of a path's last 13 characters (``YYYY-MM-DD.md``) against ``windows``,
    by comparing strings: what a backend holding many dated files filters with before
    :func:`in_windows` decides (it also checks that the name is a real date)."""
    ranges = [r for r in (w.name_range() for w in windows) if r is not None]
    months = {f"-{w.month:02d}-" for w in windows if w.month is not None}

    def test(path: str) -> bool:
        name = path[-13:]
        return any(lo <= name <= hi for lo, hi in ranges) or name[4:8] in months
    return test


def in_windows(path: str, windows: Sequence[DateWindow]) -> bool:
    """Whether ``path`` is a daily file of one of ``windows``."""
    day = file_date(path) if windows else None
    return day is not None and any(w.contains(day) for w in windows)
