"""A subject's lines group by attribute: around the curated lines, which never merge with each
other, by how alike lines are in sentence and word; a line alike to nothing stays apart; the
curated lines no hit cites still shape the groups and never become hits."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from search_hits import cited_hit, curated_lines, default_embed

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import StoreError
from openclaw_memory.search.attribute_groups import (
    SAME_ATTRIBUTE,
    SEPARATE,
    WORD_SHARE,
    attribute_groups,
    average_linkage,
    content_words,
    line_alike,
)
from openclaw_memory.search.question import ask
from openclaw_memory.search.recency import newer_first
from openclaw_memory.search.request import SearchRequest
from openclaw_memory.search.subject_lines import PlacedLine
from openclaw_memory.search.subject_reads import SUBJECT_CHUNKS, curated_reader, subject_reader


@pytest.fixture(scope="module")
def embed() -> Any:
    return default_embed()


def _alike(pairs: dict[tuple[int, int], float], count: int) -> np.ndarray:
    alike = np.eye(count)
    for (a, b), value in pairs.items():
        alike[a, b] = alike[b, a] = value
    return alike


def test_average_linkage_merges_the_closest_groups_while_their_mean_reaches_the_threshold() -> None:
    alike = _alike({(0, 1): 0.9, (1, 2): 0.5, (0, 2): 0.1, (2, 3): 0.05}, 4)
    # 0+1 first; then {0,1} to 2 averages 0.3: merged at 0.25, not at 0.35.
    assert average_linkage(alike, 0.25) == [[0, 1, 2], [3]]
    assert average_linkage(alike, 0.35) == [[0, 1], [2], [3]]
    assert average_linkage(np.zeros((0, 0)), 0.25) == []


def test_groups_marked_apart_never_merge_however_alike() -> None:
    alike = _alike({(0, 1): 0.95, (1, 2): 0.4}, 3)
    assert average_linkage(alike, 0.25, [[0], [1], [2]], [True, True, False]) == [[0], [1, 2]]


def test_a_line_joins_the_curated_fact_it_is_closest_to_and_a_line_alike_to_none_stays_apart() -> None:
    # 0, 1: curated (home, work); 2 is alike to home, 3 to work, 4 to nothing.
    alike = _alike({(0, 1): 0.1, (0, 2): 0.6, (1, 3): 0.5, (2, 3): 0.2, (0, 4): 0.05,
                    (1, 4): 0.1}, 5)
    assert sorted(attribute_groups(alike, [True, True, False, False, False])) == [
        [0, 2], [1, 3], [4]]
    assert SEPARATE > 0.1  # (line 4 is below it with both)
    # Just above SEPARATE on average with the work group, line 4 joins it.
    above = _alike({(0, 1): 0.1, (0, 2): 0.6, (1, 3): 0.5, (2, 3): 0.2, (0, 4): 0.05,
                    (1, 4): SEPARATE + 0.05, (3, 4): SEPARATE + 0.05}, 5)
    assert sorted(attribute_groups(above, [True, True, False, False, False])) == [
        [0, 2], [1, 3, 4]]


def test_two_curated_lines_saying_one_thing_are_one_group() -> None:
    alike = _alike({(0, 1): 0.8, (0, 2): 0.5, (1, 2): 0.5}, 3)
    assert attribute_groups(alike, [True, True, False]) == [[0, 1, 2]]


def test_two_curated_lines_only_alike_in_form_stay_two_facts() -> None:
    # "is a member at CoreClub" / "is on the infra team": 0.46, under SAME_ATTRIBUTE.
    alike = _alike({(0, 1): 0.46, (0, 2): 0.1, (1, 2): 0.5}, 3)
    assert SAME_ATTRIBUTE > 0.46
    assert sorted(attribute_groups(alike, [True, True, False])) == [[0], [1, 2]]


def test_two_curated_lines_labelled_differently_stay_two_facts_however_alike() -> None:
    # "Work laptop: ThinkPad X1" / "Personal laptop: MacBook Air M1": alike in form (0.8);
    # a line without a label still joins the one it is like.
    alike = _alike({(0, 1): 0.8, (0, 2): 0.5, (1, 2): 0.6}, 3)
    labels = ["work laptop", "personal laptop", ""]
    assert sorted(attribute_groups(alike, [True, True, False], labels)) == [[0], [1, 2]]
    # One label, or none ("lives in Paris" and a later "lives in Berlin"): one attribute.
    assert attribute_groups(alike, [True, True, False], ["home", "home", ""]) == [[0, 1, 2]]
    assert attribute_groups(alike, [True, True, False], ["", "", ""]) == [[0, 1, 2]]


def test_the_curated_fact_asked_stays_first_beside_a_change_to_its_neighbour(embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Work laptop: ThinkPad X1 Carbon Gen 9 (Windows 11).\n"
                        "- Personal laptop: MacBook Air M1.", 0.5)
    swapped = cited_hit("memory/2026-04-14.md",
                        "- IT swapped my work laptop for a MacBook Pro M3, ThinkPad returned.", 0.45)
    text = curated_lines("# Memory", "- User: Chen Yu, SRE at a bank.",
                         "- Work laptop: ThinkPad X1 Carbon Gen 9 (Windows 11).",
                         "- Personal laptop: MacBook Air M1.")
    ranked = newer_first([swapped, curated], ask("What is Chen Yu's personal laptop?"), embed,
                         curated_text=lambda: text)
    assert ranked[0].path == "MEMORY.md"


def test_without_curated_lines_the_lines_group_by_average_linkage() -> None:
    alike = _alike({(0, 1): 0.6, (1, 2): 0.05, (0, 2): 0.0}, 3)
    assert attribute_groups(alike, [False, False, False]) == [[0, 1], [2]]


def test_words_matched_one_by_one_add_their_share_to_the_sentences_cosine() -> None:
    sentences = np.eye(2)  # orthogonal sentences: all the similarity comes from words
    words = [["member", "gym"], ["membership"]]
    rows = {"member": np.array([1.0, 0.0]), "gym": np.array([0.0, 1.0]),
            "membership": np.array([0.8, 0.6])}
    alike = line_alike(sentences, words, rows)
    # line 0's words: best 0.8 and 0.6 (mean 0.7); line 1's: best 0.8; their mean 0.75.
    assert alike[0, 1] == pytest.approx(WORD_SHARE * 0.75)
    assert alike[0, 0] == pytest.approx(1.0)
    assert content_words("- signed up at the gym.") == ["signed", "gym"]
    assert content_words("王芳搬到了北京") == ["王芳", "搬到", "了北"]  # CJK: two characters a word


def test_curated_lines_no_hit_cites_shape_the_groups_and_never_become_hits(embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park lives in Lisbon.\n- Ada Park works at Acme.", 0.5)
    newer = cited_hit("memory/2025-05-20.md", "- Ada Park is with Initech since Monday.", 0.45)
    partner = cited_hit("memory/2025-04-18.md", "- Ada Park is seeing Sam these days.", 0.44)
    reads: list[int] = []

    def text() -> list[PlacedLine]:
        reads.append(1)
        return curated_lines("# Facts", "- Ada Park lives in Lisbon.", "- Ada Park works at Acme.",
                             "- Ada Park is dating Robin.", "- Lee Wu is dating Robin.")

    ranked = newer_first([curated, newer, partner], ask("Who is Ada Park's partner now?"), embed,
                         curated_text=text)
    # The answer first; asked "now", Ada Park's newest other statement (dated) next; the
    # curated hit, which answers nothing asked, after them.
    assert [h.path for h in ranked] == ["memory/2025-04-18.md", "memory/2025-05-20.md",
                                        "MEMORY.md"]
    assert reads == [1]
    # Not asked about the present: nothing is read.
    newer_first([curated, newer, partner], ask("Who did Ada Park date before?"), embed,
                curated_text=text)
    assert reads == [1]


class _FailingStore:
    def chunk_keys(self, paths: Any, limit: Any = None) -> list[int]:
        raise StoreError("disk I/O error")


def test_a_store_that_fails_reading_curated_lines_leaves_the_hits_as_ranked() -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park lives in Lisbon.", 0.5)
    assert curated_reader(_FailingStore(), [curated])() == []  # type: ignore[arg-type]
    assert curated_reader(_FailingStore(), [])() == []  # type: ignore[arg-type]


class _FailingKeywords:
    def keyword_search(self, *args: Any, **kwargs: Any) -> list[tuple[int, float]]:
        raise StoreError("disk I/O error")


class _CountingKeywords:
    def __init__(self) -> None:
        self.searches = 0

    def keyword_search(self, *args: Any, **kwargs: Any) -> list[tuple[int, float]]:
        self.searches += 1
        return []

    def chunks(self, keys: Any) -> dict[int, Any]:
        return {}


def test_a_subjects_lines_are_read_once_per_search_and_not_for_other_sources() -> None:
    store = _CountingKeywords()
    request = SearchRequest("王芳现在找谁理发？", 6, None, ("memory",), True,
                            datetime(2026, 3, 1, tzinfo=UTC))
    read = subject_reader(store, request)  # type: ignore[arg-type]
    assert read({"王芳"}) == [] and read({"王芳"}) == [] and store.searches == 1
    sessions = subject_reader(store, replace(request, sources=("sessions",)))  # type: ignore[arg-type]
    assert sessions({"王芳"}) == [] and store.searches == 1


def test_a_store_that_fails_reading_a_subjects_lines_reads_none() -> None:
    request = SearchRequest("Where does Ada Park live now?", 6, None, ("memory",), True,
                            datetime(2026, 3, 1, tzinfo=UTC))
    assert subject_reader(_FailingKeywords(), request)({"ada", "park"}) == []  # type: ignore[arg-type]


def test_a_line_without_embedded_words_compares_by_its_sentence_alone() -> None:
    sentences = np.array([[1.0, 0.0], [0.6, 0.8]])
    alike = line_alike(sentences, [["gym"], []], {"gym": np.array([1.0, 0.0])})
    assert alike[0, 1] == pytest.approx(0.6)  # no words to match: the sentences' cosine


def test_the_lines_read_for_grouping_are_bounded() -> None:
    from openclaw_memory.search.subject_lines import MOST_LINES, lines_and_curated, uncited_lines

    hit = cited_hit("MEMORY.md", "- Ada Park lives in Lisbon.", 0.5)
    pool = [(0, "- Ada Park lives in Lisbon.")]
    many = curated_lines(*(f"- Ada Park note {i}." for i in range(5 * MOST_LINES)))
    daily = [PlacedLine(f"- Ada Park did {i}.", "memory/2025-01-02.md", i, "c") for i in range(99)]
    extra = uncited_lines(pool, [hit], {"ada", "park"}, lambda: many, lambda subject: daily)
    lines, kept = lines_and_curated(pool, [hit], extra)
    assert len(lines) == MOST_LINES and all(kept)  # curated first, and the bound is full
    few = uncited_lines(pool, [hit], {"ada", "park"}, lambda: many[:3], lambda subject: daily)
    lines, kept = lines_and_curated(pool, [hit], few)
    assert len(lines) == MOST_LINES and kept[:4] == [True] * 4 and not any(kept[4:])


def test_a_subject_named_in_hundreds_of_chunks_has_its_newest_lines_read(tmp_path: Path) -> None:
    # 120 short days name Ada Park twice (BM25's favourites); the newest day names her once
    # in a longer note: it is read first, though BM25 alone would leave it past the 60th.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    start = date(2025, 1, 1)
    for n in range(120):
        day = start + timedelta(days=n)
        (ws / "memory" / f"{day}.md").write_text(
            f"# {day}\n\n- Ada Park and Ada Park's sister had tea.\n", encoding="utf-8")
    newest = start + timedelta(days=120)
    (ws / "memory" / f"{newest}.md").write_text(
        f"# {newest}\n\n- The quarterly review went long and the budget needs another pass.\n"
        "- Ada Park moved to Lisbon; she found a flat near the river with a small balcony.\n",
        encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite",
                          embedding={"provider": "none"}) as memory:
        memory.sync()
        request = SearchRequest("Where does Ada Park live now?", 6, None, ("memory",), True,
                                datetime(2025, 6, 1, tzinfo=UTC))
        lines = subject_reader(memory.store, request)({"ada", "park"})  # type: ignore[arg-type]
    assert lines[0].path == f"memory/{newest}.md"
    assert any("Lisbon" in line.text for line in lines if line.path == lines[0].path)
    assert len({line.path for line in lines}) == SUBJECT_CHUNKS


_FILLER = "".join(f"- {who} lives in {city}.\n- {who} works at {firm}.\n- {who} drives a {firm} car.\n"
                  for who, city, firm in zip(["Bruno Silva", "Chloe Martin", "Dev Patel",
                                              "Elena Rossi", "Farid Khan", "Hugo Weber",
                                              "Iris Novak", "Jonas Berg", "Leo Dubois", "Nils Olsen"],
                                             ["Rome", "Oslo", "Lima", "Kyiv", "Cork", "Bern",
                                              "Riga", "Graz", "Nice", "Bonn"],
                                             ["Acme", "Umbrella", "Hooli", "Vandelay", "Stark",
                                              "Wayne", "Wonka", "Tyrell", "Soylent", "Initech"],
                                             strict=True))


@pytest.mark.parametrize(("later", "logs"), [
    ("- Ada Park lives in Berlin now. (as of 2026-03-01)\n", {}),
    ("- Ada Park lives in Berlin.\n", {"2026-03-01": "- Ada Park moved to Berlin last week.\n"}),
])
def test_a_curated_file_holding_an_old_and_a_newer_value_answers_with_the_newer(
        tmp_path: Path, later: str, logs: dict[str, str]) -> None:
    # Notes appended without removing the old line: the two curated lines differ in their
    # value only, and are one attribute (not two facts, as differently labelled lines are).
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- Ada Park lives in Paris.\n"
                                  "- Ada Park works at Globex.\n" + _FILLER + later,
                                  encoding="utf-8")
    for day, text in logs.items():
        (ws / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        hits = memory.search("Where does Ada Park live now?").results
    first = [line for line in hits[0].snippet.splitlines() if "Ada Park" in line]
    assert first and all("Berlin" in line for line in first)

