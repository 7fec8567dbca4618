"""Which lines are about what a question asks about: its **subject**, whom or what it names
("Ada Park", "Kestrel"; a Chinese question's lead, "王芳"; else the words most cited lines
share), and the lines that name it: the hits' cited lines, the curated files' lines no hit
cites, and for a named subject its lines anywhere in memory (a question about how things are
with Ada is about all her lines, not only those the search ranked first: "王芳现在找谁理发"
ranks everyone's haircut lines above "王芳改去找老周剪头发了").

Shared by the questions that reorder a subject's lines: how things are now
(search/present_value.py) and what came before a value (search/earlier_value.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

from openclaw_memory.files.notes import DATE_STAMP
from openclaw_memory.files.workspace import dated_name, valid_date
from openclaw_memory.language.textsearch import STOP_WORDS, keyword_terms
from openclaw_memory.language.time_words import ASKING, AUXILIARIES, NOW, WHEN
from openclaw_memory.search.snippets import citation, clamp_snippet, with_source_line
from openclaw_memory.types import HitExplanation, SearchHit

__all__ = ["CJK_FUNCTION", "HAN", "HAN_NAME", "LABELLED", "LATIN_NAME", "MOST_LINES", "CuratedText",
           "PlacedLine", "SubjectText", "curated", "find_subject", "learned_on",
           "line_label",
           "lines_and_curated", "mentions", "name_terms", "named_text", "named_under",
           "names_someone", "other_names", "placed_day", "placed_hit", "question_subject",
           "subject_pool", "uncited_lines", "without_subject"]


@dataclass(frozen=True, slots=True)
class PlacedLine:
    """A line of a note, and where it is."""

    text: str
    path: str
    line: int
    """Its line number in the file (1-based)."""
    chunk_id: str
    """The indexed chunk it was read from."""


#: The lines of the curated files among the hits (read only when needed).
CuratedText = Callable[[], Sequence[PlacedLine]]
#: The lines of the notes holding every one of a subject's terms, newest file first.
SubjectText = Callable[[set[str]], Sequence[PlacedLine]]

#: The most lines naming the subject compared (the hits' first, then curated ones), and the
#: most distinct words of theirs embedded one by one (past it, sentences alone compare).
MOST_LINES = 80

#: Share of the cited lines holding some question word that must hold a word for it to be
#: the subject (when the question names nobody).
SUBJECT_SHARE = 0.6
#: Share of a shared-word subject's terms a line must hold to be about it.
SHARED_TERMS = 0.5

_NAME = re.compile(r"[^\W\d_][\w'\u2019-]*")
#: One Han character (the Chinese names, leads and values these modules read).
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_CJK_LEAD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")

#: CJK characters that ask or link rather than say what is asked about.
CJK_FUNCTION = frozenset("哪里什么谁怎样吗呢的了是在现目前如今当个")

#: The characters of the shortest Chinese name.
_CJK_NAME = 2
#: A question that begins with a pronoun ("我想...", "他现在...") names nobody to look for.
_CJK_PRONOUNS = frozenset("我你您他她它咱俺")
_POSSESSIVE = re.compile(r"['\u2019]s\b")


#: The first person, "I" ("I'm", "I'd"): capitalised, and nobody's name.
_I = re.compile(r"I(?:['\u2019]\w+)?$")


def _capitalised(question: str) -> tuple[list[str], list[str]]:
    """The question's capitalised words (its first word only when it is not a function word:
    "Where", "Which"; never "I"), as names and as acronyms ("API")."""
    named: list[str] = []
    acronyms: list[str] = []
    for i, word in enumerate(_NAME.findall(question)):
        word = re.sub(r"['\u2019]s$", "", word)
        if not word[0].isupper() or (i == 0 and word.lower() in STOP_WORDS) or _I.match(word):
            continue
        (acronyms if len(word) > 1 and word.isupper() else named).append(word)
    return named, acronyms


def _names(question: str) -> set[str]:
    """The terms of the question's capitalised words; acronyms only when nothing else is
    named."""
    named, acronyms = _capitalised(question)
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
    plain = WHEN.sub(" ", NOW.sub(" ", _POSSESSIVE.sub("", question)))
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
    names = _names(question)
    lower = _after_auxiliary(question)
    if lower and (not names or _acronyms_only(question)) and sum(
            mentions(line, lower) for line in lines) >= 2:
        # A project named in lower case ("harbor") is the grammatical subject, the word the
        # auxiliary introduces, and more whom the question asks about than an acronym
        # ("What CI does harbor use now?" took "CI" for the subject and kept GitHub Actions
        # above the move to Buildkite: the hand-written knowledge-update dev set's en27).
        return lower
    named = _identifiers(question)
    if len(names) == 1 and named and (
            sum(mentions(line, named) for line in lines) > sum(mentions(line, names) for line in lines)):
        # A name written as an identifier ("atlas-api", "web_v2") that more cited lines hold
        # than the question's one capitalised word is whom it asks about; the capitalised word
        # is what it asks: "Which Python version does atlas-api run on?"
        return named
    return names or _shared_subject(question, lines)


#: The word a question's auxiliary verb introduces, written in lower case: its grammatical
#: subject ("What CI does harbor use now?").
_AUXILIARY = re.compile(rf"^\W*(?i:{ASKING})\b[^?]{{0,40}}?\s"
                        rf"(?i:{AUXILIARIES})\s+(?:the\s+)?([a-z][\w-]*)\b")


def _after_auxiliary(question: str) -> set[str]:
    """The terms of a question's grammatical subject written in lower case (a pronoun or a
    function word names nobody)."""
    found = _AUXILIARY.match(question)
    if found is None or found.group(1) in STOP_WORDS:
        return set()
    return set(keyword_terms(found.group(1)))


def _acronyms_only(question: str) -> bool:
    """Whether every capitalised word a question names by is an acronym ("CI", "API")."""
    named, acronyms = _capitalised(question)
    return bool(acronyms) and not named


_IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+\b")


def _identifiers(question: str) -> set[str]:
    """The terms of the question's lower-case identifiers ("atlas-api", "web_v2")."""
    return {term for word in _IDENTIFIER.findall(question) for term in keyword_terms(word)}


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


def subject_pool(question: str, cited: Sequence[list[str]]) -> tuple[set[str], list[tuple[int, str]]]:
    """The question's subject, and (hit index, line) of the cited lines that name it."""
    subject = question_subject(question, [line for lines in cited for line in lines])
    # A name is named whole; words the lines share are a looser subject: a line holding most
    # of them is about it ("Launch slips: version 1.3" beside "Launch target is version 1.2").
    share = 1.0 if names_someone(question) else SHARED_TERMS
    if not subject:
        return subject, []
    aliases = other_names(subject, [line for lines in cited for line in lines])
    return subject, [(k, line) for k, lines in enumerate(cited)
                     for line in named_under(lines, subject, share, aliases)]


#: A person's or project's name as notes write it: one to three capitalised words, or two to
#: four Han characters.
LATIN_NAME = r"(?:[A-Z][\w'\u2019-]*\s?){1,3}"
HAN_NAME = r"[\u3400-\u4dbf\u4e00-\u9fff]{2,4}"
#: A name with another in brackets after it: "Li Na (李娜)", "Chen Yu (陈宇)", "周杰 (小周)",
#: brackets full-width or not.
_ALIASED = re.compile(rf"({LATIN_NAME}|{HAN_NAME})\s*[(\uff08]\s*({LATIN_NAME}|{HAN_NAME})"
                      r"\s*[)\uff09]")


def name_terms(name: str) -> frozenset[str]:
    """A name's terms as the subject holds them: a Latin name's keyword terms, a Han name
    whole."""
    name = name.strip()
    return frozenset(keyword_terms(name)) if name.isascii() else frozenset({name} if name else ())


def other_names(subject: set[str], lines: Sequence[str]) -> list[frozenset[str]]:
    """The subject's other names the ``lines`` give, as a name with the other in brackets
    ("Li Na (李娜)" for 李娜, and for Li Na): notes in two languages name one person both ways."""
    found: list[frozenset[str]] = []
    for line in lines:
        for pair in _ALIASED.finditer(line):
            first, second = name_terms(pair.group(1)), name_terms(pair.group(2))
            other = second if first == subject else first if second == subject else None
            if other and other != subject and other not in found:
                found.append(other)
    return found


def named_under(lines: Sequence[str], subject: set[str], share: float = 1.0,
                aliases: Sequence[frozenset[str]] = ()) -> list[str]:
    """The ``lines`` naming the subject (or one of its ``aliases``: :func:`other_names`), or
    under a Markdown heading that names it: a section of ``MEMORY.md`` headed "## Orchard" is
    about Orchard line by line ("- Sponsor: Helga"), as "## User (Priya)" is about Priya; a
    heading naming no one ends it."""
    flags = _named_flags(lines, subject, share, aliases)
    return [line for line, named in zip(lines, flags, strict=True) if named]


#: The label a line begins with, after a bullet and a bracketed stamp: a conversation's
#: speaker ("- [D9:10] Nate: I love fantasy movies") or a note's key ("- Work laptop: ThinkPad
#: X1", a full-width colon too).
LABELLED = re.compile(r"^\W*(?:\[[^\]]*\]\s*)?([^\W\d_][\w .'\u2019-]{0,40}?)\s*(?::\s|\uff1a)")
#: A person's full name as a label: "- Tom Reyes: Maya's colleague, lives in Leeds".
_PERSON_NAME = re.compile(r"(?:[A-Z][\w'\u2019-]*\s){1,2}[A-Z][\w'\u2019-]*")


def line_label(line: str, subject: set[str]) -> str:
    """The label ``line`` begins with, lower case, without the subject's name ("work laptop"
    of "- Work laptop: ThinkPad X1"); "" when it has none, when the label is only the name,
    or is a person's full name (whom the line is about, not which of their facts)."""
    found = LABELLED.match(line)
    if found is None or _PERSON_NAME.fullmatch(found.group(1)):
        return ""
    label = _replace_subject(found.group(1), subject, " ", possessive=True)
    return " ".join(label.lower().split())


def _named_flags(lines: Sequence[str], subject: set[str], share: float = 1.0,
                 aliases: Sequence[frozenset[str]] = ()) -> list[bool]:
    flags: list[bool] = []
    headed = False
    for line in lines:
        named = mentions(line, subject, share) or any(mentions(line, set(alias))
                                                      for alias in aliases)
        if line.lstrip().startswith("#"):
            headed = named
        flags.append(named or headed)
    return flags


def find_subject(question: str, cited: Sequence[list[str]], subject_text: SubjectText | None,
                 ) -> tuple[set[str], list[tuple[int, str]]]:
    """:func:`subject_pool`; a Chinese question's lead that no two cited lines hold is looked
    for in memory (``subject_text``): the search may have cited nobody's lines but others'."""
    subject, pool = subject_pool(question, cited)
    lead = _CJK_LEAD.match(question.strip())
    if subject or subject_text is None or lead is None or len(lead.group(0)) < _CJK_NAME:
        return subject, pool
    probe = lead.group(0)[:_CJK_NAME]
    if NOW.search(probe) or any(ch in CJK_FUNCTION or ch in _CJK_PRONOUNS for ch in probe):
        return subject, pool
    subject = _cjk_subject(question, [line.text for line in subject_text({probe})])
    return subject, [(k, line) for k, lines in enumerate(cited)
                     for line in named_under(lines, subject)] if subject else []


def uncited_lines(pool: Sequence[tuple[int, str]], hits: Sequence[SearchHit], subject: set[str],
                  curated_text: CuratedText | None,
                  subject_text: SubjectText | None) -> list[PlacedLine]:
    """The curated lines naming the subject that no line of the pool says, then (a named
    subject) its lines anywhere that no hit cites, newest file first; up to
    :data:`MOST_LINES` lines with the pool's."""
    found = _uncited_curated(pool, subject, curated_text)
    if subject_text is None or not subject:
        return found
    seen = {(hits[k].path, _plain(line)) for k, line in pool}
    said = {_plain(line.text) for line in found} | {_plain(line) for k, line in pool
                                                     if curated(hits[k])}
    for line in subject_text(subject):
        if len(pool) + len(found) >= MOST_LINES:
            break
        plain = _plain(line.text)
        is_curated = dated_name(line.path) is None
        if ((line.path, plain) in seen or (is_curated and plain in said)
                or not mentions(line.text, subject)):
            continue
        seen.add((line.path, plain))
        said.add(plain)
        found.append(line)
    return found


def lines_and_curated(pool: Sequence[tuple[int, str]], hits: Sequence[SearchHit],
                      extra: Sequence[PlacedLine]) -> tuple[list[str], list[bool]]:
    """The pool's lines, then ``extra``'s (lines no hit cites); and which of them are curated
    (a curated file's: ``MEMORY.md`` or an evergreen note)."""
    return ([*(line for _, line in pool), *(line.text for line in extra)],
            [*(curated(hits[k]) for k, _ in pool), *(dated_name(line.path) is None for line in extra)])


def _uncited_curated(pool: Sequence[tuple[int, str]], subject: set[str],
                    curated_text: CuratedText | None) -> list[PlacedLine]:
    """The curated lines naming the subject that no line of the pool says (each once), up to
    :data:`MOST_LINES` lines with the pool's."""
    found: list[PlacedLine] = []
    if curated_text is None:
        return found
    seen = {_plain(line) for _, line in pool}
    lines = list(curated_text())
    by_file: dict[str, list[PlacedLine]] = {}
    for line in lines:
        by_file.setdefault(line.path, []).append(line)
    named = {id(line) for file_lines in by_file.values()
             for line, flag in _file_flags(file_lines, subject) if flag}
    for line in lines:
        if len(pool) + len(found) >= MOST_LINES:
            break
        if id(line) in named and _plain(line.text) not in seen:
            seen.add(_plain(line.text))
            found.append(line)
    return found


def _file_flags(lines: Sequence[PlacedLine], subject: set[str]) -> list[tuple[PlacedLine, bool]]:
    """One file's lines in their order, each with whether it names the subject or is under a
    heading that does."""
    ordered = sorted(lines, key=lambda line: line.line)
    return list(zip(ordered, _named_flags([line.text for line in ordered], subject), strict=True))


def _plain(line: str) -> str:
    return " ".join(line.lstrip("-*+ ").split())


def placed_hit(place: PlacedLine, score: float, day: str, *, cited: bool) -> SearchHit:
    """A hit citing the line ``place`` alone (``cited``: with a citation, as the search's
    other hits), scored ``score`` and dated ``day`` ("" when undated)."""
    cite = citation(place.path, place.line, place.line)
    text = clamp_snippet(place.text)
    return SearchHit(place.path, place.line, place.line, score,
                     with_source_line(text, cite) if cited else text, "memory",
                     cite if cited else None, place.chunk_id,
                     HitExplanation(None, None, None, None, score, surfaced=True), as_of=day or None)


def learned_on(path: str, text: str) -> date | None:
    """The day a note's ``text`` was learned: a daily log's date (its file name), else the
    ``(as of YYYY-MM-DD)`` stamp in the text; None when the notes do not say."""
    return dated_name(path) or valid_date(DATE_STAMP.search(text))


def placed_day(line: PlacedLine) -> str:
    """:func:`learned_on` of a line, ISO; "" (the oldest) when undated."""
    day = learned_on(line.path, line.text)
    return day.isoformat() if day else ""
