"""Line-exact citations: a hit cites the lines of its chunk that carry the question's words,
its snippet is those lines, ``memory_get`` reads them back, and explain keeps the chunk's own
lines; chunks matched by meaning alone, short chunks and transcripts are cited whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from search_hits import greyhound_day

from openclaw_memory import MemoryIndex
from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.search.citelines import ChunkLines, LineMatcher, cited_lines
from openclaw_memory.search.hits import _cited_spans
from openclaw_memory.search.snippets import lines_around
from openclaw_memory.store import ChunkRow

FILLER = [f"- Standup {n}: nothing new on the roadmap." for n in range(1, 21)]


def _chunk(lines: list[str], start: int = 1) -> ChunkLines:
    return ChunkLines("\n".join(lines), start, start + len(lines) - 1)


def _cited(chunk: ChunkLines, terms: list[str], min_lines: int) -> tuple[int, int]:
    cited = cited_lines([chunk], terms, min_lines, LineMatcher())[0]
    return cited.start, cited.end


def _span(lines: list[str], question: str, min_lines: int = 5, start: int = 1) -> tuple[int, int]:
    return _cited(_chunk(lines, start), keyword_terms(question), min_lines)


def test_the_line_holding_the_words_is_cited_with_its_neighbours() -> None:
    lines = FILLER[:12]
    lines[7] = "- Joanna adopted a rescue greyhound called Pixel."
    assert _span(lines, "What did Joanna name her greyhound?", start=40) == (45, 49)


def test_the_hits_of_a_search_are_cited_together_as_each_would_be_alone() -> None:
    chunks = []
    for k, fact in enumerate(["- Joanna adopted a rescue greyhound called Pixel.",
                              "- Nothing about dogs here at all.",
                              "- Pixel the greyhound learned to sit on Tuesday."]):
        lines = FILLER[:12]
        lines[3 + 2 * k] = fact
        chunks.append(_chunk(lines, start=1 + 100 * k))
    chunks.append(_chunk(FILLER[:3], start=900))  # short: cited whole
    terms = keyword_terms("What did Joanna name her greyhound?")
    alone = [_cited(c, terms, 5) for c in chunks]
    assert [(c.start, c.end) for c in cited_lines(chunks, terms, 5, LineMatcher())] == alone
    assert alone[0] == (2, 6) and alone[1] == (101, 112) and alone[3] == (900, 902)


def test_lines_nearly_as_good_as_the_best_widen_the_span() -> None:
    lines = FILLER[:16]
    lines[1] = "- The greyhound Pixel came from the shelter."
    lines[13] = "- Pixel the greyhound learned to sit."
    assert _span(lines, "Pixel greyhound") == (1, 14)


def test_a_line_with_fewer_of_the_words_does_not_widen_it() -> None:
    lines = FILLER[:16]
    lines[1] = "- A greyhound ran past the office."
    lines[13] = "- Pixel the greyhound learned to sit at the shelter."
    assert _span(lines, "Pixel greyhound shelter") == (12, 16)


def test_a_line_holding_none_of_the_words_never_widens_a_weak_match() -> None:
    # The best line holds one word of four (share 0.25, within the slack of nothing): only
    # lines holding a word carry the match, not the whole chunk.
    lines = FILLER[:16]
    lines[8] = "- Joanna: the screenplay is finally done."
    assert _span(lines, "Which films did Joanna recommend lately?") == (7, 11)


def test_the_window_stays_inside_the_chunk_at_its_edges() -> None:
    lines = FILLER[:12]
    lines[0] = "- Pixel arrived."
    assert _span(lines, "Pixel", start=10) == (10, 14)
    lines = FILLER[:12]
    lines[-1] = "- Pixel arrived."
    assert _span(lines, "Pixel", start=10) == (17, 21)


def test_words_match_as_the_keyword_index_matches_them_stems_and_cjk() -> None:
    lines = FILLER[:12]
    lines[5] = "- Deployed the invoicing service to Frankfurt."
    assert _span(lines, "deploying invoices") == (4, 8)
    lines = FILLER[:12]
    lines[9] = "- 与东京团队讨论了缓存方案。"
    assert _span(lines, "缓存方案是什么") == (8, 12)


@pytest.mark.parametrize(("lines", "question", "min_lines"), [
    (FILLER[:12], "greyhound adoption", 5),                  # no line holds a word: by meaning
    (["- Pixel.", "- more", "- lines"], "Pixel", 5),          # already short
    (FILLER[:12], "Pixel", 0),                               # narrowing off
])
def test_the_whole_chunk_is_cited_when_nothing_says_which_line(lines: list[str], question: str,
                                                               min_lines: int) -> None:
    assert _span(lines, question, min_lines) == (1, len(lines))


def test_a_chunk_whose_text_does_not_map_onto_its_lines_is_cited_whole() -> None:
    chunk = ChunkLines("- Pixel.\n- two", 1, 9)
    assert _cited(chunk, ["pixel"], 1) == (1, 9)


def test_transcript_chunks_are_never_narrowed() -> None:
    from openclaw_memory.search.request import SearchRequest

    text = "\n".join(["user: tell me about Pixel", *FILLER[:11]])
    rows = [ChunkRow(1, "a", "sessions/s.jsonl", "sessions", 1, 12, text),
            ChunkRow(2, "b", "memory/2026-01-01.md", "memory", 1, 12, text)]
    request = SearchRequest("Pixel", 6, None, ("memory", "sessions"), True,
                            now=__import__("datetime").datetime(2026, 1, 2))
    spans = _cited_spans(request, rows, set(), 5)
    assert 1 not in spans and (spans[2].start, spans[2].end) == (1, 5)


@pytest.fixture()
def long_day(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    lines = ["# 2026-03-02", "", *FILLER[:18]]
    lines[12] = "- Joanna adopted a rescue greyhound called Pixel from the Riverside shelter."
    (ws / "memory" / "2026-03-02.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ws


def test_a_search_hit_cites_the_lines_and_get_reads_them_back(long_day: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(long_day, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        hit = memory.search("Pixel the greyhound from the Riverside shelter").results[0]
        assert (hit.start_line, hit.end_line) == (11, 15)
        assert hit.citation == "memory/2026-03-02.md#L11-L15"
        assert hit.explanation.chunk_lines == (1, 20)
        file_lines = (long_day / "memory" / "2026-03-02.md").read_text("utf-8").split("\n")
        cited = "\n".join(file_lines[10:15])
        assert hit.snippet.startswith(cited) and hit.snippet.endswith("Source: " + hit.citation)
        assert memory.get(hit.citation).text == cited
        assert hit.as_dict(explain=True)["explain"]["chunk_lines"] == [1, 20]


def test_citation_lines_zero_cites_whole_chunks(long_day: Path, tmp_path: Path) -> None:
    with MemoryIndex.open(long_day, index_path=tmp_path / "i.sqlite",
                          search={"citation_lines": 0}) as memory:
        memory.sync()
        hit = memory.search("Pixel the greyhound from the Riverside shelter").results[0]
        assert (hit.start_line, hit.end_line) == (1, 20) and hit.explanation.chunk_lines is None


@pytest.fixture()
def long_log(tmp_path: Path) -> Path:
    """One daily file of several overlapping chunks, the greyhound in the overlap."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    turns = [f"- Joanna: standup {n} went fine and the roadmap for sprint {n} looks stable, "
             f"nothing else to report on ticket {1000 + n} or on the migration plan today."
             for n in range(1, 80)]
    turns[31] = "- Joanna: I adopted a rescue greyhound called Pixel from the Riverside shelter."
    turns[32] = "- Nate: Pixel the greyhound is lucky, the Riverside shelter is a good one."
    (ws / "memory" / "2026-03-02.md").write_text("# 2026-03-02\n\n" + "\n".join(turns) + "\n",
                                                 encoding="utf-8")
    return ws


def _chunks(memory: MemoryIndex) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, b in memory.store.query(
        "select start_line, end_line from chunks order by start_line")]


def test_overlapping_citations_become_one_hit_and_free_the_place(long_log: Path,
                                                                 tmp_path: Path) -> None:
    question = "Pixel the greyhound from the Riverside shelter"
    with MemoryIndex.open(long_log, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        chunks = _chunks(memory)
        holding = [c for c in chunks if c[0] <= 35 <= c[1]]
        assert len(holding) == 2  # the greyhound lines sit in the overlap of two chunks
        hits = memory.search(question, min_score=0.0).results
        cited = [(h.start_line, h.end_line) for h in hits]
        for i, (a, b) in enumerate(cited):  # no line is cited twice
            assert not [c for c in cited[:i] if a <= c[1] and c[0] <= b]
        top = hits[0]
        assert top.start_line <= 34 and top.end_line >= 35 and len(top.explanation.folded) == 1
        assert top.explanation.chunk_lines == (min(h[0] for h in holding),
                                               max(h[1] for h in holding))
        body = top.snippet.split("\n\nSource: ")[0].removeprefix("\u2026 ").removesuffix(" \u2026")
        cited_text = memory.get(top.citation or "").text
        assert body in cited_text and memory.get(f"{top.path}#L{top.explanation.best_line}").text in body
    with MemoryIndex.open(long_log, index_path=tmp_path / "i.sqlite",
                          search={"merge_overlaps": False}) as memory:
        apart = memory.search(question, min_score=0.0).results
        assert not any(h.explanation.folded for h in apart)
        assert [h for h in apart[1:] if h.start_line <= 35 <= h.end_line]  # cited twice


def test_a_long_citation_shows_the_lines_around_its_best_line(tmp_path: Path) -> None:
    # Line 3 holds three of the four words, line 12 all four: both are cited (3-14, 1 100
    # characters), and the snippet's 300 show line 12 and its neighbours, not lines 3-5.
    ws = tmp_path / "ws"
    lines = greyhound_day(ws)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", search={"snippet_chars": 300}) as memory:
        memory.sync()
        hit = memory.search("Joanna greyhound Pixel Riverside").results[0]
    assert (hit.start_line, hit.end_line) == (3, 14) and hit.explanation.best_line == 12
    assert hit.as_dict(explain=True)["explain"]["best_line"] == 12
    body = hit.snippet.split("\n\nSource: ")[0]
    assert lines[11] in body and lines[2] not in body and body.startswith("\u2026 ")
    assert len(body) <= 300 and hit.snippet.endswith("Source: " + hit.citation)


def test_lines_around_grows_two_lines_after_the_best_for_one_before_and_marks_the_rest() -> None:
    lines = {n: f"line {n:02d} " + "x" * 20 for n in range(1, 11)}  # 28 characters each
    text = lines_around(lines, 1, 10, 5, limit=100)
    assert text == "\u2026 " + "\n".join(lines[n] for n in (5, 6, 7)) + " \u2026"
    assert lines_around(lines, 1, 10, 5, limit=130) == "\u2026 " + "\n".join(
        lines[n] for n in (4, 5, 6, 7)) + " \u2026"
    # No line after: the room goes to the lines before.
    assert lines_around(lines, 4, 6, 6, limit=100) == "\n".join(lines[n] for n in (4, 5, 6))
    assert lines_around({1: "y" * 50}, 1, 1, 1, limit=20).endswith("\u2026")
