"""Days as people write them: the absolute date forms of questions and of note text.

English words ("10 January 2024", "the 10th of January", "Jan 10, 2024", "May 2022", "summer
2023"), numbers (``2024-01-10``, ``10.01.2024``, ``10/01/2024`` or ``01/10/2024``,
``2024/01/10``, ``2024.1.10``), ISO weeks (``2024-W02``, "week 2 of 2024") and Chinese or
Japanese (``2024年1月10日``, ``1月10号``, ``三月十二日``, ``2024年5月``).

Day or month first: a dotted date (``10.01.2024``) is day-first wherever it is written; a
slashed one follows ``order`` ("dmy" or "mdy"; "auto": the user's locale, month-first for the
United States and a few others, day-first elsewhere). A slashed date valid only one way is
read that way; valid both ways under "auto" it is read both ways (two windows), under an
explicit order that order's way.
"""

from __future__ import annotations

import calendar
import functools
import locale
import os
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Literal

__all__ = ["DAY_SLACK", "PATTERNS", "DateOrder", "Span", "absolute_spans", "bare_months",
           "calendar_word", "locale_order", "spell_dates", "text_days"]

DateOrder = Literal["auto", "dmy", "mdy"]
Span = tuple[date, date]
"""A period, first and last day inclusive (one day: first == last)."""

#: A day named exactly is widened by a day each side: a conversation late at night is filed
#: under the next day, and "on 1 May" often refers to a note written the day after.
DAY_SLACK = timedelta(days=1)

_MONTHS = {name: i for i, name in enumerate(
    "january february march april may june july august september october november december"
    .split(), 1)}
_MONTHS.update({name[:3]: i for name, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|" \
         r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_WEEKDAYS = frozenset(name for day in ("monday", "tuesday", "wednesday", "thursday", "friday",
                                       "saturday", "sunday") for name in (day, day[:3]))
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11)}
#: Regions writing the month first in slashed dates (CLDR short date patterns).
_MONTH_FIRST_REGIONS = frozenset({"US", "PH", "FM", "MH", "PW", "AS", "GU", "MP", "PR", "UM",
                                  "VI", "BZ"})

_END = r"(?!\d|[/.-]\d)"  # a sentence's full stop may follow; another number may not
ISO = re.compile(rf"(?<![\d/.])(\d{{4}})-(\d{{1,2}})-(\d{{1,2}}){_END}")
DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+(\d{{4}}))?\b", re.I)
MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}(?:,?\s+(\d{{4}})\b|\b(?!\s*\d{{3}}))", re.I)
MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.I)
SEASON_YEAR = re.compile(r"\b(spring|summer|autumn|fall)\s+(?:of\s+)?(\d{4})\b", re.I)
BARE_MONTH = re.compile(rf"\b(?:in|during|since|until|of|early|late|mid|last|this)\s+{_MONTH}\b",
                        re.I)
YEAR = re.compile(r"\b(?:in|during|since|of)\s+(\d{4})\b", re.I)
DOTTED = re.compile(rf"(?<![\d.])(\d{{1,2}})\.(\d{{1,2}})\.(\d{{4}}){_END}")
SLASHED = re.compile(rf"(?<![\d/])(\d{{1,2}})/(\d{{1,2}})/(\d{{4}}){_END}")
YEAR_FIRST = re.compile(rf"(?<![\d/.])(\d{{4}})([/.])(\d{{1,2}})\2(\d{{1,2}}){_END}")
ISO_WEEK = re.compile(r"\b(\d{4})-?W(\d{1,2})(?:-?([1-7]))?\b")
WEEK_OF = re.compile(r"\b(?:iso\s+)?week\s+(\d{1,2})\s*(?:of|,|in)?\s+(\d{4})\b", re.I)
_ZH_NUMBER = "\u3007零一二两三四五六七八九十"
ZH_DAY = re.compile(rf"(?:(\d{{4}})年)?([\d{_ZH_NUMBER}]{{1,3}})月([\d{_ZH_NUMBER}]{{1,3}})[日号號]")
ZH_MONTH = re.compile(rf"(\d{{4}})年([\d{_ZH_NUMBER}]{{1,3}})月(?![\d{_ZH_NUMBER}])")
ZH_YEAR = re.compile(r"(\d{4})年(?!\d{1,2}月)")

#: Every pattern above: what a date looks like, for telling a question about a period.
PATTERNS = (ISO, DAY_MONTH, MONTH_DAY, MONTH_YEAR, SEASON_YEAR, BARE_MONTH, YEAR, DOTTED,
            SLASHED, YEAR_FIRST, ISO_WEEK, WEEK_OF, ZH_DAY, ZH_MONTH, ZH_YEAR)


def calendar_word(word: str) -> bool:
    """Whether ``word`` names a month or a weekday ("June", "Tue"): capitalised, and no name."""
    word = word.lower().rstrip(".")
    return word in _MONTHS or word in _WEEKDAYS


def locale_order() -> Literal["dmy", "mdy"]:
    """The user's slashed-date order: month first in the United States (and a few regions
    following it), day first elsewhere; read from ``LC_ALL``, ``LC_TIME`` or ``LANG``."""
    name = next((os.environ[k] for k in ("LC_ALL", "LC_TIME", "LANG") if os.environ.get(k)), "")
    if not name:
        try:
            name = locale.getlocale(locale.LC_TIME)[0] or ""
        except ValueError:
            name = ""
    region = re.search(r"[_-]([A-Za-z]{2})\b", name)
    return "mdy" if region and region.group(1).upper() in _MONTH_FIRST_REGIONS else "dmy"


def _zh_number(text: str) -> int | None:
    """``12``, ``十二``, ``二十``, ``三``: a day or month number in digits or Chinese."""
    if text.isdigit():
        return int(text)
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"\u3007": 0, "两": 2}
    if "十" in text:
        tens, _, ones = text.partition("十")
        if (tens and tens not in digits) or (ones and ones not in digits):
            return None
        return (digits[tens] if tens else 1) * 10 + (digits[ones] if ones else 0)
    return digits.get(text) if len(text) == 1 else None


def _exact(year: int, month: int, day: int) -> Span | None:
    try:
        exact = date(year, month, day)
    except ValueError:
        return None
    return exact, exact


def _month(year: int, month: int) -> Span | None:
    if not 1 <= month <= 12 or not 1 <= year <= 9999:
        return None
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _recent(month: int, day: int, today: date) -> Span | None:
    """A day named without a year: its latest occurrence up to today (a day of slack)."""
    for year in (today.year, today.year - 1):
        span = _exact(year, month, day)
        if span is not None and span[0] - DAY_SLACK <= today:
            return span
    return None


def _week(year: int, week: int, weekday: str | None) -> Span | None:
    try:
        monday = date.fromisocalendar(year, week, 1)
    except ValueError:
        return None
    if weekday:
        day = monday + timedelta(days=int(weekday) - 1)
        return day, day
    return monday, monday + timedelta(days=6)


def _slashed(a: int, b: int, year: int, order: DateOrder) -> list[Span | None]:
    day_first, month_first = _exact(year, b, a), _exact(year, a, b)
    if day_first is None or month_first is None or day_first == month_first:
        return [day_first or month_first]
    if order == "auto":
        return [day_first, month_first] if locale_order() == "dmy" else [month_first, day_first]
    return [day_first if order == "dmy" else month_first]


def _numeric(text: str, order: DateOrder) -> list[Span | None]:
    found: list[Span | None] = [_exact(int(y), int(m), int(d)) for y, m, d in ISO.findall(text)]
    found += [_exact(int(y), int(m), int(d)) for d, m, y in DOTTED.findall(text)]
    found += [_exact(int(y), int(m), int(d)) for y, _sep, m, d in YEAR_FIRST.findall(text)]
    for a, b, y in SLASHED.findall(text):
        found += _slashed(int(a), int(b), int(y), order)
    found += [_week(int(y), int(w), d) for y, w, d in ISO_WEEK.findall(text)]
    found += [_week(int(y), int(w), None) for w, y in WEEK_OF.findall(text)]
    return found


def _worded(text: str, today: date | None) -> list[Span | None]:
    found: list[Span | None] = []
    for pattern, order in ((DAY_MONTH, "dmy"), (MONTH_DAY, "mdy")):
        for groups in pattern.findall(text):
            d, m, y = groups if order == "dmy" else (groups[1], groups[0], groups[2])
            month = _MONTHS[m.lower()]
            if y:
                found.append(_exact(int(y), month, int(d)))
            elif today is not None:
                found.append(_recent(month, int(d), today))
    return found


def _chinese(text: str, today: date | None, months: bool) -> list[Span | None]:
    found: list[Span | None] = []
    for y, m, d in ZH_DAY.findall(text):
        month, day = _zh_number(m), _zh_number(d)
        if month is None or day is None:
            continue
        if y:
            found.append(_exact(int(y), month, day))
        elif today is not None:
            found.append(_recent(month, day, today))
    if months:
        for y, m in ZH_MONTH.findall(text):
            month = _zh_number(m)
            found.append(_month(int(y), month) if month is not None else None)
    return found


def _periods(text: str) -> list[Span | None]:
    """Months and seasons of a year ("May 2022", "summer 2023"), where no day was named."""
    found: list[Span | None] = [_month(int(y), _MONTHS[m.lower()])
                                for m, y in MONTH_YEAR.findall(text)]
    for season, y in SEASON_YEAR.findall(text):
        first, last = _SEASONS[season.lower()]
        start, end = _month(int(y), first), _month(int(y), last)
        if start is not None and end is not None:
            found.append((start[0], end[1]))
    return found


def absolute_spans(text: str, today: date, order: DateOrder = "auto") -> list[Span | None]:
    """The days and periods ``text`` names in any absolute form (a day without a year is its
    latest occurrence up to ``today``); broader forms only where no day was named."""
    found = [*_numeric(text, order), *_worded(text, today), *_chinese(text, today, False)]
    if not found:  # "May 2022" only where no day was named (a day that does not exist counts)
        found += [*_periods(text), *_chinese_months(text)]
    if not found:
        found += [(date(int(y), 1, 1), date(int(y), 12, 31))
                  for y in [*YEAR.findall(text), *ZH_YEAR.findall(text)] if 1 <= int(y) <= 9999]
    return found


def _chinese_months(text: str) -> list[Span | None]:
    return [s for s in _chinese(text, None, True) if s is None or s[0] != s[1]]


def bare_months(text: str) -> list[int]:
    """Months named without a year ("in May"): a month of any year."""
    return [_MONTHS[m.lower()] for m in BARE_MONTH.findall(text)]


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")


def spell_dates(text: str, order: DateOrder = "auto") -> str:
    """``text`` with its numeric dates spelled out ("10.01.2024" -> "10 January 2024"): the
    month's name is what notes and the encoder know a month by. A slashed date valid both
    ways is spelled the way ``order`` (or the locale) reads it first."""

    def spelled(span: Span | None, original: str) -> str:
        if span is None or span[0] != span[1]:
            return original
        day = span[0]
        return f"{day.day} {_MONTH_NAMES[day.month - 1]} {day.year}"

    def replace(pattern: re.Pattern[str], read: Callable[[re.Match[str]], Span | None],
                value: str) -> str:
        return pattern.sub(lambda m: spelled(read(m), m.group(0)), value)

    out = replace(ISO, lambda m: _exact(int(m[1]), int(m[2]), int(m[3])), text)
    out = replace(DOTTED, lambda m: _exact(int(m[3]), int(m[2]), int(m[1])), out)
    out = replace(YEAR_FIRST, lambda m: _exact(int(m[1]), int(m[3]), int(m[4])), out)
    return replace(SLASHED, lambda m: _slashed(int(m[1]), int(m[2]), int(m[3]), order)[0], out)


#: A year as every form of :func:`text_days` writes it: four digits, no digit either side.
_YEAR = re.compile(r"(?<!\d)\d{4}(?!\d)")
#: How far a form reaches before its year ("the 21st of September, 2024": 27 characters)
#: and after it ("2024年12月31日", "2024-W52-7": 7); a part is widened to whole words.
_BEFORE_YEAR, _AFTER_YEAR = 40, 16


@functools.lru_cache(maxsize=4096)
def text_days(text: str, order: DateOrder = "auto") -> frozenset[date]:
    """Every day a note's text names with its year, in any form (no relative words: a
    note's "yesterday" is its own day's). Remembered: a dated question tests a dozen
    candidates' texts with four patterns each, and the same chunks come back question after
    question. Only the text around each four-digit year is read: the patterns' scans of
    whole chunks were a fifth of a new dated question's first search."""
    spans: list[Span | None] = []
    for part in _around_years(text):
        spans += [*_numeric(part, order), *_worded(part, None), *_chinese(part, None, False)]
    return frozenset(s[0] for s in spans if s is not None and s[0] == s[1])


def _around_years(text: str) -> list[str]:
    """The parts of ``text`` around its four-digit numbers, overlapping ones merged, each
    widened to the whitespace around it (a word is never cut, so ``\\b`` reads as in
    ``text``)."""
    parts: list[tuple[int, int]] = []
    for found in _YEAR.finditer(text):
        lo = _word_start(text, max(0, found.start() - _BEFORE_YEAR))
        hi = _word_end(text, min(len(text), found.end() + _AFTER_YEAR))
        if parts and lo <= parts[-1][1]:
            parts[-1] = (parts[-1][0], hi)
        else:
            parts.append((lo, hi))
    return [text[lo:hi] for lo, hi in parts]


def _word_start(text: str, at: int) -> int:
    while at > 0 and not text[at - 1].isspace():
        at -= 1
    return at


def _word_end(text: str, at: int) -> int:
    while at < len(text) and not text[at].isspace():
        at += 1
    return at
