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
month and weekday names and "I". Chinese has no capitals: a Chinese question that begins with
a common surname and another character ("王芳现在住在哪里") names that person; other
questions in scripts without capitals (Japanese) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.textsearch import STOP_WORDS

__all__ = ["absent_names", "asks_about", "chinese_names", "question_names"]

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


#: Common Chinese surnames that seldom begin an ordinary word (周 as in 周末, 何 as in 何时,
#: 谢 as in 谢谢, 曾 as in 曾经 and the like are left out): a question that begins with one
#: of these and another character most likely names a person ("王芳现在住在哪里").
_SURNAMES = frozenset("王李张刘陈杨黄赵吴徐孙朱胡郭林罗郑梁宋唐韩冯邓曹彭肖董袁潘蒋蔡杜叶魏吕"
                      "沈姚卢姜崔谭汪廖贾韦邹孟秦邱薛闫侯郝龚邵覃")
_CJK_LEAD = re.compile(r"^[\s\W]*([\u4e00-\u9fff]{2})")


def _chinese_name(question: str) -> list[str]:
    """The person a Chinese question begins with (surname and first given character), if any:
    Chinese has no capitals, and a question names its topic first."""
    lead = _CJK_LEAD.match(question)
    return [lead.group(1)] if lead and lead.group(1)[0] in _SURNAMES else []


def chinese_names(names: Sequence[str]) -> bool:
    """Whether ``names`` (of :func:`question_names`) are a Chinese question's."""
    return bool(names) and all(_CJK_LEAD.match(n) for n in names)


def question_names(question: str) -> list[str]:
    """The capitalised names of ``question``, lower-cased, in order, each once; for a Chinese
    question, the person it begins with."""
    if _CJK_LEAD.match(question):
        return _chinese_name(question)
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
    # A CJK name is looked up as the keyword side spells a CJK pair ("王 芳").
    terms = {n: " ".join(n) if _CJK_LEAD.match(n) else n for n in names}
    try:
        _, containing = store.term_statistics(list(terms.values()))
    except IndexCorruptError:
        raise
    except StoreError:
        return ()
    return tuple(n for n, term in terms.items() if containing.get(term, 0) == 0)
