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
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from openclaw_memory.embeddings.base import normalize_rows
from openclaw_memory.files.notes import DATE_STAMP
from openclaw_memory.files.workspace import dated_name
from openclaw_memory.search.attribute_groups import attribute_groups, content_words, line_alike
from openclaw_memory.search.attributes import attributes_of, hinted_attributes
from openclaw_memory.search.textsearch import STOP_WORDS, keyword_terms
from openclaw_memory.types import SearchHit

__all__ = ["ANSWER_SHARE", "CUE_WEIGHT", "CuratedText", "asks_now", "asks_present", "conversation_only",
           "curated", "present_value_first", "question_subject"]

Embed = Callable[[list[str]], Any]
#: The lines of the curated files among the hits (read only when needed).
CuratedText = Callable[[], Sequence[str]]
DateOf = Callable[[SearchHit, str], "str | None"]

#: Over a conversation's logs, a line answering a "now" question fits it at least this share
#: as well as the best line does (a speaker's lines are many, and one group).
ANSWER_SHARE = 0.7
#: The most lines naming the subject compared (the hits' first, then curated ones), and the
#: most distinct words of theirs embedded one by one (past it, sentences alone compare).
MOST_LINES = 80
MOST_WORDS = 600
#: What two lines' shared (or only different) attribute cue words add to (or take from) their
#: similarity when they are grouped by attribute.
CUE_WEIGHT = 0.2
#: Share of the cited lines holding some question word that must hold a word for it to be
#: the subject (when the question names nobody).
SUBJECT_SHARE = 0.6
#: Share of a shared-word subject's terms a line must hold to be about it.
SHARED_TERMS = 0.5
#: The anchor's bonus for sharing a word stem with the question.
STEM_BONUS = 0.2
#: Words by which a question asks for the present value ("now"): its answers come first,
#: newest first, over any daily files.
NOW = re.compile(r"(?i)\b(?:now|currently|current|these days|nowadays|at the moment|at present|"
                 r"any ?more|latest|most recent(?:ly)?)\b|现在|目前|如今|当前|眼下")
#: Phrases saying when, not what: never a question's subject.
_WHEN = re.compile(r"(?i)\b(?:(?:this|next|last|every|each|the)\s+(?:week|month|year|day|morning|"
                   r"afternoon|evening|weekend|quarter|sprint)|today|tonight|tomorrow|yesterday|"
                   r"weekly|daily|monthly)\b")
#: A question is a sentence: longer text (a pasted dialogue) is never read as asking "now".
_QUESTION_WORDS = 30
_NAME = re.compile(r"[^\W\d_][\w'\u2019-]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_CJK_LEAD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]{3,}")
#: CJK characters that ask or link rather than say what is asked about.
_CJK_FUNCTION = frozenset("哪里什么谁怎样吗呢的了是在现目前如今当个")


def asks_now(question: str) -> bool:
    """Whether ``question`` asks for the current value of something."""
    return _question_words(question) <= _QUESTION_WORDS and bool(NOW.search(question))


#: Words by which a question asks about the past ("Where did she live before Berlin?").
_PAST = re.compile(r"(?i)\b(?:did|was|were|had|used to|before|previously|formerly|originally|"
                   r"at first|first|earlier|ago|last (?:year|month|week|time)|back then|former)"
                   r"\b|以前|之前|过去|曾经|原来|当时|那时|从前|上次")
#: A question in the present tense: a question word, then a present form of be/do/have; or
#: "who" / "what" asking for the doer of a verb in the present ("Who owns Kestrel?", "What
#: monitors the API?").
_PRESENT = re.compile(r"(?i)^\W*(?:where|what|which|who|whom|whose|how|when|is|are|does|do|has|"
                      r"have)\b.*\b(?:is|are|does|do|has|have)\b|['\u2019]s\b|"
                      r"^\W*(?:who|what)\s+[a-z]{2,}(?<![su])s\b")
#: A line of a conversation: "- [D9:10] Nate: I love fantasy movies", "Bart: ...".
_SPOKEN = re.compile(r"^\W*(?:\[[^\]]*\]\s*)?[^\W\d_][\w .'-]{0,40}:\s")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
_CJK_QUESTION = re.compile(r"哪|什么|谁|吗|几|多少|怎么|[\uff1f?]")


def asks_present(question: str) -> bool:
    """Whether ``question`` asks how things are, without saying "now": "Where does the user
    live?", "王芳住在哪里" (not a question about the past, nor a statement)."""
    if _question_words(question) > _QUESTION_WORDS or _PAST.search(question):
        return False
    if _CJK.search(question) and not re.search(r"[A-Za-z]{3,}", question):
        return bool(_CJK_QUESTION.search(question))
    return bool(_PRESENT.search(question)) and question.rstrip().endswith("?")


def _question_words(question: str) -> int:
    # CJK text has no spaces: two characters count as a word (a pasted Chinese dialogue
    # with one 现在 in it is no question).
    return len(question.split()) + len(_CJK.findall(question)) // 2


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
        if NOW.search(start) or (best and start[-1] in _CJK_FUNCTION):
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


def _named(question: str) -> bool:
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


def _mentions(line: str, subject: set[str], share: float = 1.0) -> bool:
    """Whether ``line`` names the subject: at least ``share`` of its terms, each as a word
    (CJK: as written)."""
    held = sum(bool(re.search(rf"(?i)\b{re.escape(term)}\b", line)) if term.isascii()
               else term in line for term in subject)
    return held >= share * len(subject)


def _without(text: str, subject: set[str]) -> str:
    """``text`` without the subject's terms, the "now" words and the date stamp."""
    out = _replace_subject(NOW.sub(" ", DATE_STAMP.sub("", text)), subject, " ", possessive=True)
    return " ".join(out.split()) or "-"


def _named_text(text: str, subject: set[str]) -> str:
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


def _stems(text: str, subject: set[str]) -> set[str]:
    """Word stems (four letters) and CJK characters of ``text`` beyond its subject and the
    words any question has: "live" and "lives" share one, "住在哪里" and "住在北京" share 住."""
    plain = NOW.sub(" ", DATE_STAMP.sub("", text))
    words = {w.lower() for w in _LATIN_WORD.findall(plain)}
    stems = {w[:4] for w in words if w not in STOP_WORDS and w not in subject}
    named = "".join(subject)
    return stems | {c for c in _CJK.findall(plain) if c not in named and c not in _CJK_FUNCTION}


def curated(hit: SearchHit) -> bool:
    """A note of ``MEMORY.md`` or an evergreen file (not a daily log, not a transcript)."""
    return hit.source == "memory" and dated_name(hit.path) is None


def unit_rows(vectors: Any) -> np.ndarray:
    """Embedded rows L2-normalised; a row with no usable vector compares as 0 with all."""
    return np.nan_to_num(normalize_rows(vectors), nan=0.0)


def _answers(question: str, subject: set[str], lines: Sequence[str], kept: Sequence[bool],
             embed: Embed, *, close: bool = False) -> list[bool] | None:
    """Which of the subject's ``lines`` answer the question (None: the embedder failed);
    ``kept``: which lines are curated; ``close``: only lines fitting the question at least
    :data:`ANSWER_SHARE` as well as the best do."""
    question_text = _without(question, subject)
    texts = [_without(line, subject) for line in lines]
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
    said = [attributes_of(_named_text(line, subject)) for line in lines]
    asked = _stems(question, subject)
    shares = np.array([bool(_stems(line, subject) & asked) for line in lines])
    fit = unit[1:] @ unit[0] + STEM_BONUS * shares
    hinted = [hinted_attributes(_named_text(line, subject)) for line in lines]
    if wanted and all(hint and not hint & wanted for hint in hinted):
        return [False] * len(lines)  # every line is about something else: nothing answers
    best = said[int(np.argmax(fit))]
    if wanted and best and not best & wanted:
        # The line that fits best names only other attributes than the question's ("brought
        # home a beagle" for the city one calls home): the best of the lines that do not is
        # the answer's. Cue words decide no line beyond that (search/attributes.py: what they
        # cost where they mislead), and a hint none.
        other = np.array([bool(cues) and not cues & wanted for cues in said])
        if other.all():
            return [False] * len(lines)
        fit = np.where(other, -np.inf, fit)
    # A question naming no attribute the cue words know is about one they do not: words that
    # would set its lines apart are then as likely its own ("moved the mobile contract over
    # to Three" read as a home). They may still bring lines of one attribute together.
    apart = said if wanted else [frozenset()] * len(lines)
    groups = attribute_groups(_alike(line_alike(unit[1:], words, word_rows), apart, hinted), kept)
    answering = max(groups, key=lambda group: float(fit[group].max()))
    near = fit >= ANSWER_SHARE * fit.max() if close else np.ones(len(lines), dtype=bool)
    return [i in answering and bool(near[i]) for i in range(len(lines))]


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


def _pool(question: str, cited: Sequence[list[str]],
          ) -> tuple[set[str], list[tuple[int, str]]]:
    """The question's subject, and (hit index, line) of the cited lines that name it."""
    subject = question_subject(question, [line for lines in cited for line in lines])
    # A name is named whole; words the lines share are a looser subject: a line holding most
    # of them is about it ("Launch slips: version 1.3" beside "Launch target is version 1.2").
    share = 1.0 if _named(question) else SHARED_TERMS
    return subject, [(k, line) for k, lines in enumerate(cited) for line in lines
                     if _mentions(line, subject, share)] if subject else []


def _with_kept(pool: Sequence[tuple[int, str]], hits: Sequence[SearchHit], subject: set[str],
               curated_text: CuratedText | None) -> tuple[list[str], list[bool]]:
    """The pool's lines, then the curated lines naming the subject that no hit cites; and
    which of them are curated."""
    lines = [line for _, line in pool]
    kept = [curated(hits[k]) for k, _ in pool]
    if curated_text is not None:
        seen = {_plain(line) for line in lines}
        for line in curated_text():
            if len(lines) >= MOST_LINES:
                break
            if _mentions(line, subject) and _plain(line) not in seen:
                seen.add(_plain(line))
                lines.append(line)
                kept.append(True)
    return lines, kept


def _plain(line: str) -> str:
    return " ".join(line.lstrip("-*+ ").split())


def _spoken(pool: Sequence[tuple[int, str]]) -> bool:
    """Whether the lines are a conversation's: most name their speaker ("Nate: ...")."""
    return 2 * sum(bool(_SPOKEN.match(line)) for _, line in pool) > len(pool)


def conversation_only(question: str, cited: Sequence[list[str]],
                      hits: Sequence[SearchHit]) -> bool:
    """Whether the lines naming the question's subject are a conversation's and no hit is
    curated: a question without "now" then keeps its order (nothing may move)."""
    return _spoken(_pool(question, cited)[1]) and not any(map(curated, hits))


def present_value_first(hits: Sequence[SearchHit], question: str, cited: Sequence[list[str]],
                        embed: Embed, date_of: DateOf, *, now: bool = True,
                        curated_text: CuratedText | None = None) -> tuple[SearchHit, ...]:
    """``hits`` with those answering the present-value ``question`` first, newest first, the
    older answers marked; unchanged when no cited line names the question's subject, when
    fewer than two lines do (cited, or curated lines no hit cites: nothing to choose between)
    or the embedder fails. ``cited``: each hit's cited
    lines; ``date_of``: the ISO day a hit's line was learned, or None.

    Where the subject's lines are a conversation's (most are "Nate: ..."), a question without
    ``now`` only lets an answer from a curated file yield, to the newest dated answer, which
    moves right above it, and the logs keep their order (a conversation log names its speakers
    on every line: LoCoMo dev recall@1 63.1 -> 49.9 when they were ordered newest first);
    with ``now``, only lines close to the question answer (:data:`ANSWER_SHARE`: a speaker's
    lines all group together; LoCoMo dev's "How does Andrew feel about his current work?"
    lost its gold lines when they all moved, multi-hop recall@6 57.4 -> 56.8).

    ``curated_text``: every line of the curated files among the hits; those naming the subject
    that no hit cites still tell which attributes the notes keep (search/attribute_groups.py:
    a hit's passage of ``MEMORY.md`` may hold where she lives but not whom she dates)."""
    subject, pool = _pool(question, cited)
    if pool and pool[0][0] != 0 and not _named(question):
        # Words the lines share are a weaker subject than a name: unless the best hit holds
        # them, nothing moves. The best hit may say them in the other language ("daughter"
        # beside 女儿), or be about the question in words the subject's lines lack (the
        # bundled Kestrel notes' "current" questions: MRR 57.5 -> 62.5 with this rule).
        return tuple(hits)
    said = _spoken(pool)
    spoken = said and not now
    if spoken and not any(map(curated, hits)):
        return tuple(hits)  # a conversation's logs alone: nothing may move
    lines, kept = _with_kept(pool, hits, subject, curated_text) if pool else ([], [])
    # One cited line can still be told apart from the subject's curated lines no hit cites.
    judged = _answers(question, subject, lines, kept, embed,
                      close=said and now) if len(lines) >= 2 else None
    answers = judged[:len(pool)] if judged is not None else None  # (the rest are no hits)
    if answers is None or not any(answers):
        return tuple(hits)
    day: dict[int, str] = {}  # each answering hit: the day of its newest answering line
    for (k, line), answer in zip(pool, answers, strict=True):
        if answer:
            day[k] = max(day.get(k, ""), date_of(hits[k], line) or "")
    newest = sorted(day, key=lambda k: (day[k], -k), reverse=True)
    older = [k for k in newest[1:] if day[k] < day[newest[0]]]
    if spoken:
        older = [k for k in older if curated(hits[k])]
        order = _newest_above_first(len(hits), newest[0], older)
    else:
        order = [*newest, *(k for k in range(len(hits)) if k not in day)]
    top = hits[newest[0]]
    marked = {k: top.citation or top.path for k in older}
    # An answer is dated by its answering line (an undated curated line: None).
    return tuple(replace(hits[k], as_of=(day[k] or None) if k in day else hits[k].as_of,
                         superseded_by=marked.get(k)) for k in order)


def _newest_above_first(count: int, newest: int, older: Sequence[int]) -> list[int]:
    """Positions ``0..count-1`` with ``newest`` moved right above the first of ``older`` when
    it ranked below it; the rest keep their order."""
    order = list(range(count))
    if older and newest > min(older):
        order.remove(newest)
        order.insert(order.index(min(older)), newest)
    return order
