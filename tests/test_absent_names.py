"""A question about someone memory never mentions gets nothing relevant (or the low-confidence
band), and says whom it missed; questions about people in the notes keep their hits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.search.absent import asks_about, question_names, rare_words

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
        lowered = memory.search(question, min_score=0.0).results
        present = memory.search("杨磊目前的上级是谁？")
    with MemoryIndex.open(ws, index_path=tmp_path / "off.sqlite",
                          search={"absent_name_check": False}) as unchecked:
        scored = unchecked.search(question, min_score=0.0).results
    top = max(hit.score for hit in scored)
    # Absence lowers every score: reaching the Chinese name's gate is reaching the relevance gate.
    assert max(hit.score for hit in lowered) == pytest.approx(top * 0.15 / 0.45)
    settings = memory.settings.search
    assert settings.absent_name_gate <= top < settings.absent_chinese_name_gate, top
    assert absent.results == ()
    assert any("陈默 appears nowhere in memory" in note for note in absent.notes)
    assert present.results and "杨磊" in present.results[0].snippet


@pytest.mark.parametrize(("question", "rare"), [
    ("Who discovered penicillin?", ["penicillin"]),
    ("How does photosynthesis convert sunlight into energy?", ["photosynthesis"]),
    ("What is the tallest building in the world?", []),  # every word common
    ("What sports does Nate watch?", []),  # names someone: the name check reads it
    ("I made a little pinwheel!", []),  # a statement, not a question
    ("penicillin", []),  # a keyword query may word a note's topic otherwise
])
def test_the_rare_words_of_a_question_naming_nobody_are_its_uncommon_lower_case_words(
        question: str, rare: list[str]) -> None:
    assert rare_words(question) == rare


def test_a_title_in_book_title_marks_is_a_name() -> None:
    assert question_names("《战争与和平》的作者是谁？") == ["《战争与和平》"]
    assert question_names("王芳读过《活着》吗？") == ["《活着》", "王芳"]


def test_a_question_whose_rare_word_memory_never_holds_needs_a_stronger_match(
        tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2024-06-06.md").write_text(
        "- Bart discovered a new bacteria culture in the school lab.\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        off = memory.search("Who discovered penicillin?")
        known = memory.search("Who discovered the bacteria culture?")
    with MemoryIndex.open(ws, index_path=tmp_path / "off.sqlite",
                          search={"absent_name_check": False}) as unchecked:
        unchecked_off = unchecked.search("Who discovered penicillin?")
    # Without the check the shared "discovered" is enough for a hit; with it, nothing.
    assert unchecked_off.results
    assert off.results == ()
    assert any("penicillin appears nowhere in memory" in note for note in off.notes)
    assert known.results and "bacteria" in known.results[0].snippet


def test_an_absent_title_gets_nothing_and_a_title_held_in_translation_is_not_absent(
        tmp_path: Path) -> None:
    zh, en = tmp_path / "zh", tmp_path / "en"
    for ws, note in ((zh, "- Bart很开心地与朋友一起读他最喜欢的冒险小说《鲁滨逊漂流记》。\n"),
                     (en, "- Joanna finished reading War and Peace and loved the battle scenes.\n")):
        (ws / "memory").mkdir(parents=True)
        (ws / "memory" / "2023-10-10.md").write_text(note, encoding="utf-8")
    with MemoryIndex.open(zh, index_path=tmp_path / "zh.sqlite") as memory:
        absent = memory.search("《战争与和平》的作者是谁？")
        held = memory.search("《鲁滨逊漂流记》讲的是什么？")
    assert absent.results == ()
    assert any("《战争与和平》 appears nowhere in memory" in note for note in absent.notes)
    assert held.results
    with MemoryIndex.open(en, index_path=tmp_path / "en.sqlite") as memory:
        translated = memory.search("《战争与和平》讲的是什么？")
    assert not any("nowhere in memory" in note for note in translated.notes)
