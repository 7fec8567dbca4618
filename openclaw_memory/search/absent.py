"""Names a question asks about that memory never mentions.

"What sports does Paola watch?" over notes with no Paola still finds notes about someone
else's sports: the rest of the question matches them. A name that occurs nowhere in the index
is evidence that memory cannot answer, so when every name the question gives is absent, the
relevance gate closes (the hits are shown apart as low confidence, at most) and ``explain``
says which names were missing. A question naming one person who is in the notes keeps its
hits. Absence lowers confidence rather than deciding alone: the question must then reach a
higher gate (``search.absent_name_gate``), since a question can name someone a note about the
same event does not ("Xiao Ming took my swing" of a note "a classmate took Bart's swing").

Only a question or a keyword query is read this way (:func:`asks_about`): a statement or a
pasted dialogue names people and things a note about the same event may not. Names are read
from the question's Latin-script words: capitalised words past the first of
a sentence (the first too when it is possessive, "Paola's ..."), other than common words,
month and weekday names and "I". Scripts without capitals (Chinese, Japanese) carry no such
signal, and their questions are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.textsearch import STOP_WORDS

__all__ = ["absent_names", "asks_about", "question_names"]

_APOSTROPHES = "'\u2019"
_WORD = re.compile(rf"[^\W\d_][\w{_APOSTROPHES}-]*", re.UNICODE)
_SENTENCE_END = re.compile("[.!?:;\u3002\uff01\uff1f]\\s*$")
_CALENDAR = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday "
    "friday saturday sunday mon tue tues wed thu thur thurs fri sat sun i i'm i've i'd i'll "
    "christmas easter".split())


_ASKING = re.compile(r"(?i)^\s*(?:who|whom|whose|what|which|when|where|why|how|is|are|was|were|"
                     r"do|does|did|has|have|had|can|could|will|would|should)\b")
#: A line this short is a keyword query ("Paola sports"); longer, it must be a question.
_KEYWORD_QUERY_WORDS = 6


def asks_about(text: str) -> bool:
    """Whether ``text`` is one question or a keyword query, not a statement or a pasted
    dialogue: "I just want a dog like a Golden Retriever." names a breed, not whom it asks
    about, and a dialogue names whoever spoke."""
    line = text.strip()
    if not line or "\n" in line:
        return False
    return (line.endswith(("?", "\uff1f")) or bool(_ASKING.match(line))
            or len(line.split()) <= _KEYWORD_QUERY_WORDS)


def question_names(question: str) -> list[str]:
    """The capitalised names of ``question``, lower-cased, in order, each once."""
    names: list[str] = []
    start = True
    for match in _WORD.finditer(question):
        word = match.group(0)
        before = question[:match.start()]
        start = not before.strip() or bool(_SENTENCE_END.search(before))
        possessive = word[-2:-1] in _APOSTROPHES and word.endswith("s") and len(word) > 2
        bare = word[:-2] if possessive else word.rstrip(_APOSTROPHES + "-")
        key = bare.lower()
        acronym = bare.isupper() and len(bare) <= 3  # TV, USA: as often a common word
        if (not bare[:1].isupper() or not bare.isalpha() or (start and not possessive)
                or key in STOP_WORDS or key in _CALENDAR or len(bare) < 2 or acronym):
            continue
        if key not in names:
            names.append(key)
    return names


def absent_names(store: SearchBackend, names: Sequence[str]) -> tuple[str, ...]:
    """Those of ``names`` that no chunk of the index contains (none when the index cannot
    say: a failing count must not close the gate)."""
    if not names:
        return ()
    try:
        _, containing = store.term_statistics(list(names))
    except IndexCorruptError:
        raise
    except StoreError:
        return ()
    return tuple(n for n in names if containing.get(n, 0) == 0)
