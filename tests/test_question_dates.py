"""Dates in a question are matched against the dates of daily files: the periods a question
names are read (absolute and relative, English and Chinese), the daily files of those periods
become candidates with a bonus, and naming a date never makes an off-topic question relevant."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.language.dates import (
    DateWindow,
    file_date,
    in_windows,
    name_filter,
    question_dates,
)

TODAY = date(2026, 11, 24)  # a Tuesday


def _day(y: int, m: int, d: int, slack: int = 1) -> DateWindow:
    from datetime import timedelta

    exact = date(y, m, d)
    return DateWindow(exact - timedelta(slack), exact + timedelta(slack))


@pytest.mark.parametrize(("question", "windows"), [
    ("What movie did Joanna watch on 1 May, 2022?", (_day(2022, 5, 1),)),
    ("What did she recommend on February 7, 2022?", (_day(2022, 2, 7),)),
    ("the 2022-05-02 notes", (_day(2022, 5, 2),)),
    ("Where did Joanna travel to in July 2022?", (DateWindow(date(2022, 7, 1), date(2022, 7, 31)),)),
    ("What state did she visit in summer 2021?",
     (DateWindow(date(2021, 6, 1), date(2021, 8, 31)),)),
    ("Which outdoor spot did Joanna visit in May?", (DateWindow(month=5),)),
    ("What did we ship in 2023?", (DateWindow(date(2023, 1, 1), date(2023, 12, 31)),)),
    ("2022年5月1日我们做了什么", (_day(2022, 5, 1),)),
    ("2022年5月的计划", (DateWindow(date(2022, 5, 1), date(2022, 5, 31)),)),
    # a day named without a year: its latest occurrence up to today
    ("What happened on March 3rd?", (_day(2026, 3, 3),)),
    ("What happened on December 3rd?", (_day(2025, 12, 3),)),
])
def test_absolute_dates_are_read(question: str, windows: tuple[DateWindow, ...]) -> None:
    assert question_dates(question, TODAY) == windows


@pytest.mark.parametrize(("question", "start", "end"), [
    ("what did we decide yesterday?", date(2026, 11, 23), date(2026, 11, 23)),
    ("notes from the day before yesterday", date(2026, 11, 22), date(2026, 11, 22)),
    ("what did we decide last week?", date(2026, 11, 16), date(2026, 11, 22)),
    ("anything new this week?", date(2026, 11, 23), date(2026, 11, 24)),
    ("the plan from last month", date(2026, 10, 1), date(2026, 10, 31)),
    ("what we said 3 days ago", date(2026, 11, 20), date(2026, 11, 22)),
    ("the call last Friday", date(2026, 11, 20), date(2026, 11, 20)),
    ("上周的会议", date(2026, 11, 16), date(2026, 11, 22)),
    ("去年的目标", date(2025, 1, 1), date(2025, 12, 31)),
])
def test_relative_dates_are_read_against_the_users_today(question: str, start: date,
                                                         end: date) -> None:
    assert question_dates(question, TODAY) == (DateWindow(start, end),)


def test_a_named_date_wins_over_a_relative_one_in_the_same_question() -> None:
    assert question_dates("What did she finish last Friday, 23 January 2022?", TODAY) == (
        _day(2022, 1, 23),)


@pytest.mark.parametrize("question", [
    "How tall is Mount Everest?", "May I ask about the budget?", "Ticket BILL-482 status",
    "the 30 February 2022 notes",   # no such day
])
def test_questions_without_a_real_date_name_none(question: str) -> None:
    assert question_dates(question, TODAY) == ()


def test_daily_files_are_matched_by_the_date_in_their_name() -> None:
    may = (DateWindow(month=5),)
    assert file_date("memory/users/alice/2022-05-12.md") == date(2022, 5, 12)
    assert in_windows("memory/2022-05-12.md", may) and in_windows("memory/2023-05-01.md", may)
    assert not in_windows("memory/2022-06-01.md", may) and not in_windows("MEMORY.md", may)
    assert file_date("memory/2022-02-30.md") is None


def test_the_quick_name_filter_keeps_every_file_in_windows_and_drops_the_others() -> None:
    windows = (DateWindow(date(2022, 4, 30), date(2022, 5, 2)), DateWindow(month=12))
    test = name_filter(windows)
    kept = ["memory/2022-04-30.md", "memory/2022-05-02.md", "memory/users/a/2022-05-01.md",
            "memory/2019-12-31.md", "memory/2022-12-01.md"]
    dropped = ["memory/2022-04-29.md", "memory/2022-05-03.md", "memory/2023-05-01.md",
               "memory/2022-11-30.md", "MEMORY.md"]
    assert all(test(p) for p in kept) and not any(test(p) for p in dropped)
    # the filter agrees with in_windows on real dates; in_windows alone rejects 30 February
    assert all(in_windows(p, windows) for p in kept)
    assert not name_filter((DateWindow(month=5),))("memory/2022-06-05.md")


_PERIODS = [
    (DateWindow(date(2026, 3, 2), date(2026, 3, 3)),),
    (DateWindow(month=4),),
    (DateWindow(date(2026, 1, 1), date(2026, 1, 31)), DateWindow(month=3)),
    (DateWindow(date(2030, 1, 1), date(2030, 12, 31)),),
]


@pytest.mark.parametrize("windows", _PERIODS)
def test_both_backends_list_the_daily_files_of_the_periods_asked_about(
        pg_dsn: str, diary: Path, tmp_path: Path, windows: tuple[DateWindow, ...]) -> None:
    from openclaw_memory.postgres import PostgresMemory

    files = sorted(p.relative_to(diary).as_posix() for p in diary.rglob("*.md"))
    expected = sorted(p for p in files if in_windows(p, windows))
    with MemoryIndex.open(diary, index_path=tmp_path / "i.sqlite",
                          embedding={"provider": "none"}) as memory:
        memory.sync()
        lite = memory.store.daily_paths(windows)
        assert sorted(p for p in lite if in_windows(p, windows)) == expected
        assert sorted(memory.store.daily_paths(windows, "memory/2026-01")) == [
            p for p in expected if p.startswith("memory/2026-01")]
    with PostgresMemory.open(pg_dsn, workspace="diary-days", timezone="UTC",
                             embedding={"provider": "none"}) as memory:
        memory.publish(diary)
        found = memory.index.daily_paths(windows)
        assert sorted(p for p in found if in_windows(p, windows)) == expected
        assert len(found) == len(expected)  # the index's range read returns nothing else
        assert sorted(memory.index.daily_paths(windows, "memory/2026-01")) == [
            p for p in expected if p.startswith("memory/2026-01")]


@pytest.fixture()
def diary(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    days = {
        "2026-03-02": "Reviewed the quarterly roadmap with the platform team.",
        "2026-03-03": "Sam brought homemade lemon cake for everyone in the office.",
        "2026-03-04": "Migrated the billing database to the new cluster.",
        "2026-04-10": "Hiked the coastal trail and saw dolphins near the cliffs.",
    }
    for day, note in days.items():
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n- {note}\n", encoding="utf-8")
    for n in range(30):  # enough other notes that the dated one is not found by chance
        (ws / "memory" / f"2026-01-{n % 28 + 1:02d}-topic{n}.md").write_text(
            f"# Topic {n}\n\n- Standup {n}: the team discussed sprint {n} tickets.\n",
            encoding="utf-8")
    return ws


def test_the_note_of_the_day_asked_about_is_found_and_explained(diary: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(diary, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        hits = memory.search("What happened in the office on 3 March 2026?").results
        assert hits[0].path == "memory/2026-03-03.md"
        assert hits[0].explanation.date_match
        assert not [h for h in hits if h.explanation.date_match and "03-03" not in h.path
                    and "03-02" not in h.path and "03-04" not in h.path]


def test_relative_dates_use_the_searchs_now(diary: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(diary, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        now = datetime(2026, 4, 11, 9, 0, tzinfo=UTC)
        hits = memory.search("what did I see yesterday?", now=now).results
        assert hits[0].path == "memory/2026-04-10.md" and hits[0].explanation.date_match


def test_naming_a_date_never_makes_an_off_topic_question_relevant(diary: Path,
                                                                  tmp_path: Path) -> None:
    with MemoryIndex.open(diary, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        best = memory.search("Who won the chess world championship in March 2026?",
                             min_score=0.0).results[0]
        assert best.explanation.date_match and best.explanation.fused >= 0.15  # over with it
        assert best.score < 0.15
        response = memory.search("Who won the chess world championship in March 2026?")
        assert response.results == ()


def test_date_weight_zero_turns_dates_off(diary: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(diary, index_path=tmp_path / "i.sqlite",
                          search={"date_weight": 0.0}) as memory:
        memory.sync()
        hits = memory.search("What happened in the office on 3 March 2026?").results
        assert not any(h.explanation.date_match for h in hits)


@pytest.mark.parametrize(("question", "period_only"), [
    ("what did I see yesterday?", True), ("What happened on 3 March 2026?", True),
    ("What did we decide last week?", True), ("昨天我们做了什么", True),
    ("Who won the chess world championship in March 2026?", False),
    ("What did Joanna do in May 2022?", False), ("上周的会议", False),
])
def test_a_question_about_a_period_and_nothing_else_is_told_apart(question: str,
                                                                   period_only: bool) -> None:
    from openclaw_memory.language.dates import about_a_period

    assert about_a_period(question) is period_only


def test_a_question_about_a_period_alone_is_answered_by_its_notes(diary: Path,
                                                                   tmp_path: Path) -> None:
    with MemoryIndex.open(diary, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        now = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)
        hits = memory.search("what happened the day before yesterday?", now=now).results
        assert hits and hits[0].path == "memory/2026-03-03.md"


def test_the_postgres_backend_finds_the_notes_of_the_date_asked_about(pg_dsn: str,
                                                                      diary: Path) -> None:
    from openclaw_memory.postgres import PostgresMemory

    with PostgresMemory.open(pg_dsn, workspace="diary", timezone="UTC") as memory:
        memory.publish(diary)
        hits = memory.search("What happened in the office on 3 March 2026?").results
        assert hits[0].path == "memory/2026-03-03.md" and hits[0].explanation.date_match
