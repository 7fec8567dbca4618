"""Dates in every common written form, in questions and in note text: numeric (dotted,
slashed day- or month-first, year first, ISO, ISO weeks), worded, Chinese and Japanese, and
relative ones (weekends, next Tuesday, 上周二); any form of a day reads back as that day."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_memory import MemoryIndex
from openclaw_memory.language.dateforms import locale_order, spell_dates, text_days
from openclaw_memory.language.dates import DateWindow, question_dates

TODAY = date(2024, 3, 13)  # a Wednesday
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def forms(day: date) -> list[tuple[str, str]]:
    """(text, date order to read it with) for every form the parser reads."""
    d, m, y, name = day.day, day.month, day.year, MONTHS[day.month - 1]
    return [(day.isoformat(), "auto"), (f"{d:02d}.{m:02d}.{y}", "auto"), (f"{d}.{m}.{y}", "auto"),
            (f"{d:02d}/{m:02d}/{y}", "dmy"), (f"{m:02d}/{d:02d}/{y}", "mdy"),
            (f"{y}/{m:02d}/{d:02d}", "auto"), (f"{y}.{m}.{d}", "auto"),
            (f"{d} {name} {y}", "auto"), (f"the {d}th of {name} {y}", "auto"),
            (f"{name} {d}, {y}", "auto"), (f"{name[:3]} {d} {y}", "auto"),
            (f"{y}年{m}月{d}日", "auto"), (f"{y}年{m}月{d}号", "auto")]


def _centre(window: DateWindow) -> date | None:
    if window.start is None or window.end is None:
        return None
    return window.start + (window.end - window.start) / 2


@settings(max_examples=150, deadline=None)
@given(st.dates(min_value=date(1950, 1, 1), max_value=date(2099, 12, 31)))
def test_any_form_of_a_day_reads_back_as_that_day(day: date) -> None:
    for text, order in forms(day):
        windows = question_dates(f"What happened on {text}?", TODAY, order)  # type: ignore[arg-type]
        assert day in {_centre(w) for w in windows}, (text, windows)
        assert day in text_days(f"The release is due {text}.", order), text  # type: ignore[arg-type]
        spelled = spell_dates(text, order)  # type: ignore[arg-type]
        assert day in {_centre(w) for w in question_dates(spelled, TODAY)}, (text, spelled)


def test_a_slashed_date_valid_both_ways_is_read_both_ways_unless_the_order_is_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    both = question_dates("notes of 10/01/2024", TODAY)
    assert [_centre(w) for w in both] == [date(2024, 1, 10), date(2024, 10, 1)]
    assert [_centre(w) for w in question_dates("notes of 10/01/2024", TODAY, "mdy")] == [
        date(2024, 10, 1)]
    assert [_centre(w) for w in question_dates("notes of 25/01/2024", TODAY, "mdy")] == [
        date(2024, 1, 25)]  # valid one way only: read that way whatever the order
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    assert locale_order() == "mdy"
    assert _centre(question_dates("notes of 10/01/2024", TODAY)[0]) == date(2024, 10, 1)
    assert spell_dates("due 10.01.2024") == "due 10 January 2024"  # dotted: always day first


@pytest.mark.parametrize(("question", "first", "last"), [
    ("What did we do at the weekend?", date(2024, 3, 9), date(2024, 3, 10)),
    ("last weekend", date(2024, 3, 9), date(2024, 3, 10)),
    ("next weekend", date(2024, 3, 16), date(2024, 3, 17)),
    ("What is planned for next Tuesday?", date(2024, 3, 19), date(2024, 3, 19)),
    ("this Friday", date(2024, 3, 15), date(2024, 3, 15)),
    ("tomorrow", date(2024, 3, 14), date(2024, 3, 14)),
    ("next week", date(2024, 3, 18), date(2024, 3, 24)),
    ("next month", date(2024, 4, 1), date(2024, 4, 30)),
    ("2024-W02", date(2024, 1, 8), date(2024, 1, 14)),
    ("week 2 of 2024", date(2024, 1, 8), date(2024, 1, 14)),
    ("上周二我们做了什么", date(2024, 3, 5), date(2024, 3, 5)),
    ("上周末", date(2024, 3, 9), date(2024, 3, 10)),
    ("下周二", date(2024, 3, 19), date(2024, 3, 19)),
    ("三月十二日", date(2024, 3, 11), date(2024, 3, 13)),
    ("先週の会議", date(2024, 3, 4), date(2024, 3, 10)),
    ("来週", date(2024, 3, 18), date(2024, 3, 24)),
])
def test_relative_and_calendar_forms(question: str, first: date, last: date) -> None:
    assert question_dates(question, TODAY) == (DateWindow(first, last),)


@pytest.fixture()
def memory(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "kestrel.md").write_text("# Kestrel\n\nThe release is due on 10.01.2024.\n")
    (ws / "memory" / "heron.md").write_text("# Heron\n\nThe release is due on 02.03.2024.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", timezone="UTC") as opened:
        opened.sync()
        yield opened


@pytest.mark.parametrize("asked", ["10 January 2024", "10.01.2024", "2024-01-10",
                                   "Jan 10, 2024", "2024年1月10日"])
def test_a_note_naming_the_day_asked_about_ranks_first_whatever_the_forms(
        memory: MemoryIndex, asked: str) -> None:
    top = memory.search(f"Which release is due on {asked}?").results[0]
    assert top.path == "memory/kestrel.md" and top.explanation.date_match


def test_days_in_note_text_are_read_without_relative_words() -> None:
    assert text_days("Met Ana yesterday; the deadline is 10.01.2024 (or 2024-02-01).") == {
        date(2024, 1, 10), date(2024, 2, 1)}
    assert text_days("in May, maybe on the 10th") == set()
    assert date(2024, 1, 10) - timedelta(days=1) not in text_days("10 January 2024")


def test_days_far_apart_in_a_long_note_are_all_read_around_their_years() -> None:
    # Only the text around each four-digit year is scanned: the longest forms reach 27
    # characters before it and 7 after, and a cut never splits a word.
    filler = "ref123x4 standup notes, nothing dated here. " * 40
    text = (f"{filler}On the 21st of September, 2024 the audit. {filler}"
            f"交付 2025年3月9日。{filler}iso week 2 of 2026, day 2026-W02-1 {filler} ticket 12345 and 2024x9")
    assert text_days(text) == {date(2024, 9, 21), date(2025, 3, 9),
                               date(2026, 1, 5)}
    assert text_days(filler) == set()
    assert text_days("xmay 10, 2024") == text_days("may 10, 2024") - {date(2024, 5, 10)}
