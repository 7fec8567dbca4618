"""Which lines are about what a question asks about: its **subject**, whom or what it names
("Ada Park", "Kestrel"; a Chinese question's lead, "王芳"; else the words most cited lines
share), and the lines of the hits (and of the curated files no hit cites) that name it.

Shared by the questions that reorder a subject's lines: how things are now
(search/present_value.py) and what came before a value (search/earlier_value.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from openclaw_memory.files.notes import DATE_STAMP
from openclaw_memory.files.workspace import dated_name
from openclaw_memory.search.textsearch import STOP_WORDS, keyword_terms
from openclaw_memory.types import SearchHit

__all__ = ["CJK_FUNCTION", "MOST_LINES", "NOW", "CuratedLine", "CuratedText", "curated", "mentions",
           "named_text", "names_someone", "question_subject", "subject_pool", "uncited_curated",
           "with_curated", "without_subject"]



@dataclass(frozen=True, slots=True)
class CuratedLine:
    """A line of a curated file, and where it is."""

    text: str
    path: str
    line: int
    """Its line number in the file (1-based)."""
    chunk_id: str
    """The indexed chunk it was read from."""


#: The lines of the curated files among the hits (read only when needed).
CuratedText = Callable[[], Sequence[CuratedLine]]

#: The most lines naming the subject compared (the hits' first, then curated ones), and the
#: most distinct words of theirs embedded one by one (past it, sentences alone compare).
MOST_LINES = 80

#: Share of the cited lines holding some question word that must hold a word for it to be
#: the subject (when the question names nobody).
SUBJECT_SHARE = 0.6
#: Share of a shared-word subject's terms a line must hold to be about it.
SHARED_TERMS = 0.5

#: Words by which a question asks for the present value ("now"): its answers come first,
#: newest first, over any daily files.
NOW = re.compile(r"(?i)\b(?:now|currently|current|these days|nowadays|at the moment|at present|"
                 r"any ?more|latest|most recent(?:ly)?)\b|现在|目前|如今|当前|眼下")
#: Phrases saying when, not what: never a question's subject.
_WHEN = re.compile(r"(?i)\b(?:(?:this|next|last|every|each|the)\s+(?:week|month|year|day|morning|"
                   r"afternoon|evening|weekend|quarter|sprint)|today|tonight|tomorrow|yesterday|"
                   r"weekly|daily|monthly)\b")

_NAME = re.compile(r"[^\W\d_][\w'\u2019-]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_CJK_LEAD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")

#: CJK characters that ask or link rather than say what is asked about.
CJK_FUNCTION = frozenset("哪里什么谁怎样吗呢的了是在现目前如今当个")

_POSSESSIVE = re.compile(r"['\u2019]s\b")


def _names(question: str) -> set[str]:
    """The terms of the question's capitalised words (its first word only when it is not a
    function word: "Where", "Which"); acronyms ("API") only when nothing else is named."""
    words = _NAME.findall(question)
    named: list[str] = []
    acronyms: list[str] = []
    for i, word in enumerate(words):
        word = re.sub(r"['\u2019]s$", "", word)
        if not word[0].isupper() or (i == 0 and word.lower() in STOP_WORDS):
            continue
        (acronyms if len(word) > 1 and word.isupper() else named).append(word)
    return {t for w in (named or acronyms) for t in keyword_terms(w)}


def _cjk_subject(question: str, lines: Sequence[str]) -> set[str]:
    """The longest start of a CJK question that two cited lines hold ("王芳" of
    "王芳现在住在哪里"): a Chinese question names its topic first, and CJK has no capitals."""
    lead = _CJK_LEAD.match(question.strip())
    if lead is None:
        return set()
    best = ""
    for end in range(2, len(lead.group(0)) + 1):
        start = lead.group(0)[:end]
        # A character that asks or links ends the name: 的 joins whose to what ("青松的例会"
        # asks about 青松's meeting, and "青松每周二开例会" is about it too), and 现/在 begin
        # "现在住在": lines all written "杨磊现在..." must not make 杨磊现 the subject.
        if NOW.search(start) or (best and start[-1] in CJK_FUNCTION):
            break
        if sum(start in line for line in lines) >= 2:
            best = start
    return {best} if best else set()


def _shared_subject(question: str, lines: Sequence[str]) -> set[str]:
    """The question's terms in at least :data:`SUBJECT_SHARE` of the cited lines holding any
    of them ("my sister" in every line about her; the thing asked about in few)."""
    # Whole words of three letters or more: "daughter's" must not leave an "s" that every
    # possessive in the notes holds.
    # When it is asked about is no subject either: "this week" is in every weekly note
    # ("Who makes scope decisions this week?" took the week's lines for its subject).
    plain = _WHEN.sub(" ", NOW.sub(" ", _POSSESSIVE.sub("", question)))
    asked = {t for t in keyword_terms(plain) if len(t) > 2}
    holding = [found for line in lines if (found := asked & set(keyword_terms(line)))]
    if len(holding) < 2:
        return set()
    return {t for t in asked if sum(t in found for found in holding) >= SUBJECT_SHARE * len(holding)}


def names_someone(question: str) -> bool:
    """Whether the question names whom it is about (a name, or a CJK question's lead)."""
    return bool(_names(question)) or bool(_CJK_LEAD.match(question.strip()))


def question_subject(question: str, lines: Sequence[str]) -> set[str]:
    """Whom or what the question is about, as terms: its names, else (CJK) its lead, else
    the question's words that most of the cited lines share."""
    if _CJK_LEAD.match(question.strip()):
        # Shared words of CJK lines are the question's own template ("现在住在"), not whom
        # it is about: a lead no two lines hold is no subject.
        return _cjk_subject(question, lines)
    return _names(question) or _shared_subject(question, lines)


def mentions(line: str, subject: set[str], share: float = 1.0) -> bool:
    """Whether ``line`` names the subject: at least ``share`` of its terms, each as a word
    (CJK: as written)."""
    held = sum(bool(re.search(rf"(?i)\b{re.escape(term)}\b", line)) if term.isascii()
               else term in line for term in subject)
    return held >= share * len(subject)


def without_subject(text: str, subject: set[str]) -> str:
    """``text`` without the subject's terms, the "now" words and the date stamp."""
    out = _replace_subject(NOW.sub(" ", DATE_STAMP.sub("", text)), subject, " ", possessive=True)
    return " ".join(out.split()) or "-"


def named_text(text: str, subject: set[str]) -> str:
    """``text`` with the subject's terms as "X", its possessive kept: cue words read "X's
    place is in Cork" as where X lives (the subject's name is no cue, its "'s" may be part
    of one)."""
    return _replace_subject(DATE_STAMP.sub("", text), subject, "X", possessive=False)


def _replace_subject(text: str, subject: set[str], by: str, *, possessive: bool) -> str:
    """``text`` with each of the subject's terms (longest first; a Latin one as a whole word,
    with its "'s" when ``possessive``) replaced ``by``."""
    tail = "(?:['\u2019]s)?" if possessive else ""
    for term in sorted(subject, key=len, reverse=True):
        text = re.sub(rf"(?i)\b{re.escape(term)}{tail}\b" if term.isascii() else re.escape(term),
                      by, text)
    return text


def curated(hit: SearchHit) -> bool:
    """A note of ``MEMORY.md`` or an evergreen file (not a daily log, not a transcript)."""
    return hit.source == "memory" and dated_name(hit.path) is None


def subject_pool(question: str, cited: Sequence[list[str]],
          ) -> tuple[set[str], list[tuple[int, str]]]:
    """The question's subject, and (hit index, line) of the cited lines that name it."""
    subject = question_subject(question, [line for lines in cited for line in lines])
    # A name is named whole; words the lines share are a looser subject: a line holding most
    # of them is about it ("Launch slips: version 1.3" beside "Launch target is version 1.2").
    share = 1.0 if names_someone(question) else SHARED_TERMS
    return subject, [(k, line) for k, lines in enumerate(cited) for line in lines
                     if mentions(line, subject, share)] if subject else []


def with_curated(pool: Sequence[tuple[int, str]], hits: Sequence[SearchHit], subject: set[str],
                 curated_text: CuratedText | None) -> tuple[list[str], list[bool]]:
    """The pool's lines, then the curated lines naming the subject that no hit cites; and
    which of them are curated."""
    extra = uncited_curated(pool, subject, curated_text)
    return ([*(line for _, line in pool), *(c.text for c in extra)],
            [*(curated(hits[k]) for k, _ in pool), *(True for _ in extra)])


def uncited_curated(pool: Sequence[tuple[int, str]], subject: set[str],
                    curated_text: CuratedText | None) -> list[CuratedLine]:
    """The curated lines naming the subject that no line of the pool says (each once), up to
    :data:`MOST_LINES` lines with the pool's."""
    found: list[CuratedLine] = []
    if curated_text is None:
        return found
    seen = {_plain(line) for _, line in pool}
    for line in curated_text():
        if len(pool) + len(found) >= MOST_LINES:
            break
        if mentions(line.text, subject) and _plain(line.text) not in seen:
            seen.add(_plain(line.text))
            found.append(line)
    return found


def _plain(line: str) -> str:
    return " ".join(line.lstrip("-*+ ").split())
