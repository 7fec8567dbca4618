"""Names (and rare words) a question asks about that memory never mentions.

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
questions in scripts without capitals (Japanese) are left as they are. A title in book-title
marks ("《战争与和平》的作者是谁") is a name too; where the question is searched in translation,
it is present when a note holds a word of its translation ("war").

A question naming nobody is read for its **rare words** instead (:func:`rare_words`: "Who
discovered penicillin?"): lower-case words that OpenAI's o200k_base vocabulary splits into two
tokens or more (every frequent English word is one). When memory holds one of them nowhere, the
question is most likely about something else; the same gate applies. Not where the question is
searched in translation (its words may be in the notes in the other language), and not for a
statement or a keyword query.

Absence lowers every score of the search (by ``relevance_gate / absent_name_gate``), so that a
candidate reaching the absent gate reaches the relevance gate, and an explicit ``min_score``
or the score a caller reads sees the lowered confidence. Measured in benchmarks/retrieval.py
(off-topic questions with hits 8.5 -> 4.8 %, AUC 0.962 -> 0.973; on 40 more, written after
this was designed: 4.0 -> 3.5 %, 0.975 -> 0.981; answerable recall unchanged in every set).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from openclaw_memory.config import SearchSettings
from openclaw_memory.errors import IndexCorruptError, StoreError
from openclaw_memory.indexing.tokens import single_token_words
from openclaw_memory.language.textsearch import STOP_WORDS
from openclaw_memory.language.time_words import ASKING, AUXILIARIES
from openclaw_memory.language.translation import translate_query
from openclaw_memory.search.backend import SearchBackend
from openclaw_memory.search.request import SearchRequest

__all__ = ["RARE_TOKENS", "absent_gate", "absent_names", "absent_terms", "asks_about",
           "chinese_names", "question_names", "rare_words"]

_APOSTROPHES = "'\u2019"
_WORD = re.compile(rf"[^\W\d_][\w{_APOSTROPHES}-]*", re.UNICODE)
_SENTENCE_END = re.compile("[.!?:;\u3002\uff01\uff1f]\\s*$")
_CALENDAR = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday "
    "friday saturday sunday mon tue tues wed thu thur thurs fri sat sun i i'm i've i'd i'll "
    "christmas easter".split())


#: A question's first word: a question word or an auxiliary (data/time_words.json, "asking").
_ASKING = re.compile(rf"(?i)^\s*(?:{ASKING}|{AUXILIARIES})\b")
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


#: A title in Chinese book-title marks names a work as a capitalised word names a person.
_TITLE = re.compile(r"《[^《》\n]{1,40}》")


def question_names(question: str) -> list[str]:
    """The capitalised names of ``question``, lower-cased, in order, each once; for a Chinese
    question, the person it begins with; first, the titles it gives in book-title marks
    ("《战争与和平》", kept with their marks)."""
    titles = list(dict.fromkeys(_TITLE.findall(question)))
    return [*titles, *_names(_TITLE.sub(" ", question).strip())]


def _names(question: str) -> list[str]:
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


#: Tokens of OpenAI's o200k_base vocabulary from which a lower-case word is rare: its
#: byte-pair merges make every frequent English word one token ("tournament", "hiking",
#: "therapist"), while "penicillin", "photosynthesis" and "guacamole" take two or more.
RARE_TOKENS = 2
_LOWER_WORD = re.compile(r"(?<![\w'\u2019-])[a-z][a-z]*(?:-[a-z]+)*(?![\w'\u2019])")
_QUESTION_END = ("?", "\uff1f")


def rare_words(question: str) -> list[str]:
    """The uncommon lower-case words (four letters or more) of ``question`` when it is a
    question naming nobody: "Who discovered penicillin?" -> ["penicillin"]. A statement or a
    keyword query is not read (a note about the same event may word it otherwise)."""
    return [] if question_names(question) else _rare(_plain_words(question))


def _plain_words(question: str) -> list[str]:
    """The lower-case words of four letters or more, beyond function words, of a question
    (none of a statement or a keyword query)."""
    line = question.strip()
    if "\n" in line or not (line.endswith(_QUESTION_END) or _ASKING.match(line)):
        return []
    return list(dict.fromkeys(w for w in _LOWER_WORD.findall(line)
                              if len(w) >= 4 and w not in STOP_WORDS))


def _rare(words: Sequence[str]) -> list[str]:
    """Those of ``words`` that o200k_base splits into :data:`RARE_TOKENS` tokens or more: with
    ``RARE_TOKENS`` 2, those for which " word" is not one token (read from the set of such
    words kept in the cache directory, not by building the encoder: a CLI search pays for
    it). Only read when there is a word."""
    if not words:
        return []
    common = single_token_words("o200k_base")  # RARE_TOKENS = 2: not one token is rare
    return [w for w in words if w not in common]


def absent_names(store: SearchBackend, names: Sequence[str], *,
                 translated: bool = False) -> tuple[str, ...]:
    """Those of ``names`` that no chunk of the index contains (none when the index cannot
    say: a failing count must not close the gate). ``translated``: the question's words are
    searched in the other language too, so a title counts as present when a chunk holds a
    word of its translation ("war" for 《战争与和平》); a person's name is looked up as written
    (its other form is its pinyin, which no translation gives)."""
    if not names:
        return ()
    # A CJK name is looked up as the keyword side spells a CJK pair ("王 芳").
    terms = {n: [_spelled(n)] for n in names}
    if translated:
        for name in names:
            rendered = translate_query(name.strip("《》")) if name.startswith("《") else None
            terms[name] += rendered.terms if rendered is not None else []
    try:
        _, containing = store.term_statistics([t for ts in terms.values() for t in ts])
    except IndexCorruptError:
        raise
    except StoreError:
        return ()
    return tuple(n for n, ts in terms.items() if not any(containing.get(t, 0) for t in ts))


def _spelled(name: str) -> str:
    bare = name.strip("《》")
    return " ".join(bare) if _CJK_LEAD.match(bare) else bare


def absent_terms(store: SearchBackend, request: SearchRequest, names: Sequence[str],
                 settings: SearchSettings) -> tuple[str, ...]:
    """The ``names`` the question gives (:func:`question_names`, read once with the question:
    search/question.py), when none of them occurs in memory; of a question naming nobody, the
    rare words of it that memory never holds (else ())."""
    if not settings.absent_name_check or not asks_about(request.query):
        return ()
    translated = request.translation is not None
    if names:
        # Where memory writes in the other language a name may read otherwise there; not a
        # Chinese name: its other form is its pinyin, which no translation gives.
        if translated and not chinese_names(names):
            return ()
        missing = absent_names(store, names, translated=translated)
        return missing if len(missing) == len(names) else ()
    # A question naming nobody: any rare word of it memory never holds (its words looked up
    # first: the vocabulary that tells a rare word is loaded only for an absent one).
    words = [] if translated else _plain_words(request.query)
    return tuple(_rare(absent_names(store, words)))


def absent_gate(absent: Sequence[str], settings: SearchSettings) -> float:
    """The relevance gate of a question whose names are all ``absent``: a Chinese question's
    lead name has its own (a two-character name is one keyword pair among many, so a question
    scores alike whether or not memory holds the person it asks about)."""
    people = [name for name in absent if not name.startswith("《")]  # (titles: the usual gate)
    return settings.absent_chinese_name_gate if chinese_names(people) else settings.absent_name_gate
