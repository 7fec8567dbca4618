"""Keyword side of search: CJK-aware FTS5 bodies and safe MATCH expressions.

FTS5's ``unicode61`` tokenizer treats a run of Chinese/Japanese characters (or a Korean word
with its particle attached) as one token, so a two-character query never matches inside a
longer run (OpenClaw's complaint #3). We insert spaces around every CJK/kana/Hangul character
before indexing, making each one a token; the query side turns a CJK run into adjacent-pair
phrases ("方 案"), which match exactly the substring and rank documents containing the whole
run highest. Every user token is quoted, so FTS5 syntax in a query (``"``, ``*``, ``AND``,
``NEAR(``, ``:``, parentheses) is plain text and can never raise.
"""

from __future__ import annotations

import functools
import itertools
import re

__all__ = ["CJK_CHAR", "STOP_WORDS", "fts_body", "keyword_terms", "match_expression", "parse_match",
           "quote_term"]

_CJK = (
    "\u2e80-\u2fff\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4ff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
)
#: One CJK character (Chinese, Japanese, Korean scripts).
CJK_CHAR = re.compile(f"[{_CJK}]")
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"\w+", re.UNICODE)
_SPLIT_CJK = re.compile(f"([{_CJK}]+)")

# Function words that carry no topic in questions, for the languages OpenClaw users write in.
# Removing them matters because the MATCH is an OR: "what" would otherwise match everything.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each else ever
    few for from further get got had has have having he her here hers herself him himself his how
    i if in into is it its itself just let me might more most much must my myself no nor not now
    of off on once only or other our ours ourselves out over own please same she should so some
    such than that the their theirs them themselves then there these they this those through to
    too under until up upon us very was we were what when where which while who whom whose why
    will with would you your yours yourself yourselves tell show find give help thing things stuff
    something anything did does yes ok okay
    el la los las un una unos unas y o de del al en con por para que qué como cómo es son fue
    ser estar está están era lo le les se su sus mi mis tu tus yo tú él ella nosotros ellos
    o a os as um uma uns umas e do da dos das no na nos nas em com por para que é são foi ser
    estar está eu você ele ela nós eles meu minha seu sua
    """.split()
)
_CJK_STOP_CHARS = frozenset(
    "的了着过吗呢吧啊是在有和与我你他她它们这那个也就都还把被之" "のはがをにへとでもやか")


def fts_body(text: str) -> str:
    """The text as stored in the FTS5 table: CJK characters become separate tokens."""
    return CJK_CHAR.sub(lambda m: f" {m.group(0)} ", text)


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [] if run in _CJK_STOP_CHARS else [run]
    return [f"{a} {b}" for a, b in itertools.pairwise(run)]


def keyword_terms(query: str) -> list[str]:
    """Search terms of ``query``: content words and CJK character pairs, stop words removed.

    If every word is a stop word, the words are kept: a query made only of function words is
    still the user's query.
    """
    return list(_keyword_terms(query))


@functools.lru_cache(maxsize=4096)
def _keyword_terms(query: str) -> tuple[str, ...]:
    # Remembered: one search asks for the terms of its question and of each candidate line
    # about 80 times (a sixth of a 100k-chunk search's time before).
    words: list[str] = []
    cjk: list[str] = []
    for token in _WORD.findall(query.lower()):
        for part in _SPLIT_CJK.split(token):
            if not part:
                continue
            if _CJK_RUN.fullmatch(part):
                cjk.extend(_cjk_terms(part))
            elif part != "_":
                words.append(part)
    content = [w for w in words if w not in STOP_WORDS]
    terms = (content or words) + cjk
    return tuple(dict.fromkeys(terms))


def quote_term(term: str) -> str:
    """One term as an FTS5 string: quoted, so no character in it is syntax."""
    return '"' + term.replace('"', "") + '"'


def match_expression(query: str) -> str | None:
    """An FTS5 MATCH string OR-ing every quoted term, or None when nothing is searchable."""
    terms = keyword_terms(query)
    if not terms:
        return None
    return " OR ".join(quote_term(t) for t in terms)


_QUOTED = re.compile(r'"([^"]*)"')


def parse_match(expression: str) -> tuple[list[str], bool]:
    """``(terms, all_required)`` of an expression built here (quoted terms joined by one
    operator), for a backend whose query language is not FTS5's."""
    terms = _QUOTED.findall(expression)
    between = _QUOTED.sub("", expression).split()
    return terms, bool(between) and all(op == "AND" for op in between)
