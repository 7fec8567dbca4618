"""Every hit says when its fact was learned (``as_of``: a daily log's date, or the
``(as of ...)`` stamp the library writes on curated lines), and of two hits that say different
things about one subject the newer ranks first and the older is marked superseded."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from search_hits import cited_hit, default_embed

from openclaw_memory import MemoryIndex
from openclaw_memory.files.curation import stamp_date
from openclaw_memory.langchain import memory_tools
from openclaw_memory.search.question import ask
from openclaw_memory.search.recency import newer_first

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC",
                        "search": {"newer_first": True}}




def test_the_newer_of_two_hits_about_one_subject_ranks_first_and_the_older_is_marked() -> None:
    old = cited_hit("MEMORY.md", "- The kestrel release ships on 12 March with version 2.1. "
                            "(as of 2026-01-10)", 0.9)
    new = cited_hit("memory/2026-02-20.md", "- The kestrel release ships on 30 April with version "
                                      "2.2.", 0.6)
    other = cited_hit("memory/2026-02-21.md", "- Lunch with the design team about the new logo.", 0.5)
    ranked = newer_first([old, other, new], ask("When does the kestrel release ship?"))
    assert [h.path for h in ranked] == ["memory/2026-02-20.md", "MEMORY.md",
                                        "memory/2026-02-21.md"]
    assert ranked[0].as_of == "2026-02-20" and ranked[1].as_of == "2026-01-10"
    assert ranked[1].superseded_by == "memory/2026-02-20.md#L1"
    assert ranked[0].superseded_by is None and ranked[2].superseded_by is None


def test_restatements_undated_hits_and_other_subjects_keep_their_order() -> None:
    same = cited_hit("memory/2026-02-20.md", "- Kestrel ships on 12 March.", 0.9)
    again = cited_hit("memory/2026-02-25.md", "- Kestrel ships on 12 March.", 0.8)  # same words
    undated = cited_hit("memory/notes.md", "- Kestrel ships on 30 April.", 0.7)
    ranked = newer_first([same, again, undated], ask("When does kestrel ship?"))
    assert [h.path for h in ranked] == [same.path, again.path, undated.path]
    assert all(h.superseded_by is None for h in ranked) and ranked[2].as_of is None


def test_stamps_date_list_items_or_a_notes_last_line() -> None:
    assert stamp_date("- a\n- b (as of 2025-01-01)", "2026-11-25") == (
        "- a (as of 2026-11-25)\n- b (as of 2025-01-01)")
    assert stamp_date("# Title\nfirst line\nsecond line", "2026-11-25") == (
        "# Title\nfirst line\nsecond line (as of 2026-11-25)")


@pytest.fixture()
def memory(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", **OPTS) as opened:
        yield opened


def test_curated_notes_are_dated_and_hits_the_tool_and_explain_show_it(memory: MemoryIndex,
                                                                       ) -> None:
    day = datetime(2026, 1, 10, 9, tzinfo=UTC)
    memory.write("- The kestrel release ships on 12 March with version 2.1.", target="memory",
                 now=day)
    memory.write("- The kestrel release ships on 30 April with version 2.2.",
                 now=datetime(2026, 2, 20, 9, tzinfo=UTC))
    text = memory.get("MEMORY.md").text
    assert "(as of 2026-01-10)" in text
    # The same fact written again another day is a duplicate, whatever its date.
    again = memory.write("- The kestrel release ships on 12 March with version 2.1.",
                         target="memory", now=datetime(2026, 1, 12, tzinfo=UTC))
    assert again.reason == "duplicate"
    hits = memory.search("When does the kestrel release ship?").results
    assert hits[0].path == "memory/2026-02-20.md" and hits[0].as_of == "2026-02-20"
    assert hits[1].path == "MEMORY.md" and hits[1].superseded_by
    data = hits[1].as_dict(explain=True)
    assert data["as_of"] == "2026-01-10" and data["superseded_by"] == hits[0].citation
    tool = memory_tools(memory)[0]
    out = json.loads(tool.invoke({"type": "tool_call", "id": "c", "name": "memory_search",
                                  "args": {"query": "When does the kestrel release ship?"}}
                                 ).content)
    assert out["results"][0]["as_of"] == "2026-02-20"
    assert out["results"][1]["superseded"] == hits[0].citation


def test_a_question_naming_a_date_keeps_the_dated_order() -> None:
    from dataclasses import replace

    old = cited_hit("memory/2026-03-03.md", "- The kestrel release ships on 12 March with version "
                                      "2.1.", 0.9)
    old = replace(old, explanation=replace(old.explanation, date_match=True))
    new = cited_hit("memory/2026-03-04.md", "- The kestrel release ships on 30 April with version "
                                      "2.2.", 0.8)
    ranked = newer_first([old, new], ask("When did the kestrel release ship on 3 March 2026?"))
    assert [h.path for h in ranked] == [old.path, new.path]
    assert ranked[0].superseded_by is None


@pytest.fixture(scope="module")
def embed() -> Any:
    return default_embed()


def test_asked_for_the_present_value_the_newest_note_answering_it_ranks_first(embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park drives a Toyota.", 0.50)
    diet = cited_hit("memory/2025-02-17.md", "- Ada Park became keto.", 0.49)
    skoda = cited_hit("memory/2025-04-05.md", "- Ada Park now drives a Skoda.", 0.45)
    honda = cited_hit("memory/2025-05-03.md", "- Ada Park bought a Honda.", 0.40)
    hits = [curated, diet, skoda, honda]
    ranked = newer_first(hits, ask("What car does Ada Park drive now?"), embed)
    # The answers first, newest first; keto says nothing of her car: after them, unmarked.
    assert [h.path for h in ranked] == ["memory/2025-05-03.md", "memory/2025-04-05.md",
                                        "MEMORY.md", "memory/2025-02-17.md"]
    assert ranked[1].superseded_by == ranked[2].superseded_by == "memory/2025-05-03.md#L1"
    assert ranked[3].superseded_by is None
    # Not asked about the present (or not told to reorder): the scores' order stands.
    assert [h.path for h in newer_first(hits, ask("What car did Ada Park drive?"), embed)] == [
        h.path for h in hits]
    assert [h.path for h in newer_first(hits, ask("What car does Ada Park drive now?"), embed,
                                        reorder=False)] == [h.path for h in hits]


def test_a_fact_that_never_changed_keeps_its_place_above_newer_notes_on_other_things(
        embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park is vegetarian.", 0.50)
    car = cited_hit("memory/2025-04-05.md", "- Ada Park now drives a Skoda.", 0.45)
    moved = cited_hit("memory/2025-03-10.md", "- Ada Park moved to Oslo.", 0.40)
    ranked = newer_first([curated, car, moved], ask("What diet does Ada Park follow now?"), embed)
    assert ranked[0].path == "MEMORY.md" and ranked[0].superseded_by is None
