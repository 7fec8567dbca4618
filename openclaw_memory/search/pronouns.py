"""Which of a subject's lines are about someone else, by the pronoun they use for a person.

Notes refer to a person once named as "he" or "she" (他, 她). The subject's pronoun is the one
the lines saying its name use: at least twice as many of them hold it alone as hold the
other alone (otherwise nothing is read into pronouns). A line that names someone besides the subject and
refers to a person only by the other pronoun is about that someone, whatever it says of the
subject: "Pairing with Ana: she's trying VS Code for the first time. Ravi set up settings sync
for her." tells Ana's editor, not Ravi's, who is "he" in his other lines ("He's back in VS
Code"). A curated line is never set aside: ``MEMORY.md`` states the subject's facts.

The pronouns are data (data/pronouns.json), with what they earned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from openclaw_memory.language.wordlists import load, word_pattern
from openclaw_memory.search.corroboration import named_values
from openclaw_memory.search.subject_lines import mentions

__all__ = ["about_someone_else"]


@lru_cache(maxsize=1)
def _pronouns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """He and she, as ``data/pronouns.json`` writes them (read on first use)."""
    data = load("pronouns")
    return (word_pattern(data["he"]["en"], data["he"]["zh"]),
            word_pattern(data["she"]["en"], data["she"]["zh"]))

#: How many times as many of the subject's lines must use one pronoun alone as the other.
_MAJORITY = 2


def about_someone_else(lines: Sequence[str], kept: Sequence[bool], subject: set[str]) -> list[bool]:
    """Which of the subject's ``lines`` (``kept``: curated) name someone else and refer to a
    person only by the pronoun the subject's lines do not use."""
    his_words, her_words = _pronouns()
    he = [bool(his_words.search(line)) and not her_words.search(line) for line in lines]
    she = [bool(her_words.search(line)) and not his_words.search(line) for line in lines]
    # Counted over the lines saying the subject's name: a person's unnamed lines are as
    # often about someone else ("Dad's picked up a Prius, very pleased with himself" among
    # Claire's own notes).
    named = [mentions(line, subject) for line in lines]
    his = sum(h and n for h, n in zip(he, named, strict=True))
    hers = sum(h and n for h, n in zip(she, named, strict=True))
    if his >= _MAJORITY * max(hers, 1):
        other = she
    elif hers >= _MAJORITY * max(his, 1):
        other = he
    else:
        return [False] * len(lines)
    return [other[i] and not kept[i] and bool(named_values(line, subject))
            for i, line in enumerate(lines)]
