"""The user as a question's subject: the person the notes are kept for.

Notes name their user once, in a curated line ("User: Priya. Architect", "## User (Priya)",
"The user is Tomas", "用户: 刘洋 (小刘)", full-width or not), and then write about them
without a name: "Cancelled the Oasis membership, swimming at the lido instead", "IT 把我的
电脑换成了新的", "Back on the old keyboard, he says". A question naming the user ("Where does
Priya swim now?") or asking in the first person ("我们组的周会现在是什么时候?") is about all of
those lines, not only the few that say the name: every line of the hits that states something
is the subject's (search/present_value.py).

On the hand-written knowledge-update dev set (docs/benchmarks.md: knowledge-update-set), the
current value came first for 2 of the 9 questions whose current-value lines do not say the
name asked about, and for 5 of 9 with this module (15 of 18 when a line says it); current
values first overall 63.3 -> 76.7 %, an earlier value above the current one 23.3 -> 13.3 %,
unchanged facts first 60.0 -> 56.7 % (more lines, more that group with an old fact; a line only
the user ties to the subject answers when it is close to the best answer itself:
present_value.DIRECT_ALIKE). The words it reads (labels for the user, first-person words) are
data, ``data/user_words.json``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from openclaw_memory.language.dateforms import PATTERNS
from openclaw_memory.language.wordlists import literal_pattern, load
from openclaw_memory.search.attribute_groups import content_words
from openclaw_memory.search.subject_lines import HAN_NAME, LATIN_NAME, MOST_LINES, name_terms

__all__ = ["MOST_LINES", "about_user", "says_something", "user_lines", "user_names"]

# MOST_LINES: the most lines of the hits read as the user's, as many as a subject's.
#: Another name in brackets after the user's ("User: Chen Yu (陈宇)").
_PAREN = r"(?:\s*[(\uff08]\s*([^)\uff09]{1,16}?)\s*[)\uff09])?"


@lru_cache(maxsize=1)
def _words() -> dict[str, list[str]]:
    loaded: dict[str, list[str]] = {key: value for key, value in load("user_words").items()
                                    if isinstance(value, list)}
    return loaded


@lru_cache(maxsize=1)
def _label() -> re.Pattern[str]:
    """A label naming the user, then the name: "User: Ravi", "user (Danielle)", "user is
    Claire", "用户: 周杰 (小周)", full-width or not; a parenthesis after the name gives another
    ("Chen Yu (陈宇)")."""
    forms = []
    for label in _words()["user_labels"]:
        if label.isascii():
            # "the user's husband" names someone else: the label must be followed by the name.
            forms.append(rf"(?i:\b{re.escape(label)}\b\s*(?::|\(|\bis\s+))\s*"
                         rf"({LATIN_NAME}){_PAREN}")
        else:
            forms.append(rf"{re.escape(label)}\s*[\uff1a:\uff08(]\s*({HAN_NAME}){_PAREN}")
    # (the label in any case; a Latin name capitalised)
    return re.compile("|".join(forms))


@lru_cache(maxsize=1)
def _first_person() -> tuple[re.Pattern[str], tuple[str, ...]]:
    words = _words()["first_person"]
    return literal_pattern(words), tuple(w for w in words if not w.isascii())


def user_names(lines: Iterable[str]) -> frozenset[str]:
    """The terms of the user's names that curated ``lines`` give ("User: Chen Yu (陈宇)":
    chen, yu, 陈宇); empty when no line names the user."""
    label = _label()
    names: set[str] = set()
    for line in lines:
        for found in label.finditer(line):
            for group in found.groups():
                if group:
                    names |= name_terms(group)
    return frozenset(names)


def about_user(question: str, subject: set[str], users: frozenset[str]) -> bool:
    """Whether ``question`` (whose ``subject`` search/subject_lines.py read) asks about the
    user: it names only the user, or asks in the first person about no one else ("What
    should I order for Sam?" is about Sam)."""
    if not users:
        return False
    if subject and subject <= users:
        return True
    first, han = _first_person()
    if not first.search(question):
        return False
    # A Chinese question's subject is its lead, which may begin with the asker ("我们组的周会").
    others = {term for term in subject - users if not term.startswith(han)}
    return not others


def says_something(line: str) -> bool:
    """Whether ``line`` states something: not a heading, and two words or more beside any
    date ("Tue 24 Feb 2026" and "2026-04-14" only date a daily log)."""
    if line.lstrip().startswith("#"):
        return False
    for pattern in PATTERNS:
        line = pattern.sub(" ", line)
    return len(content_words(line)) >= 2


def user_lines(cited: Sequence[Sequence[str]]) -> list[tuple[int, str]]:
    """(hit index, line) of the hits' lines that state something, up to :data:`MOST_LINES`,
    but those about another group ("Marketing moved their weekly to Monday", "市场部把他们的
    周会定在周一"): a third-person plural word says whose the fact is, and it is not the
    user's."""
    others = _others()
    return [(k, line) for k, lines in enumerate(cited) for line in lines
            if says_something(line) and not others.search(line)][:MOST_LINES]


@lru_cache(maxsize=1)
def _others() -> re.Pattern[str]:
    """The third-person plural words of ``data/user_words.json`` ("their", 他们)."""
    return literal_pattern(_words()["others"])
