"""A question about what came before a value puts the value just before it first: the anchor's
line tells which of the subject's lines are about the attribute asked, and its date which of
them came before; a curated line no hit cites becomes a hit of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from search_hits import cited_hit, curated_lines, default_embed

from openclaw_memory import MemoryIndex
from openclaw_memory.search.earlier_value import holds_value
from openclaw_memory.search.question import ask
from openclaw_memory.search.recency import newer_first

_OTHERS = ["Bruno Silva", "Chloe Martin", "Dev Patel", "Elena Rossi", "Farid Khan"]


@pytest.fixture(scope="module")
def embed() -> Any:
    return default_embed()


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    facts = "".join(f"- {who} rents a flat in Lyon.\n- {who} gets around in a Fiat.\n"
                    f"- {who}'s sport is rowing.\n- {who} studies law.\n" for who in _OTHERS)
    (ws / "MEMORY.md").write_text(
        "# Facts\n\n" + facts + "- Ada Park rents a flat in Tallinn.\n"
        "- Ada Park gets around in a Mazda.\n- Ada Park's sport is tennis.\n"
        "- Ada Park studies medicine.\n", encoding="utf-8")
    days = {
        "2025-02-03": "- Ada Park took up judo.\n- Bruno Silva took up cycling.\n",
        "2025-02-20": "- Ada Park signed a lease in Perth.\n- Read an article about birds.\n",
        "2025-03-11": "- Ada Park picked up a Subaru from the dealer.\n",
        "2025-04-02": "- Ada Park transferred to the law program.\n",
        "2025-05-14": "- Ada Park gave up the old sport for cycling.\n- Chloe Martin trains for cycling.\n",
        "2025-06-01": "- Ada Park trains for cycling.\n- Dev Patel took up judo.\n",
    }
    for day, text in days.items():
        (ws / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    return ws


def test_the_value_just_before_the_anchor_comes_first(tmp_path: Path) -> None:
    with MemoryIndex.open(_workspace(tmp_path), index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("What sport did Ada Park do before cycling?").results
    assert "Ada Park took up judo" in hits[0].snippet
    assert hits[0].as_of == "2025-02-03"


def test_a_curated_value_no_passage_cites_becomes_a_hit_citing_its_line(embed: Any) -> None:
    hits = [cited_hit("memory/2025-03-01.md", "- Ada Park took up judo.", 0.5),
            cited_hit("MEMORY.md", "- Ada Park rents a flat in Tallinn.", 0.4),
            cited_hit("memory/2025-02-01.md", "- Ada Park signed a lease in Perth.", 0.3)]
    lines = curated_lines("- Ada Park rents a flat in Tallinn.", *(["- Filler."] * 38),
                          "- Ada Park's sport is tennis.")
    ranked = newer_first(hits, ask("What sport did Ada Park do?", anchor="judo"), embed,
                         curated_text=lambda: lines)
    assert ranked[0].citation == "MEMORY.md#L40"
    assert ranked[0].snippet == "- Ada Park's sport is tennis.\n\nSource: MEMORY.md#L40"
    assert ranked[0].score == hits[1].score  # scored as its file's passage
    assert [h.citation for h in ranked[1:]] == [h.citation for h in hits]


def test_the_anchor_tells_the_attribute_the_question_words_do_not(embed: Any) -> None:
    # "reside" is far from "signed a lease": the anchor's line (Perth) groups the homes.
    lines = [("memory/2025-04-09.md", "- Dev Patel signed a lease in Perth.", 0.5),
             ("memory/2025-03-17.md", "- Dev Patel traded in the old car for a Kia.", 0.49),
             ("memory/2025-02-09.md", "- Dev Patel enrolled in law.", 0.48),
             ("memory/2025-02-01.md", "- Dev Patel said goodbye to the old flat and is living in "
                                      "Tallinn.", 0.3)]
    hits = [cited_hit(*line) for line in lines]
    ranked = newer_first(hits, ask("In which town did Dev Patel reside?", anchor="Perth"), embed)
    assert ranked[0].path == "memory/2025-02-01.md"
    assert [h.path for h in ranked[1:]] == [path for path, _, _ in lines[:3]]


def test_a_chinese_question_finds_the_earlier_value(embed: Any) -> None:
    hits = [cited_hit("memory/2025-05-01.md", "- 王芳搬到了西安。", 0.5),
            cited_hit("memory/2025-04-01.md", "- 王芳买了一辆比亚迪。", 0.45),
            cited_hit("memory/2025-02-01.md", "- 王芳住在成都。", 0.4)]
    ranked = newer_first(hits, ask("王芳住在哪里？", anchor="西安"), embed)
    assert ranked[0].path == "memory/2025-02-01.md"


def test_nothing_moves_without_a_line_holding_the_anchor_or_an_older_one(embed: Any) -> None:
    hits = [cited_hit("memory/2025-03-01.md", "- Ada Park took up judo.", 0.5),
            cited_hit("memory/2025-02-01.md", "- Ada Park bought a Mazda.", 0.4)]
    question = "What sport did Ada Park do?"
    assert [h.path for h in newer_first(hits, ask(question, anchor="cycling"), embed)] == [
        "memory/2025-03-01.md", "memory/2025-02-01.md"]
    # The anchor is the oldest value the notes hold: nothing came before it.
    older = [cited_hit("memory/2025-01-01.md", "- Ada Park bought a Mazda.", 0.5),
             cited_hit("memory/2025-03-01.md", "- Ada Park took up judo.", 0.4)]
    assert [h.path for h in newer_first(older, ask(question, anchor="judo"), embed)] == [
        "memory/2025-01-01.md", "memory/2025-03-01.md"]


def test_an_undated_curated_line_counts_as_the_oldest(embed: Any) -> None:
    hits = [cited_hit("memory/2025-05-01.md", "- Ada Park moved to Berlin.", 0.5),
            cited_hit("memory/2025-04-01.md", "- Ada Park bought a Honda.", 0.45),
            cited_hit("MEMORY.md", "- Ada Park lives in Paris.", 0.4)]
    ranked = newer_first(hits, ask("Where did Ada Park live?", anchor="Berlin"), embed,
                         curated_text=lambda: curated_lines("- Ada Park lives in Paris."))
    assert ranked[0].path == "MEMORY.md"


@pytest.mark.parametrize(("line", "anchor", "held"), [
    ("- Ada Park moved to Berlin.", "Berlin", True),
    ("- Ada Park likes Berliner Weisse.", "Berlin", False),  # a word, not part of one
    ("- Kestrel's CI runs on GitHub Actions.", "GitHub Actions", True),
    ("- 王芳搬到了西安。", "西安", True),
    ("- 王芳搬去了西安。", "到西安", True),  # the end of a Chinese anchor is its value
    ("- 王芳住在成都。", "西安", False),
])
def test_a_line_holds_the_anchor_as_a_value(line: str, anchor: str, held: bool) -> None:
    assert holds_value(line, anchor) is held


def test_a_curated_line_saying_what_it_replaced_answers_when_no_other_line_does(
        embed: Any) -> None:
    # After consolidation the earlier value may live only in the line that replaced it (the
    # old line went to memory-history/, which is not indexed).
    hits = [cited_hit("memory/2025-05-01.md", "- Ada Park bought a Honda.", 0.5),
            cited_hit("MEMORY.md", "- Ada Park is dating Casey. (before: Robin) (as of 2025-04-02)",
                      0.4)]
    ranked = newer_first(hits, ask("Who was Ada Park's partner?", anchor="Casey"), embed)
    assert ranked[0].path == "MEMORY.md"
    # Its note names the value before Casey, not Robin's successor: asked about Robin, the
    # line is a later value, not an anchor.
    assert not holds_value("- Ada Park is dating Casey. (as of 2025-04-02)", "Robin")
