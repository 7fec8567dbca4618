"""A question about someone memory never mentions gets nothing relevant (or the low-confidence
band), and says whom it missed; questions about people in the notes keep their hits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.search.absent import asks_about, question_names

NOTES = ("# 2026-03-02\n\n- Nate watches basketball every weekend with his brother.\n"
         "- Nate's favourite team is the Celtics; he plays pickup games on Tuesdays.\n"
         "- Joanna started pottery classes and loves them.\n")


@pytest.mark.parametrize(("question", "names"), [
    ("What sports does Paola watch?", ["paola"]),
    ("Paola's favourite sport?", ["paola"]),
    ("What did Nate and Joanna do in May 2022?", ["nate", "joanna"]),
    ("When did I meet Tim at Google on Monday?", ["tim", "google"]),
    ("Is the TV in the living room?", []),
    ("What does she like?", []),
    ("王芳现在住在哪里？", ["王芳"]),
    ("张伟喜欢什么运动？", ["张伟"]),
    ("周末我们去哪里了？", []),  # 周 begins 周末 (weekend) as often as a name
    ("我们上次聊了什么？", []),
])
def test_the_names_of_a_question_are_its_capitalised_words_past_the_first(
        question: str, names: list[str]) -> None:
    assert question_names(question) == names


def test_statements_and_dialogues_are_not_read_for_names() -> None:
    assert asks_about("What sports does Paola watch?") and asks_about("Paola sports")
    assert not asks_about("I just want a dog like a Golden Retriever, it is so cute.")
    assert not asks_about("Bart: I saw Jupiter!\nAssistant: Wow, what did it look like?")


@pytest.fixture(params=["local", "none"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-03-02.md").write_text(NOTES)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", timezone="UTC",
                          embedding={"provider": request.param}) as opened:
        opened.sync()
        yield opened


def test_a_question_about_someone_never_mentioned_has_nothing_relevant_and_says_who(
        memory: MemoryIndex) -> None:
    response = memory.search("What sports does Paola watch?")
    assert response.results == ()
    assert any("paola appears nowhere in memory" in note for note in response.notes)
    known = memory.search("What sports does Nate watch?")
    assert known.results and "basketball" in known.results[0].snippet
    assert not any("nowhere in memory" in note for note in known.notes)


def test_one_name_in_the_notes_is_enough_and_the_check_can_be_turned_off(
        memory: MemoryIndex, tmp_path: Path) -> None:
    assert memory.search("Does Nate watch basketball with Paola?").results
    with MemoryIndex.open(memory.settings.workspace, index_path=tmp_path / "off.sqlite",
                          timezone="UTC", embedding={"provider": "none"},
                          search={"absent_name_check": False}) as off:
        off.sync()
        assert off.search("What sports does Paola watch?").results


def test_a_chinese_question_about_someone_absent_gets_nothing_relevant_even_beside_english_notes(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    # English notes beside the Chinese ones: the question's words translate, and still a
    # Chinese name is looked for as written (its English form would be its pinyin).
    (ws / "MEMORY.md").write_text("- 王芳住在上海，每周末打羽毛球。\n- Ada Park lives in Lisbon "
                                  "and likes sports, badminton most.\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        absent = memory.search("张伟喜欢什么运动？")
        present = memory.search("王芳喜欢什么运动？")
    assert absent.results == ()
    assert any("张伟 appears nowhere in memory" in note for note in absent.notes)
    assert present.results and present.results[0].path == "MEMORY.md"


def test_a_chinese_lead_name_absent_needs_a_stronger_match_than_an_english_name(
        tmp_path: Path) -> None:
    # Everyone's manager is noted: the rest of the question matches those notes about as well
    # whether or not the person asked about is among them.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- 杨磊的上级是老王。\n- 高飞的上级是赵总。\n- 何静的上级是陈经理。\n",
                                  encoding="utf-8")
    (ws / "memory" / "2026-03-02.md").write_text(
        "- 杨磊的新主管是小李。\n- 何静换了领导，现在归老王管。\n- 今天一整天都在下雨。\n", encoding="utf-8")
    question = "陈默目前的上级是谁？"
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        absent = memory.search(question)
        scored = memory.search(question, min_score=0.0).results
        present = memory.search("杨磊目前的上级是谁？")
    top = max(hit.score for hit in scored)
    settings = memory.settings.search
    assert settings.absent_name_gate <= top < settings.absent_chinese_name_gate, top
    assert absent.results == ()
    assert any("陈默 appears nowhere in memory" in note for note in absent.notes)
    assert present.results and "杨磊" in present.results[0].snippet
