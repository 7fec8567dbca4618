"""What a fact is about: the attributes of people and projects, by cue words kept as data.

Why cue words at all: the question names an attribute ("Where does Ada live?") in words the
note that changes it does not ("Ada moved to Berlin"), and a small sentence encoder puts
"where does ... live" and "moved to Berlin" far apart (cosine 0.18, against 0.34 for "lives
in Paris"). The words decide no line alone: they bring two lines of one attribute closer and
set lines of only different attributes apart when a subject's lines are grouped
(search/present_value.py), and only lines that already name the question's subject are
compared, so a general word ("moved") is read in that narrow context.

The words are data, ``data/attribute_words.json``: English word forms and Chinese words for
sixteen attributes, each entry with what it earned on the hand-written knowledge-update dev set
(or the template family, the bundled sample or the hand-written test it holds). Nine
attributes that earned nothing were removed (that file says which). A word naming one
attribute often but others too ("joined": a company, a club, a team) is a hint: it brings
lines together and sets none apart.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from openclaw_memory.language.wordlists import load, word_pattern

__all__ = ["attribute_patterns", "attributes_of", "hinted_attributes"]


def _pattern(entry: dict[str, Any]) -> re.Pattern[str]:
    """One attribute's cue words as one pattern: English forms as whole words, each after
    none of its ``not_after`` words ("brought home a beagle" is no home), Chinese words as
    written."""
    not_after: dict[str, list[str]] = entry.get("not_after", {})
    return word_pattern(("".join(rf"(?<!\b{word} )" for word in not_after.get(form, ())) + form
                         for form in entry.get("en", ())), entry.get("zh", ()))


@lru_cache(maxsize=1)
def attribute_patterns() -> tuple[dict[str, re.Pattern[str]], dict[str, re.Pattern[str]]]:
    """The attributes' patterns and the hints' (``data/attribute_words.json``)."""
    data = load("attribute_words")
    return ({name: _pattern(entry) for name, entry in data["attributes"].items()},
            {name: _pattern(entry) for name, entry in data["hints"].items()})


@lru_cache(maxsize=4096)
def hinted_attributes(text: str) -> frozenset[str]:
    """The attributes ``text``'s cue words or hints name."""
    hints = attribute_patterns()[1]
    return attributes_of(text) | frozenset(
        name for name, pattern in hints.items() if pattern.search(text))


@lru_cache(maxsize=4096)
def attributes_of(text: str) -> frozenset[str]:
    """The attributes whose cue words ``text`` holds."""
    return frozenset(name for name, pattern in attribute_patterns()[0].items()
                     if pattern.search(text))
