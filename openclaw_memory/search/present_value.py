"""A question about how things are ("Where does Ada Park live now?", "Where does the user
live?"): the newest hit that answers it first.

What the question is about has two parts: its **subject** (whom or what it names: "Ada Park",
"Kestrel"; a Chinese question's lead, "王芳"; else the words most cited lines share) and the
**attribute** asked for (where she lives). Every cited line naming the subject is a
candidate, with the curated lines naming it that no hit cites (they tell which attributes the
notes keep). With the subject's name taken out:

* the lines are grouped by attribute (search/attribute_groups.py: around the curated lines,
  by how alike the lines are in sentence and word, moved by :data:`CUE_WEIGHT` when both hold
  cue words of one attribute, or only of different ones: search/attributes.py);
* the group holding the line that fits the question best answers it: fit is closeness in
  meaning, with a bonus (:data:`STEM_BONUS`) for a shared word stem ("lives" / "live") or CJK
  character (住);
* when that line's cue words name only other attributes than the question's ("brought home
  a beagle" for the city one calls home), the best-fitting line of the others takes its place;
  when every line's do ("became keto" for where one lives), the notes hold no answer and
  nothing moves.

The answers come first, newest first (a daily log's date or the line's ``(as of ...)``
stamp; an undated curated line counts as the oldest: a dated note that says otherwise is newer
evidence), the older ones marked ``superseded_by`` the newest; the other hits follow in their
order. Over a conversation's logs less moves (:func:`present_value_first`). Measured by
benchmarks/knowledge_update.py on six template families (which were built on, checked on,
chosen with and never tuned on: its docstring).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from openclaw_memory.embeddings.base import normalize_rows
from openclaw_memory.files.notes import DATE_STAMP
from openclaw_memory.language.textsearch import STOP_WORDS
from openclaw_memory.language.time_words import ASKING, NOW, PAST, PRESENT_AUXILIARIES
from openclaw_memory.search.attribute_groups import attribute_groups, content_words, line_alike
from openclaw_memory.search.attributes import attributes_of, hinted_attributes
from openclaw_memory.search.corroboration import corroborates
from openclaw_memory.search.pronouns import about_someone_else
from openclaw_memory.search.subject_lines import (
    CJK_FUNCTION,
    HAN,
    LABELLED,
    CuratedText,
    PlacedLine,
    SubjectText,
    curated,
    find_subject,
    line_label,
    lines_and_curated,
    named_text,
    names_someone,
    placed_day,
    placed_hit,
    question_subject,
    subject_pool,
    uncited_lines,
    without_subject,
)
from openclaw_memory.search.user_subject import about_user, user_lines, user_names
from openclaw_memory.types import SearchHit

__all__ = ["ANSWER_SHARE", "CUE_WEIGHT", "NEWEST_SHOWN", "Compared", "CuratedText", "asks_now",
           "asks_present", "compare_lines", "conversation_only", "curated", "present_value_first",
           "question_subject", "unit_rows"]

Embed = Callable[[list[str]], Any]
DateOf = Callable[[SearchHit, str], "str | None"]

#: Over a conversation's logs, a line answering a "now" question fits it at least this share
#: as well as the best line does (a speaker's lines are many, and one group).
ANSWER_SHARE = 0.7
#: The most distinct words of the subject's lines embedded one by one (past it, sentences
#: alone compare).
MOST_WORDS = 600
#: With ``direct`` (the user's lines: every line of the hits, named or not), how alike a dated
#: line must be to the best answer itself, in meaning and words (no cue word: those read a line
#: in the narrow context of a name it says), to answer with it, not only to its group on
#: average: a line no name ties to the subject can join a group of many ("Lunch was noodles"
#: beside "Files a weekly report on Fridays"). Knowledge-update dev set, current@1 / stale
#: above current / unchanged@1: 0.3: 73.3 / 13.3 / 76.7; 0.35: 76.7 / 13.3 / 76.7; 0.4: 76.7 /
#: 13.3 / 80.0 (between the groups' 0.25 and the curated lines' 0.55).
DIRECT_ALIKE = 0.4
#: What two lines' shared (or only different) attribute cue words add to (or take from) their
#: similarity when they are grouped by attribute.
CUE_WEIGHT = 0.2
#: How many of the subject's newest statements that answer nothing follow the answers to a
#: "now" question (knowledge-update dev set: the current value's line shown 93.3 -> 96.7 %
#: with 3, unchanged with 1 or 2; no @1 figure moves, the answers stay first).
NEWEST_SHOWN = 3
#: The anchor's bonus for sharing a word stem with the question.
STEM_BONUS = 0.2
#: A question is a sentence: longer text (a pasted dialogue) is never read as asking "now".
_QUESTION_WORDS = 30
#: A measure word after which, which, this, that, each: 家 in 哪家公司 ("which company") is
#: no home, 个 in 哪个城市 no thing ("张伟家里新来了一只柯基" shared 家 with the company asked).
_COUNTED = re.compile(r"(?<=[哪这那几每])[家个位只条种所]")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]{3,}")


def asks_now(question: str) -> bool:
    """Whether ``question`` asks for the current value of something."""
    return _question_words(question) <= _QUESTION_WORDS and bool(NOW.search(question))


#: A question in the present tense: a question word or auxiliary, then a present auxiliary
#: ("Where does", "Is ... is"; data/time_words.json: "asking", "present"); or a question word
#: asking for the doer of a verb in the present ("Who owns Kestrel?", "What monitors the API?").
_PRESENT = re.compile(rf"(?i)^\W*(?:{ASKING}|{PRESENT_AUXILIARIES})\b.*\b(?:{PRESENT_AUXILIARIES})\b"
                      rf"|['\u2019]s\b|^\W*(?:{ASKING})\s+[a-z]{{2,}}(?<![su])s\b")
_CJK_QUESTION = re.compile(r"哪|什么|谁|吗|几|多少|怎么|[\uff1f?]")


def asks_present(question: str) -> bool:
    """Whether ``question`` asks how things are, without saying "now": "Where does the user
    live?", "王芳住在哪里" (not a question about the past, nor a statement)."""
    if _question_words(question) > _QUESTION_WORDS or PAST.search(question):
        return False
    if HAN.search(question) and not re.search(r"[A-Za-z]{3,}", question):
        return bool(_CJK_QUESTION.search(question))
    return bool(_PRESENT.search(question)) and question.rstrip().endswith("?")


def _question_words(question: str) -> int:
    # CJK text has no spaces: two characters count as a word (a pasted Chinese dialogue
    # with one 现在 in it is no question).
    return len(question.split()) + len(HAN.findall(question)) // 2


def _stems(text: str, subject: set[str]) -> set[str]:
    """Word stems (four letters) and CJK characters of ``text`` beyond its subject and the
    words any question has: "live" and "lives" share one, "住在哪里" and "住在北京" share 住."""
    plain = _COUNTED.sub(" ", NOW.sub(" ", DATE_STAMP.sub("", text)))
    words = {w.lower() for w in _LATIN_WORD.findall(plain)}
    stems = {w[:4] for w in words if w not in STOP_WORDS and w not in subject}
    named = "".join(subject)
    return stems | {c for c in HAN.findall(plain) if c not in named and c not in CJK_FUNCTION}


def unit_rows(vectors: Any) -> np.ndarray:
    """Embedded rows L2-normalised; a row with no usable vector compares as 0 with all."""
    return np.nan_to_num(normalize_rows(vectors), nan=0.0)


@dataclass(frozen=True, slots=True)
class Compared:
    """A subject's lines compared with a question and with each other."""

    fit: np.ndarray
    """Each line's closeness in meaning to the question, with :data:`STEM_BONUS`."""
    wanted: frozenset[str]
    """The attributes the question's cue words name."""
    said: list[frozenset[str]]
    """The attributes each line's cue words name."""
    hinted: list[frozenset[str]]
    """The attributes each line's words hint at."""
    groups: list[list[int]]
    """The lines grouped by attribute (search/attribute_groups.py)."""
    alike: np.ndarray
    """The lines' similarity to each other, moved by their cue words, that grouped them."""
    similar: np.ndarray
    """The lines' similarity to each other in meaning and words alone (no cue word)."""


def compare_lines(question: str, subject: set[str], lines: Sequence[str], kept: Sequence[bool],
                  embed: Embed) -> Compared | None:
    """The subject's ``lines`` compared (None: the embedder failed); ``kept``: which lines
    are curated."""
    question_text = without_subject(question, subject)
    texts = [without_subject(line, subject) for line in lines]
    words = [content_words(text) for text in texts]
    vocabulary = sorted({word for line in words for word in line})
    if len(vocabulary) > MOST_WORDS:  # lines this many compare by their sentences alone
        vocabulary = []
    try:
        rows = unit_rows(embed([question_text, *texts, *vocabulary]))
    except Exception:  # an embedding outage must not fail a search that already has its hits
        return None
    unit = rows[:len(texts) + 1]
    word_rows = dict(zip(vocabulary, rows[len(texts) + 1:], strict=True))
    wanted = attributes_of(question_text)
    said = [attributes_of(named_text(line, subject)) for line in lines]
    asked = _stems(question, subject)
    shares = np.array([bool(_stems(line, subject) & asked) for line in lines])
    hinted = [hinted_attributes(named_text(line, subject)) for line in lines]
    # A question naming no attribute the cue words know is about one they do not: words that
    # would set its lines apart are then as likely its own ("moved the mobile contract over
    # to Three" read as a home). They may still bring lines of one attribute together.
    apart = said if wanted else [frozenset()] * len(lines)
    similar = line_alike(unit[1:], words, word_rows)
    alike = _alike(similar, apart, hinted)
    return Compared(unit[1:] @ unit[0] + STEM_BONUS * shares, wanted, said, hinted,
                    attribute_groups(alike, kept, [line_label(line, subject) for line in lines]),
                    alike, similar)


def _answers(question: str, subject: set[str], lines: Sequence[str], kept: Sequence[bool],
             embed: Embed, *, close: bool = False, direct: bool = False) -> list[bool] | None:
    """Which of the subject's ``lines`` answer the question (None: the embedder failed);
    ``kept``: which lines are curated; ``close``: only lines fitting the question at least
    :data:`ANSWER_SHARE` as well as the best do."""
    compared = compare_lines(question, subject, lines, kept, embed)
    if compared is None:
        return None
    fit, wanted, said = compared.fit, compared.wanted, compared.said
    if wanted and all(hint and not hint & wanted for hint in compared.hinted):
        return [False] * len(lines)  # every line is about something else: nothing answers
    best = int(np.argmax(fit))
    if wanted and said[best] and not said[best] & wanted and not kept[best]:
        # The dated line that fits best names only other attributes than the question's
        # ("brought home a beagle" for the city one calls home): the best of the lines that
        # do not is the answer's. Never a curated line: the notes' own statement of a fact is
        # read in people's words that cue words misread ("for a living" as a home, "nurse at
        # the Royal Infirmary" beside "lives in Edinburgh" as no work); on the hand-written
        # knowledge-update dev set unchanged facts first 56.7 -> 63.3 % with curated lines
        # kept, current values 76.7 -> 73.3 (the one lost had been won by two misreadings).
        other = np.array([bool(cues) and not cues & wanted and not kept[i]
                          for i, cues in enumerate(said)])
        if other.all():
            return [False] * len(lines)
        fit = np.where(other, -np.inf, fit)
    answering = max(compared.groups, key=lambda group: float(fit[group].max()))
    near = fit >= ANSWER_SHARE * fit.max() if close else np.ones(len(lines), dtype=bool)
    if direct:
        top = max(answering, key=lambda i: float(fit[i]))
        # (in meaning alone: cue words read a line in the narrow context of a name it says)
        near &= np.array(kept) | (compared.similar[:, top] >= DIRECT_ALIKE)
        near[top] = True
    answers = [i in answering and bool(near[i]) for i in range(len(lines))]
    first = max((i for i in range(len(lines)) if answers[i]), key=lambda i: float(fit[i]),
                default=None)
    if first is not None and kept[first]:
        # A dated line saying again what the curated answer names is news of it, not a new
        # value (search/corroboration.py).
        answers = [answer and (kept[i] or not corroborates(lines[i], lines[first], question,
                                                            subject))
                   for i, answer in enumerate(answers)]
    return answers


def _alike(alike: np.ndarray, said: Sequence[frozenset[str]],
           hinted: Sequence[frozenset[str]]) -> np.ndarray:
    """Lines' similarity to each other (``alike``), moved by :data:`CUE_WEIGHT`: up when
    their cue words or hints (``hinted``) share an attribute, down when both hold cue words
    (``said``) and those name only different attributes (a hint never sets lines apart)."""
    shift = np.zeros((len(said), len(said)))
    for i, (a, a_hint) in enumerate(zip(said, hinted, strict=True)):
        for j, (b, b_hint) in enumerate(zip(said, hinted, strict=True)):
            if a_hint & b_hint:
                shift[i, j] = CUE_WEIGHT
            elif a and b:
                shift[i, j] = -CUE_WEIGHT
    return np.asarray(alike + shift)


def _spoken(pool: Sequence[tuple[int, str]], hits: Sequence[SearchHit],
            cited: Sequence[list[str]]) -> bool:
    """Whether the subject's lines are a conversation's: one is a transcript's, or most are
    turns. A turn names its speaker ("Nate: ...") who speaks again among the hits' lines.
    Notes label their lines too ("Spike: NATS vs Kafka", "Architecture review: dropped
    Kafka"), each with another label; read as a conversation, a present question's answers
    in them could not move (the hand-written knowledge-update dev set's en11)."""
    if any(hits[k].source == "sessions" for k, _ in pool):
        return True  # an agent's own transcript: its turns are never dated facts
    labels = Counter(found.group(1).lower() for lines in cited for line in lines
                     if (found := LABELLED.match(line)))

    def turn(line: str) -> bool:
        found = LABELLED.match(line)
        return found is not None and labels[found.group(1).lower()] > 1
    return 2 * sum(turn(line) for _, line in pool) > len(pool)


def conversation_only(question: str, cited: Sequence[list[str]],
                      hits: Sequence[SearchHit]) -> bool:
    """Whether the lines naming the question's subject are a conversation's and no hit is
    curated: a question without "now" then keeps its order (nothing may move)."""
    return _spoken(subject_pool(question, cited)[1], hits, cited) and not any(map(curated, hits))


def present_value_first(hits: Sequence[SearchHit], question: str, cited: Sequence[list[str]],
                        embed: Embed, date_of: DateOf, *, now: bool = True,
                        curated_text: CuratedText | None = None,
                        subject_text: SubjectText | None = None) -> tuple[SearchHit, ...]:
    """``hits`` with those answering the present-value ``question`` first, newest first, the
    older answers marked; unchanged when no line names the question's subject, when fewer
    than two do (nothing to choose between) or the embedder fails. ``cited``: each hit's
    cited lines; ``date_of``: the ISO day a hit's line was learned, or None.

    Where the subject's lines are a conversation's (most are "Nate: ..."), a question without
    ``now`` only lets an answer from a curated file yield, to the newest dated answer, which
    moves right above it, and the logs keep their order (a conversation log names its speakers
    on every line: LoCoMo dev recall@1 63.1 -> 49.9 when they were ordered newest first);
    with ``now``, only lines close to the question answer (:data:`ANSWER_SHARE`: a speaker's
    lines all group together; LoCoMo dev's "How does Andrew feel about his current work?"
    lost its gold lines when they all moved, multi-hop recall@6 57.4 -> 56.8).

    ``curated_text``: every line of the curated files among the hits; those naming the subject
    that no hit cites still tell which attributes the notes keep (search/attribute_groups.py:
    a hit's passage of ``MEMORY.md`` may hold where she lives but not whom she dates).
    ``subject_text``: a named subject's lines anywhere in memory; the newest answer among
    them that no hit cites becomes the first hit (outside a conversation's logs)."""
    subject, pool = find_subject(question, cited, subject_text)
    # The curated lines are read once: the user's name, then the subject's lines no hit cites.
    read = _read_once(curated_text) if curated_text is not None else None
    users = user_names(line.text for line in read()) if read is not None else frozenset()
    mine = about_user(question, subject, users)
    if mine:
        # The user's own notes rarely name them: every line of the hits that says something
        # is theirs (search/user_subject.py).
        subject, pool = (subject if subject <= users else set(users)), user_lines(cited)
    if pool and pool[0][0] != 0 and not names_someone(question):
        # Words the lines share are a weaker subject than a name: unless the best hit holds
        # them, nothing moves. The best hit may say them in the other language ("daughter"
        # beside 女儿), or be about the question in words the subject's lines lack (the
        # bundled Kestrel notes' "current" questions: MRR 57.5 -> 62.5 with this rule).
        return tuple(hits)
    said = _spoken(pool, hits, cited)
    spoken = said and not now
    if spoken and not any(map(curated, hits)):
        return tuple(hits)  # a conversation's logs alone: nothing may move
    named = names_someone(question) and not said and bool(hits)
    extra = uncited_lines(pool, hits, subject, read,
                          subject_text if named else None) if subject else []
    pool, extra, lines, kept = _without_others(pool, hits, extra, subject)
    # One cited line can still be told apart from the subject's curated lines no hit cites.
    judged = _answers(question, subject, lines, kept, embed,
                      close=said and now, direct=mine) if len(lines) >= 2 else None
    if judged is None or not any(judged):
        return tuple(hits)
    day: dict[int, str] = {}  # each answering hit: the day of its newest answering line
    for (k, line), answer in zip(pool, judged[:len(pool)], strict=True):  # (then extra's)
        if answer:
            day[k] = max(day.get(k, ""), date_of(hits[k], line) or "")
    # Asked "now", the subject's newest statements follow the answers, dated: what the notes
    # said last is in front of the model even where no answer was recognised in it.
    recent = _newest_named(hits, pool, day, date_of) if now and not said else []
    surfaced = _newest_uncited(extra, judged[len(pool):], max(day.values(), default=None))
    if surfaced is not None and named:  # (a question naming a period never gets here)
        return _with_surfaced(hits, surfaced, day, recent)
    if not day:
        return tuple(hits)
    newest = sorted(day, key=lambda k: (day[k], -k), reverse=True)
    older = [k for k in newest[1:] if day[k] < day[newest[0]]]
    if spoken:
        older = [k for k in older if curated(hits[k])]
        order = _newest_above_first(len(hits), newest[0], older)
    else:
        order = [*newest, *recent, *(k for k in range(len(hits)) if k not in day and k not in recent)]
    top = hits[newest[0]]
    marked = {k: top.citation or top.path for k in older}
    # An answer is dated by its answering line (an undated curated line: None).
    return tuple(replace(hits[k], as_of=(day[k] or None) if k in day else hits[k].as_of,
                         superseded_by=marked.get(k)) for k in order)


def _without_others(pool: list[tuple[int, str]], hits: Sequence[SearchHit],
                    extra: list[PlacedLine], subject: set[str],
                    ) -> tuple[list[tuple[int, str]], list[PlacedLine], list[str], list[bool]]:
    """The pool and ``extra`` without the lines about someone else (search/pronouns.py), and
    the lines they leave with which of them are curated (:func:`lines_and_curated`)."""
    lines, kept = lines_and_curated(pool, hits, extra)
    other = about_someone_else(lines, kept, subject)
    if not any(other):
        return pool, extra, lines, kept
    stay = [not out for out in other]
    return ([line for line, ok in zip(pool, stay, strict=False) if ok],
            [line for line, ok in zip(extra, stay[len(pool):], strict=True) if ok],
            [line for line, ok in zip(lines, stay, strict=True) if ok],
            [flag for flag, ok in zip(kept, stay, strict=True) if ok])


def _read_once(reader: CuratedText) -> CuratedText:
    lines: list[Sequence[PlacedLine]] = []

    def read() -> Sequence[PlacedLine]:
        if not lines:
            lines.append(reader())
        return lines[0]
    return read


def _newest_uncited(extra: Sequence[PlacedLine], answers: Sequence[bool],
                    cited_day: str | None) -> tuple[PlacedLine, str] | None:
    """The newest answering line no hit cites, and its day, when it is newer than every
    answering line a hit cites (``cited_day``: theirs, None when none answers)."""
    best: tuple[PlacedLine, str] | None = None
    for line, answer in zip(extra, answers, strict=True):
        day = placed_day(line)
        if answer and day and (best is None or day > best[1]):
            best = (line, day)
    if best is None or (cited_day is not None and best[1] <= cited_day):
        return None
    return best


def _newest_named(hits: Sequence[SearchHit], pool: Sequence[tuple[int, str]],
                  day: dict[int, str], date_of: DateOf) -> list[int]:
    """The :data:`NEWEST_SHOWN` dated hits naming the subject that do not answer, newest
    first."""
    dated: dict[int, str] = {}
    for k, line in pool:
        when = date_of(hits[k], line)
        if k not in day and when:
            dated[k] = max(dated.get(k, ""), when)
    return sorted(dated, key=lambda k: (dated[k], -k), reverse=True)[:NEWEST_SHOWN]


def _with_surfaced(hits: Sequence[SearchHit], surfaced: tuple[PlacedLine, str],
                   day: dict[int, str], recent: Sequence[int] = ()) -> tuple[SearchHit, ...]:
    """The newest answer, a line no hit cited, as the first hit; the hits that answer
    (older) next, newest first and marked superseded by it; then ``recent`` (the subject's
    newest statements); the others as they were."""
    place, newest_day = surfaced
    # Scored as the best hit it is ranked above: it answers what they answered.
    score = max((hits[k].score for k in day), default=hits[0].score)
    top = placed_hit(place, score, newest_day, cited=hits[0].citation is not None)
    older = sorted(day, key=lambda k: (day[k], -k), reverse=True)
    rest = [*recent, *(k for k in range(len(hits)) if k not in day and k not in recent)]
    return (top, *(replace(hits[k], as_of=day[k] or hits[k].as_of,
                           superseded_by=top.citation or top.path) for k in older),
            *(hits[k] for k in rest))


def _newest_above_first(count: int, newest: int, older: Sequence[int]) -> list[int]:
    """Positions ``0..count-1`` with ``newest`` moved right above the first of ``older`` when
    it ranked below it; the rest keep their order."""
    order = list(range(count))
    if older and newest > min(older):
        order.remove(newest)
        order.insert(order.index(min(older)), newest)
    return order
