"""A dated line that says again what a curated fact names, and names nothing new, is news of
that fact: it does not take the fact's place as a newer value."""

from __future__ import annotations

from typing import Any

import pytest
from search_hits import cited_hit, default_embed

from openclaw_memory.language.dateforms import calendar_word
from openclaw_memory.search.corroboration import corroborates
from openclaw_memory.search.question import ask
from openclaw_memory.search.recency import newer_first


@pytest.fixture(scope="module")
def embed() -> Any:
    return default_embed()


def test_a_later_line_repeating_the_facts_name_and_naming_nothing_new_corroborates() -> None:
    fact = "- Jon uses a split keyboard (Kinesis Advantage)."
    assert corroborates("- Remapped the Kinesis thumb keys for Jon.", fact,
                        "What keyboard does Jon use?", {"jon"})
    # A month is a date, not a new name.
    assert corroborates("- Jon's Kinesis repair came back in June.", fact,
                        "What keyboard does Jon use?", {"jon"})


def test_a_change_naming_something_new_is_not_held_back_even_naming_the_old_value() -> None:
    fact = "- Jon works remotely from Porto."
    assert not corroborates("- Jon gave up the Porto flat and stays in Madrid for good.", fact,
                            "Where does Jon work from now?", {"jon"})
    # Nothing shared beyond the subject and the question: not about the fact's value at all.
    assert not corroborates("- Jon moved to a flat in Madrid.", fact,
                            "Where does Jon work from now?", {"jon"})


def test_calendar_words_are_months_and_weekdays() -> None:
    assert all(map(calendar_word, ["June", "Tue", "Sept.", "sunday", "dec"]))
    assert not any(map(calendar_word, ["Juneau", "Kinesis", "Tuesdays-only"]))


def test_a_curated_fact_keeps_its_place_over_later_news_of_it(embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Jon Berg uses a split keyboard (Kinesis Advantage).\n"
                                     "- Jon Berg edits in Emacs.", 0.5)
    news = cited_hit("memory/2025-06-02.md", "- Remapped the Kinesis thumb keys for Jon Berg.",
                     0.45)
    ranked = newer_first([news, curated], ask("What keyboard does Jon Berg use?"), embed)
    assert ranked[0].path == "MEMORY.md"
    assert all(h.superseded_by is None for h in ranked)
