"""The user as a subject: notes name their user once ("User: Priya", "用户：周杰（小周）") and
then write about them without a name; a question about the user reads all those lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.search.user_subject import (
    MOST_LINES,
    about_user,
    says_something,
    user_lines,
    user_names,
)
from openclaw_memory.types import HitExplanation, SearchHit


@pytest.mark.parametrize(("line", "names"), [
    ("- User: Priya. Architect, works from a studio in Farringdon.", {"priya"}),
    ("## User (Priya)", {"priya"}),
    ("- The user is Tomas, a nurse.", {"tomas"}),
    ("- User: Ana Lima (安娜), product designer.", {"ana", "lima", "安娜"}),
    ("## Context (user: Ola Berg, SRE at Kettle)", {"ola", "berg"}),
    ("- 用户：刘洋（小刘），在一家银行做风控。", {"刘洋", "小刘"}),
    ("- 用户（晓雯）是设计组组长。", {"晓雯"}),
])
def test_the_users_names_are_read_from_a_label_followed_by_the_name(
        line: str, names: set[str]) -> None:
    assert user_names([line]) == names


@pytest.mark.parametrize("line", [
    "- Ivo Novak (the user's husband) cycles to work.",  # someone else, named by the user
    "- users: 40 on the free plan",  # a count, not a person
    "- Priya likes jazz.",
])
def test_lines_that_do_not_name_the_user_give_no_name(line: str) -> None:
    assert user_names([line]) == frozenset()


def test_a_question_naming_the_user_or_asking_in_the_first_person_is_about_the_user() -> None:
    users = frozenset({"priya"})
    assert about_user("Where does Priya swim now?", {"priya"}, users)
    assert about_user("Where do I swim these days?", set(), users)
    assert about_user("我们组的周会现在是什么时候？", {"我们组"}, frozenset({"晓雯"}))
    # Asked in the first person about someone else, or with no user named by the notes: no.
    assert not about_user("What should I order for Sam?", {"sam"}, users)
    assert not about_user("Where does Ivo swim?", {"ivo"}, users)
    assert not about_user("Where do I swim?", set(), frozenset())


def test_date_lines_and_headings_state_nothing() -> None:
    for line in ("Tue 24 Feb 2026", "2026-04-14", "# 18 April", "## People", "3月2日"):
        assert not says_something(line), line
    for line in ("- Speed test 520/510, no drops.", "- 中午吃了猪脚饭。", "Cancelled the gym."):
        assert says_something(line), line


def test_the_users_lines_are_the_hits_statements_bounded() -> None:
    cited = [["Mon 2 Mar 2026", "- Cancelled the gym."], ["## People", "- Ivo likes tea."],
             [f"- Note {i} about the week." for i in range(2 * MOST_LINES)]]
    lines = user_lines(cited)
    assert lines[:2] == [(0, "- Cancelled the gym."), (1, "- Ivo likes tea.")]
    assert len(lines) == MOST_LINES


def _workspace(root: Path) -> Path:
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(
        "# Memory\n\n## User (Priya)\n- Swims at the Oasis pool on Tuesday evenings.\n"
        "- Works as an architect at a small studio in Farringdon.\n\n## People\n"
        "- Ivo swims at the Oasis pool too.\n", encoding="utf-8")
    days = {
        "2026-03-02": "Mon 2 Mar 2026\n- Pool closed for repairs, skipped the swim.\n"
                      "- Studio pitch for the library job went well.\n",
        "2026-04-13": "Mon 13 Apr 2026\n- Cancelled the Oasis membership. Swimming at the lido "
                      "on Parliament Hill instead, bought a ten-swim card.\n- Ivo sulking.\n",
        "2026-05-20": "Wed 20 May 2026\n- Dentist at 9.\n",
    }
    for day, text in days.items():
        (root / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    return root


def test_the_users_unnamed_note_of_a_change_answers_a_question_naming_the_user(
        tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("Where does Priya swim now?").results
        assert hits[0].path == "memory/2026-04-13.md"
        assert "lido" in hits[0].snippet and hits[0].as_of == "2026-04-13"
        # The old fact is still shown, marked older.
        curated = next(h for h in hits if h.path == "MEMORY.md")
        assert "Oasis" in curated.snippet and curated.superseded_by == hits[0].citation


def test_without_a_user_named_in_the_notes_unnamed_lines_are_nobodys(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws")
    text = (ws / "MEMORY.md").read_text(encoding="utf-8").replace("## User (Priya)", "## Priya")
    (ws / "MEMORY.md").write_text(text, encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("Where does Priya swim now?").results
        assert all(h.superseded_by is None for h in hits if h.path == "MEMORY.md")


def test_the_users_later_unrelated_notes_do_not_take_the_answers_place(tmp_path: Path) -> None:
    # Every line of the hits is the user's; a newer one joining the answer's group only on
    # average ("Lunch was noodles") must not come first: it must be close to the answer itself.
    ws = _workspace(tmp_path / "ws")
    (ws / "memory" / "2026-05-21.md").write_text(
        "Thu 21 May 2026\n- Lunch was noodles at the market.\n- Watered the plants.\n",
        encoding="utf-8")
    (ws / "memory" / "2026-05-22.md").write_text(
        "Fri 22 May 2026\n- Long day, home late, too tired to cook.\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("Where does Priya swim now?").results
        assert hits[0].path == "memory/2026-04-13.md"


def test_a_change_worded_unlike_the_question_comes_first_from_under_the_relevance_gate(
        tmp_path: Path) -> None:
    # "Cancelled ... climbing instead" shares no word with "work out" and scores under the
    # gate; looking past the first hits reaches it, and as the user's newest line about the
    # gym it answers, first and dated. (A later visit to the same gym only corroborates it.)
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n## User (Noor)\n- Gym: FitHub Angel, usually 7am before work.\n"
        "- Works as a pharmacist in Islington.\n", encoding="utf-8")
    days = {"2026-01-13": "Tue 13 Jan 2026\n- Legs day at FitHub.\n",
            "2026-03-10": "Tue 10 Mar 2026\n- Cancelled the FitHub membership. Climbing at "
                          "The Castle wall twice a week instead.\n",
            "2026-04-02": "Thu 2 Apr 2026\n- Long day at the pharmacy, home at 9.\n"}
    for day, text in days.items():
        (ws / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("Where does Noor work out now?").results
    assert hits[0].path == "memory/2026-03-10.md" and hits[0].as_of == "2026-03-10"
    assert hits[0].score < 0.15  # (under the gate: it shows because it answers)


def test_hits_from_under_the_gate_show_only_when_moved_up() -> None:
    from openclaw_memory.search.pipeline import _moved_or_passed

    def hit(path: str) -> SearchHit:
        return SearchHit(path, 1, 2, 0.5, "x", "memory", None, path, HitExplanation(
            None, None, None, None, 0.5))

    passed, moved, left = hit("MEMORY.md"), hit("memory/2026-03-10.md"), hit("memory/2026-01-01.md")
    under = {"memory/2026-03-10.md", "memory/2026-01-01.md"}  # (their chunk ids)
    # Moved above a hit that passed: shown. Left below every one: never fills a place.
    assert _moved_or_passed((moved, passed, left), under) == (moved, passed)
    assert _moved_or_passed((passed, moved, left), under) == (passed,)
    assert _moved_or_passed((passed, left), set()) == (passed, left)


def test_a_line_about_another_group_is_not_the_users_own_note() -> None:
    # The hand-written knowledge-update dev set's zh19: another department's meeting, newer,
    # had answered "我们组的周会现在是什么时候？".
    cited = [["- 市场部把他们的周会定在周一上午十点了。", "- 第一次周三开周会，效率高了不少。"],
             ["- Marketing moved their weekly to Monday.", "- Our weekly is on Wednesdays now."]]
    assert [line for _, line in user_lines(cited)] == ["- 第一次周三开周会，效率高了不少。",
                                                       "- Our weekly is on Wednesdays now."]
