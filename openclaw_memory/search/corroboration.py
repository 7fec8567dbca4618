"""A dated line that says again what a curated fact names is news of that fact, not a new
value of it.

"Uses a split keyboard (Moonlander)" and later "New layer on the Moonlander for arrow keys";
"Rate: 450/day, invoices monthly via Deel" and later "Invoice for June arrived via Deel, paid":
the later line shares the fact's words and names nothing the fact does not, so it corroborates
the fact (the keyboard is still the Moonlander) rather than replacing it. A change names what
came after ("gave up the Lisbon flat, staying in Brazil", "traded the ThinkPad for a MacBook
Pro"), so a line naming something new is not held back, even when it names the old value too.

What counts: content words (search/attribute_groups.py; CJK as two-character runs) beyond the
subject's and the question's; names are capitalised words past a line's first (months and
weekdays are dates, not names: language/dateforms.py). Only the answer's curated line is
corroborated: a dated best answer is itself the news.

On the hand-written knowledge-update dev set (docs/benchmarks.md: knowledge-update-set):
unchanged facts first 66.7 -> 76.7 %, current values and an earlier value above the current one
unchanged (73.3 / 16.7); without the "names nothing new" condition, unchanged 83.3 but current
66.7 and stale 23.3 (changes that name the old value were held back).
"""

from __future__ import annotations

import re

from openclaw_memory.language.dateforms import calendar_word
from openclaw_memory.search.attribute_groups import content_words
from openclaw_memory.search.subject_lines import without_subject

__all__ = ["corroborates", "named_values"]

_CAPITALISED = re.compile(r"(?<![\w'\u2019])[A-Z][\w'\u2019-]*")
_LATIN = re.compile(r"[A-Za-z][\w'\u2019-]*")


def _words(text: str, subject: set[str], asked: set[str]) -> set[str]:
    return {w.lower() for w in content_words(without_subject(text, subject))} - asked


def named_values(text: str, subject: set[str]) -> set[str]:
    """The names a line says beyond the subject's: capitalised words past the first (a
    sentence begins with one), dates aside ("ThinkPad", "Lumen", "Bristol")."""
    plain = without_subject(text, subject).lstrip("-*+# ")
    return {found.group(0).lower() for found in _CAPITALISED.finditer(plain)
            if found.start() > 0 and not calendar_word(found.group(0))}


def corroborates(line: str, fact: str, question: str, subject: set[str]) -> bool:
    """Whether the dated ``line`` says again what the curated ``fact`` (the best answer to
    ``question``) names: it shares a word with it beyond the subject's and the question's, and
    names nothing the fact does not."""
    asked = _words(question, subject, set())
    if not _words(line, subject, asked) & _words(fact, subject, asked):
        return False
    known = {w.lower() for w in _LATIN.findall(fact)} | asked
    return not named_values(line, subject) - known
