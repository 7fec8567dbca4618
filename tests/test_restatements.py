"""``memory_write`` does not pile up: a note that says what memory already says, in other
words, is answered with the line that says it (real local model); a changed fact, a new name
or number, is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex

OPTS: dict[str, Any] = {"timezone": "UTC"}


def _curated(tmp_path: Path, name: str, facts: list[str]) -> Any:
    """An index over a workspace whose MEMORY.md lists ``facts`` from line 3 on."""
    ws = tmp_path / name
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Facts\n\n" + "".join(f"- {f}\n" for f in facts),
                                  encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / f"{name}.sqlite", **OPTS) as opened:
        opened.sync()
        yield opened


@pytest.fixture()
def memory(tmp_path: Path) -> Any:
    yield from _curated(tmp_path, "ws", ["Ada Park now lives in Madrid.",
                                         "The Kestrel release is scheduled for 30 April."])


def test_a_restatement_is_answered_with_the_line_that_says_it(memory: MemoryIndex) -> None:
    result = memory.write("Ada Park's home is in Madrid.")
    assert result.reason == "duplicate" and not result.appended
    assert (result.path, result.start_line) == ("MEMORY.md", 3)


@pytest.mark.parametrize("note", ["Ada Park moved to Berlin.", "Kestrel now ships on 12 May.",
                                  "Bruno Silva lives in Madrid."])
def test_a_changed_fact_or_another_subject_is_written(memory: MemoryIndex, note: str) -> None:
    assert memory.write(note).appended


@pytest.fixture()
def habits(tmp_path: Path) -> Any:
    yield from _curated(tmp_path, "ws3", [
        "Elena Rossi is vegan.", "Elena Rossi's sport is judo.",
        "Dev Patel opened an account at Barclays and closed the old one.",
        "王芳的保险是在人寿保险买的。", "王芳的导师是老王。", "Dev Patel drinks espresso.",
        "刘洋平时在家乐福买菜。"])


@pytest.mark.parametrize("note", ["Elena Rossi became vegetarian.", "Elena Rossi took up tennis.",
                                  "王芳把保险换成了太平洋保险。", "老李成了王芳的新导师。"])
def test_a_note_saying_the_value_changed_is_written_though_its_names_are_all_known(
        habits: MemoryIndex, note: str) -> None:
    # No capitalised name or number differs: only the words the note brings tell the change.
    assert habits.write(note).appended, note


@pytest.mark.parametrize("note", ["Dev Patel has been on green tea lately.", "刘洋最近都去盒马买菜了。"])
def test_a_note_saying_a_state_is_recent_is_a_change_when_it_brings_words(
        habits: MemoryIndex, note: str) -> None:
    # "lately", "最近": the fact is new; the same person and frame alike by meaning are no copy.
    assert habits.write(note).appended, note


@pytest.mark.parametrize(("note", "line"), [("Dev Patel keeps savings at Barclays.", 5),
                                            ("王芳每年给人寿保险交保费。", 6)])
def test_a_restatement_in_quite_other_words_is_still_caught(
        habits: MemoryIndex, note: str, line: int) -> None:
    result = habits.write(note)
    assert result.reason == "duplicate" and result.start_line == line, note


def test_a_persons_names_and_the_values_name_all_held_need_less_likeness(tmp_path: Path) -> None:
    ws = tmp_path / "ws4"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Facts\n\n- Kira Sato started going to Otto for haircuts.\n"
                                  "- Kira Sato moved to Lisbon.\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "n.sqlite", **OPTS) as memory:
        memory.sync()
        # Cosine 0.55 with line 3: under the threshold, but Kira Sato and Otto are both there.
        said = memory.write("Kira Sato books Otto for a trim every month.")
        assert (said.reason, said.start_line) == ("duplicate", 3)
        # Another barber is another value, however alike the words.
        assert memory.write("Kira Sato books Nico for a trim every month.").appended


def test_a_restatement_of_one_line_in_a_long_curated_file_is_found(tmp_path: Path) -> None:
    # One line against a chunk of many scores below the relevance gate: the check must still
    # compare it (it searched with the gate, found nothing and wrote a copy).
    ws = tmp_path / "ws4"
    (ws / "memory").mkdir(parents=True)
    people = ["Ada Park", "Bruno Silva", "Chloe Martin", "Dev Patel", "Elena Rossi", "Farid Khan",
              "Grace Liu", "Hugo Weber", "Iris Novak", "Jonas Berg", "Kira Sato", "Leo Dubois"]
    places = ["the food bank", "the animal shelter", "the library", "the hospice"]
    barbers = ["Nico", "Otto", "Pia", "Quentin"]
    facts: list[str] = []
    for n, who in enumerate(people):
        facts += [f"- {who} started going to {barbers[n % 4]} for haircuts.\n",
                  f"- {who} ported the number to Vodafone.\n",
                  f"- {who} now spends Saturdays helping at {places[(n + 1) % 4]}.\n"]
    (ws / "MEMORY.md").write_text("# Facts\n\n" + "".join(facts), encoding="utf-8")
    note = "Dev Patel gives time to the food bank every week."
    with MemoryIndex.open(ws, index_path=tmp_path / "k.sqlite", **OPTS) as memory:
        memory.sync()
        assert not memory.search(note).results  # what the check used to see
        result = memory.write(note)
    assert result.reason == "duplicate" and result.start_line == 3 + facts.index(
        "- Dev Patel now spends Saturdays helping at the food bank.\n")


def test_the_check_can_be_turned_off(tmp_path: Path) -> None:
    ws = tmp_path / "ws2"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- Ada Park now lives in Madrid.\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "j.sqlite", write={"restatement_similarity": None},
                          **OPTS) as memory:
        memory.sync()
        assert memory.write("Ada Park's home is in Madrid.").appended


@pytest.fixture()
def frames(tmp_path: Path) -> Any:
    yield from _curated(tmp_path, "ws4", [
        "Ada Park is vegetarian.", "杨磊住在西安。", "王芳的导师是林老师。", "赵敏一直找阿杰理发。",
        "李强的家在杭州。", "Bruno Silva spends weekends hiking.", "We shipped Kestrel 3.2.",
        "张伟现在住在成都。", "Grace Liu often cycles to the office.",
        "For Osprey we decided to use REST for the API.", "陈静的工资卡在招商银行。"])


@pytest.mark.parametrize("note", ["Ada Park is keto.", "杨磊住在北京。", "王芳的导师是老李。",
                                  "赵敏一直找阿强理发。", "刘洋住在杭州。",
                                  "Bruno Silva is on the infra team.",
                                  "Osprey's API will use gRPC after all.", "陈静新开了工商银行的卡。"])
def test_a_new_fact_reading_like_a_line_is_written(frames: MemoryIndex, note: str) -> None:
    # No capital tells the value, and each reads like a line (0.66-0.9): the line's own words
    # with one span swapped; 刘洋 is not 李强 (a Chinese name has no capital to keep); a team
    # is not a weekend pastime (only the name is shared). A capital inside a word is a name
    # (gRPC); a new pair of characters is a new value (工商 beside 工资卡...招商).
    assert frames.write(note).appended, note


@pytest.mark.parametrize(("note", "line"), [("Ada Park eats vegetarian.", 3),
                                            ("Kestrel 3.2 is what runs in production.", 9),
                                            ("张伟的家在成都。", 10),
                                            ("Grace Liu frequently cycles to the office.", 11)])
def test_a_restatement_swapping_only_how_it_is_said_is_still_caught(
        frames: MemoryIndex, note: str, line: int) -> None:
    result = frames.write(note)
    assert result.reason == "duplicate" and result.start_line == line, (note, result)
