"""The word lists are data: read the same way everywhere, each group saying what it earned."""

from __future__ import annotations

from openclaw_memory.language.wordlists import literal_pattern, load, word_pattern


def test_english_forms_are_whole_words_in_any_case_and_chinese_words_as_written() -> None:
    pattern = word_pattern(["li(?:ve|ves)", "home"], ["住"])
    assert pattern.search("She LIVES in Porto") and pattern.search("王芳住在北京")
    assert not pattern.search("a lively homestead")
    plain = literal_pattern(["their", "他们"])
    assert plain.search("Marketing moved their weekly") and plain.search("市场部把他们的周会")
    assert not plain.search("theirselves") and not plain.search("Our weekly")


def test_an_empty_list_matches_nothing() -> None:
    # An empty alternation would match everywhere: every line would read as "now".
    assert word_pattern([], []).search("anything at all") is None
    assert literal_pattern([]).search("") is None


def test_every_time_word_group_says_what_it_earned() -> None:
    data = load("time_words")
    groups = {name: group for name, group in data.items() if isinstance(group, dict)}
    assert {"now", "past", "when", "present", "asking", "change"} <= set(groups)
    assert all(group["earned"] for group in groups.values())
