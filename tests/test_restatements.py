"""``memory_write`` never loses a note that says something: only the same statement (word for
word, case, punctuation, list marker and date stamp aside) is refused, with the line that says
it; any other note is written, and the lines alike in meaning come back with their citations
and dates so that a stale one can be corrected (real local model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex, sample_workspace
from openclaw_memory.search.restatements import same_statement

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


FACTS = ["Carlos is allergic to peanuts.", "Leo is allergic to peanuts.",
         "Mia is vegetarian (as of 2026-03-02)", "王芳住在上海。", "Ana takes her coffee without sugar.",
         "Tom prefers tea over coffee.", "The quarterly report is due on the 5th working day.",
         "Ada Park now lives in Madrid."]


@pytest.fixture()
def memory(tmp_path: Path) -> Any:
    yield from _curated(tmp_path, "ws", FACTS)


@pytest.mark.parametrize(("note", "line"), [("Carlos is allergic to peanuts.", 3),
                                            ("carlos is allergic to peanuts", 3),
                                            ("* Ada Park now lives in Madrid!", 10),
                                            ("Mia is vegetarian.", 5)])
def test_the_same_statement_is_answered_with_the_line_that_says_it(
        memory: MemoryIndex, note: str, line: int) -> None:
    result = memory.write(note)
    assert (result.reason, result.written, result.path, result.start_line) == (
        "duplicate", False, "MEMORY.md", line)
    assert result.existing == f"- {FACTS[line - 3]}"


@pytest.mark.parametrize("note", [
    "Carlos is not allergic to peanuts.", "Leo is also allergic to shellfish, not only peanuts.",
    "Mia is no longer vegetarian.", "王芳不再住在上海。", "Ana takes her coffee with sugar.",
    "Tom prefers coffee over tea.", "The quarterly report goes to the board.",
    "Ada Park's home is in Madrid."])
def test_a_note_that_is_not_the_same_statement_is_written(memory: MemoryIndex, note: str) -> None:
    # Negations, reversals, an added fact, another fact of the same thing, and a restatement
    # in other words: each was refused as a duplicate by the meaning check this replaces.
    result = memory.write(note)
    assert result.appended and result.reason == "appended", note
    assert note in (memory.workspace.root / result.path).read_text(encoding="utf-8")


@pytest.mark.parametrize(("note", "line"), [("Carlos is not allergic to peanuts.", 3),
                                            ("Ada Park's home is in Madrid.", 10),
                                            ("Mia is no longer vegetarian.", 5)])
def test_a_written_note_names_the_lines_it_relates_to_with_their_dates(
        memory: MemoryIndex, note: str, line: int) -> None:
    result = memory.write(note)
    assert result.appended
    named = {(r.path, r.line): r for r in result.related}
    assert ("MEMORY.md", line) in named, result.related
    related = named[("MEMORY.md", line)]
    assert related.citation == f"MEMORY.md#L{line}" and related.text == f"- {FACTS[line - 3]}"
    assert related.learned == ("2026-03-02" if line == 5 else None)
    assert related.as_dict()["citation"] == related.citation


def test_a_note_about_something_else_names_no_related_line(memory: MemoryIndex) -> None:
    assert memory.write("Booked the dentist for Tuesday at 9.").related == ()


def test_related_lines_can_be_turned_off(tmp_path: Path) -> None:
    ws = tmp_path / "off"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("- Ada Park now lives in Madrid.\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "off.sqlite", write={"restatement_similarity": None},
                          **OPTS) as memory:
        memory.sync()
        result = memory.write("Ada Park's home is in Madrid.")
        assert result.appended and result.related == ()
        assert memory.write("Ada Park now lives in Madrid.").reason == "duplicate"


def test_a_negated_note_from_a_group_never_blocks_the_users_own_later_note(tmp_path: Path) -> None:
    ws = tmp_path / "g"
    (ws / "memory").mkdir(parents=True)
    with MemoryIndex.open(ws, index_path=tmp_path / "g.sqlite", **OPTS) as memory:
        memory.sync()
        assert memory.write("Ada Park did not move to Munich.", chat_type="group").appended
        assert memory.write("Ada Park moved to Munich.").appended


def test_readmes_first_write_writes_on_the_sample(tmp_path: Path) -> None:
    workspace = sample_workspace(tmp_path / "agent-workspace")
    with MemoryIndex.open(workspace, index_path=tmp_path / "s.sqlite") as memory:
        memory.sync()
        result = memory.write("Decided to keep the nightly export at 02:00 UTC.")
        assert result.appended
        # The sample's 2026-11-20 log says it with the reason: named, not a reason to refuse.
        assert any(r.path == "memory/2026-11-20.md" and r.learned == "2026-11-20"
                   for r in result.related), result.related


@pytest.mark.parametrize(("note", "line", "same"), [
    ("- Ada lives in Paris (as of 2026-01-02)", "ada lives in paris.", True),
    ("1. 王芳住在上海。", "王芳住在上海", True),
    ("Ada does not live in Paris.", "Ada lives in Paris.", False),
    ("Ada lives in Paris.", "Ada lives in Paris now.", False),
    ("", "", False)])
def test_same_statement_compares_words_in_order(note: str, line: str, same: bool) -> None:
    assert same_statement(note, line) is same
