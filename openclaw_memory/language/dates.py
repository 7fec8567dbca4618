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

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from openclaw_memory.files.workspace import dated_name
from openclaw_memory.language.dateforms import (
    DAY_SLACK,
    PATTERNS,
    DateOrder,
    Span,
    absolute_spans,
    bare_months,
    text_days,
)

__all__ = ["DateWindow", "about_a_period", "file_date", "in_windows", "mentions_windows",
           "question_dates"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = "一二三四五六日"
_AGO = re.compile(r"\b(\d{1,3}|a|an|one|two|three|four|five|six)\s+(day|week|month)s?\s+ago\b",
                  re.I)
_LAST_WEEKDAY = re.compile(r"\b(?:last|on)\s+(" + "|".join(_WEEKDAYS) + r")\b", re.I)
_NEXT_WEEKDAY = re.compile(r"\b(next|this|coming)\s+(" + "|".join(_WEEKDAYS) + r")\b", re.I)
_ZH_WEEKDAY = re.compile(r"(上|下|这|本)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])")
_WEEKEND = re.compile(r"\b(last|next|this|the|that)\s+weekend\b|(上|下|这|本)?(?:个)?(?:周末|週末)",
                      re.I)
_ZH_WHICH = {"上": "last", "下": "next", "这": "this", "本": "this"}
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


def _window(span: Span) -> DateWindow:
    first, last = span
    if first == last:  # one day named: a day of slack each side
        return DateWindow(first - DAY_SLACK, last + DAY_SLACK)
    return DateWindow(first, last)


def _absolute(query: str, today: date, order: DateOrder) -> list[DateWindow | None]:
    found = [None if s is None else _window(s) for s in absolute_spans(query, today, order)]
    if not any(found):
        found += [DateWindow(month=m) for m in bare_months(query)]
    return found


def _week(monday: date) -> DateWindow:
    return DateWindow(monday, monday + timedelta(days=6))


def _day_at(day: date) -> DateWindow:
    return DateWindow(day, day)


def _monday(today: date) -> date:
    return today - timedelta(days=today.weekday())


def _next_month(today: date) -> DateWindow:
    first = (today.replace(day=28) + timedelta(days=4)).replace(day=1)
    return DateWindow(first, (first.replace(day=28) + timedelta(days=4)).replace(day=1)
                      - timedelta(days=1))


def _last_month(today: date) -> DateWindow:
    end = today.replace(day=1) - timedelta(days=1)
    return DateWindow(end.replace(day=1), end)


# Relative periods: the words that name one, and the period they name from the user's today.
_RELATIVE: tuple[tuple[tuple[str, ...], Callable[[date], DateWindow]], ...] = (
    (("day before yesterday", "前天"), lambda t: _day_at(t - timedelta(days=2))),
    (("yesterday", "昨天", "昨日"), lambda t: _day_at(t - timedelta(days=1))),
    (("today", "this morning", "tonight", "今天", "今日"), _day_at),
    (("tomorrow", "明天", "明日"), lambda t: _day_at(t + timedelta(days=1))),
    (("last week", "previous week", "上周", "上星期", "上个星期", "先週"),
     lambda t: _week(_monday(t) - timedelta(7))),
    (("this week", "本周", "这周", "这个星期", "今週"), lambda t: DateWindow(_monday(t), t)),
    (("next week", "下周", "下星期", "下个星期", "来週"),
     lambda t: _week(_monday(t) + timedelta(7))),
    (("last month", "previous month", "上个月", "上月", "先月"), _last_month),
    (("this month", "本月", "这个月", "今月"), lambda t: DateWindow(t.replace(day=1), t)),
    (("next month", "下个月", "下月", "来月"), _next_month),
    (("last year", "去年", "昨年"),
     lambda t: DateWindow(date(t.year - 1, 1, 1), date(t.year - 1, 12, 31))),
    (("this year", "今年"), lambda t: DateWindow(date(t.year, 1, 1), t)),
    (("next year", "明年", "来年"),
     lambda t: DateWindow(date(t.year + 1, 1, 1), date(t.year + 1, 12, 31))),
)


def _relative(query: str, today: date) -> list[DateWindow | None]:
    text = query.lower()
    found: list[DateWindow | None] = []
    # Weekdays and weekends first: "上周二" is last week's Tuesday, not all of last week.
    found += [_zh_weekday(which, day, today) for which, day in _ZH_WEEKDAY.findall(text)]
    found += [_weekend(m.group(1) or _ZH_WHICH.get(m.group(2) or ""), today)
              for m in _WEEKEND.finditer(text)]
    text = _WEEKEND.sub(" ", _ZH_WEEKDAY.sub(" ", text))
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
    for which, name in _NEXT_WEEKDAY.findall(text):
        weekday = _WEEKDAYS.index(name.lower())
        if which.lower() == "this":  # the one of the current week
            found.append(_day_at(_monday(today) + timedelta(days=weekday)))
        else:  # the first one after today
            found.append(_day_at(today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)))
    return found


def _zh_weekday(which: str, day: str, today: date) -> DateWindow:
    """上周二 (last week's Tuesday), 下周二 (next week's), 这周二, or 周二 (the latest)."""
    weekday = 6 if day in "日天" else _ZH_WEEKDAYS.index(day)
    week = {"上": -7, "下": 7, "这": 0, "本": 0}.get(which)
    if week is None:
        return _day_at(today - timedelta(days=(today.weekday() - weekday) % 7))
    return _day_at(_monday(today) + timedelta(days=week + weekday))


def _weekend(which: str | None, today: date) -> DateWindow:
    """The latest Saturday and Sunday up to today ("the weekend", 周末); "last weekend" the
    one before this week; "next weekend" the coming one."""
    saturday = _monday(today) + timedelta(days=5)
    word = (which or "").lower()
    if word == "next":
        saturday += timedelta(days=7 if today.weekday() >= 5 else 0)
    elif word == "last" or today.weekday() < 5:
        saturday -= timedelta(days=7)
    return DateWindow(saturday, saturday + timedelta(days=1))


def _phrase(text: str, phrase: str) -> bool:
    if not phrase.isascii():
        return phrase in text
    return re.search(rf"\b{re.escape(phrase)}\b", text) is not None


def _drop(text: str, phrases: Iterable[str]) -> str:
    for phrase in phrases:
        text = text.replace(phrase, " ")
    return text


def question_dates(query: str, today: date, order: DateOrder = "auto",
                   ) -> tuple[DateWindow, ...]:
    """The periods ``query`` names, relative ones read against ``today`` (the user's date);
    ``order``: how a slashed date is read (:mod:`openclaw_memory.language.dateforms`)."""
    found = _absolute(query, today, order)
    if not any(found):  # "last Friday, 23 January 2022": the named date is the period
        found = _relative(query, today)
    return tuple(dict.fromkeys(w for w in found if w is not None))


_DATE_PATTERNS = (*PATTERNS, _AGO, _LAST_WEEKDAY, _NEXT_WEEKDAY, _ZH_WEEKDAY, _WEEKEND)
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


def mentions_windows(text: str, windows: Sequence[DateWindow], order: DateOrder = "auto") -> bool:
    """Whether a note's text names a day of one of ``windows`` ("due on 10.01.2024")."""
    return bool(windows) and any(w.contains(day) for day in text_days(text, order)
                                 for w in windows)


def in_windows(path: str, windows: Sequence[DateWindow]) -> bool:
    """Whether ``path`` is a daily file of one of ``windows``."""
    day = file_date(path) if windows else None
    return day is not None and any(w.contains(day) for w in windows)
