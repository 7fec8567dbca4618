"""A line naming someone else that refers to a person only by the pronoun the subject's lines
never use is about that someone: it never answers for the subject."""

from __future__ import annotations

from typing import Any

import pytest
from search_hits import cited_hit, curated_lines, default_embed

from openclaw_memory.search.pronouns import about_someone_else
from openclaw_memory.search.question import ask
from openclaw_memory.search.recency import newer_first

_RAVI = ["- Ravi watched a video and is going full nvim. Helped him set up lazy.nvim.",
         "- Spent the evening on Ravi's init.lua; he's been living in Neovim since.",
         "- Gave up on nvim. He's back in VS Code.",
         "- Pairing with Ana: she's trying VS Code for the first time. Ravi set up sync for her."]


@pytest.fixture(scope="module")
def embed() -> Any:
    return default_embed()


def test_a_line_about_someone_else_by_pronoun_is_set_aside() -> None:
    assert about_someone_else(_RAVI, [False] * 4, {"ravi"}) == [False, False, False, True]


def test_a_curated_line_or_one_naming_nobody_else_is_never_set_aside() -> None:
    assert about_someone_else(_RAVI, [False, False, False, True], {"ravi"}) == [False] * 4
    unnamed = [*_RAVI[:3], "- she's trying it for the first time."]
    assert about_someone_else(unnamed, [False] * 4, {"ravi"}) == [False] * 4


def test_without_a_clear_majority_pronoun_nothing_is_set_aside() -> None:
    mixed = [_RAVI[0], _RAVI[3]]
    assert about_someone_else(mixed, [False] * 2, {"ravi"}) == [False] * 2
    # 他们 is "they": no one person's pronoun.
    chinese = ["- 老王说他换了新车。", "- 老王和他们去爬山。", "- 他们请了小李，她也来了。"]
    assert about_someone_else(chinese, [False] * 3, {"老王"}) == [False] * 3


def test_the_subjects_own_newest_change_answers_not_another_persons(embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- User: Ravi.\n- Editor: VS Code, with GitLens.", 0.5)
    hits = [curated, *(cited_hit(f"memory/2026-0{n}-10.md", line, 0.4 - n / 100)
                       for n, line in enumerate(_RAVI, 2))]
    ranked = newer_first(hits, ask("Which editor does Ravi use now?"), embed,
                         curated_text=lambda: curated_lines("- User: Ravi.",
                                                            "- Editor: VS Code, with GitLens."))
    assert ranked[0].path == "memory/2026-04-10.md"  # "He's back in VS Code", not Ana's
