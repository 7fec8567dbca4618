"""A question about what came before a value ("Where did Ada live before Berlin?") is searched
without that value: its own lines would fill the hits and hide the earlier one."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.search.before import split_anchor


@pytest.mark.parametrize(("question", "searched"), [
    ("Where did Ada Park live before Berlin?", "Where did Ada Park live?"),
    ("What car did Dev Patel drive before a Toyota?", "What car did Dev Patel drive?"),
    ("王芳搬到西安之前住在哪里？", "王芳住在哪里？"),
    ("北极星用Jenkins之前用什么做持续集成？", "北极星用什么做持续集成？"),
    ("How did Ada Park get to work before going by bus?", "How did Ada Park get to work?"),
    ("Where did Ada live before moving to Berlin?", "Where did Ada live?"),
    ("王芳去西安以前住在哪个城市？", "王芳住在哪个城市？"),
    ("张学友搬到香港之前住在哪里？", "张学友住在哪里？"),  # 学 inside the name is no verb
])
def test_the_later_value_is_left_out_of_the_search(question: str, searched: str) -> None:
    split = split_anchor(question)
    assert split is not None and split.asked == searched


@pytest.mark.parametrize("question", [
    "What did Andrew and his GF do on the Monday before July 24, 2023?",  # a date: a period
    "Was James feeling lonely before meeting Samantha?",  # an event
    "What are some problems that Andrew faces before he adopted Toby?",
    "Where does Ada Park live now?", "王芳现在住在哪里？",
    "What did Jolene do before winning the chess tournament?",  # a verb of an event
    "我昨天在公司加班到很晚，在回家之前还去超市买了东西，真的好累，不过明天可以休息了。",  # no question
])
def test_dates_events_and_other_questions_are_searched_as_asked(question: str) -> None:
    assert split_anchor(question) is None


def test_the_later_values_lines_do_not_crowd_out_the_earlier_one(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    others = ["Bruno Silva", "Chloe Martin", "Dev Patel", "Elena Rossi", "Farid Khan",
              "Grace Liu", "Hugo Weber", "Iris Novak", "Jonas Berg"]
    facts = [f"- {who} works at Acme.\n- {who} drives a Honda.\n" for who in others]
    (ws / "MEMORY.md").write_text("# Facts\n\n" + "".join(facts) + "- Ada Park lives in Paris.\n",
                                  encoding="utf-8")
    for day, who in enumerate(others, 1):
        (ws / "memory" / f"2025-02-{day:02d}.md").write_text(
            f"- {who} moved to Berlin this month.\n- {who} likes Berlin.\n", encoding="utf-8")
    (ws / "memory" / "2025-03-01.md").write_text("- Ada Park moved to Berlin.\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        asked = memory.search("Where did Ada Park live before Berlin?").results
    assert "Ada Park lives in Paris" in asked[0].snippet


@pytest.mark.parametrize(("question", "anchor"), [
    ("Where did Ada Park live before Berlin?", "Berlin"),
    ("What car did Dev Patel drive before a Toyota?", "Toyota"),
    ("How did Ada Park get to work before going by bus?", "bus"),
    ("What CI did Kestrel use before switching over to GitHub Actions?", "GitHub Actions"),
    ("王芳搬到西安之前住在哪里？", "西安"),
])
def test_the_anchor_is_the_later_value(question: str, anchor: str) -> None:
    split = split_anchor(question)
    assert split is not None and split.anchor == anchor
