"""Token-budget chunking on line boundaries (port of OpenClaw's chunkMarkdown)."""

from __future__ import annotations

import hashlib
import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openclaw_memory.config import ChunkingSettings
from openclaw_memory.indexing import chunking
from openclaw_memory.indexing.chunking import chunk_hash, chunk_text, split_line, split_lines
from openclaw_memory.indexing.tokens import count_tokens
from openclaw_memory.types import Chunk

# "We discussed the project's progress today and decided to start the new feature next week."
ZH_SENTENCE = "我们今天讨论了项目的进展情况\uff0c并决定下周开始新的功能开发。"

MARKDOWN = """# Project Atlas

## Decisions
- 2024-03-02: We chose PostgreSQL over MySQL because of JSONB support.
- 2024-03-05: Deploys go out on Tuesdays and Thursdays only.

## People
Ana leads the data team. She prefers async updates in #atlas-dev.
Bruno owns the billing service; ask him before touching invoices.

## Open questions
1. Do we need multi-region failover this year?
2. Who approves the new vendor contract?

```bash
make deploy ENV=staging
```
"""


def _chunks(
    text: str, tokens: int = 400, overlap: int = 80, line_map: list[int] | None = None
) -> list[Chunk]:
    return chunk_text(
        text,
        path="memory/notes.md",
        source="memory",
        settings=ChunkingSettings(tokens=tokens, overlap=overlap),
        line_map=line_map,
    )


def _line_with_tokens(n: int) -> str:
    """A line of exactly ``n`` o200k tokens ("x", " x", " x", ...)."""
    line = "x" + " x" * (n - 1)
    assert count_tokens(line) == n
    return line


def _budget_used(chunk: Chunk) -> int:
    """Tokens of the chunk's lines plus the newlines joining them."""
    items = chunk.text.split("\n")
    return sum(count_tokens(item) for item in items) + len(items) - 1


def _covered(chunks: list[Chunk]) -> set[int]:
    return {n for c in chunks for n in range(c.start_line, c.end_line + 1)}


def _nonblank(lines: list[str]) -> set[int]:
    return {i for i, line in enumerate(lines, start=1) if line.strip()}


def test_empty_or_blank_text_yields_no_chunks() -> None:
    assert _chunks("") == []
    assert _chunks("\n") == []
    assert _chunks("  \n\t\n\r\n   ") == []


def test_small_file_is_one_chunk_with_exact_text_lines_and_hash() -> None:
    [chunk] = _chunks(MARKDOWN)
    lines = MARKDOWN.split("\n")[:-1]  # the final "\n" ends the last line
    assert chunk == Chunk(
        path="memory/notes.md",
        source="memory",
        start_line=1,
        end_line=len(lines),
        text="\n".join(lines),
        hash=hashlib.sha256("\n".join(lines).encode()).hexdigest(),
    )
    assert chunk.hash == chunk_hash(chunk.text)


def test_line_ranges_are_one_based_inclusive_and_cover_every_nonblank_line() -> None:
    lines = split_lines(MARKDOWN * 3)
    chunks = _chunks(MARKDOWN * 3, tokens=40, overlap=10)
    assert len(chunks) > 3
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    assert _nonblank(lines) <= _covered(chunks)
    assert [c.start_line for c in chunks] == sorted(c.start_line for c in chunks)


def test_overlap_lines_repeat_at_the_start_of_the_next_chunk() -> None:
    # 10-token lines cost 11: 9 fit in 100 tokens; 3 lines (33) are the first to reach 25.
    text = "\n".join(_line_with_tokens(10) for _ in range(30))
    chunks = _chunks(text, tokens=100, overlap=25)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 9), (7, 15), (13, 21), (19, 27),
                                                            (25, 30)]
    lines = split_lines(text)
    for previous, following in itertools.pairwise(chunks):
        shared = lines[following.start_line - 1 : previous.end_line]
        assert previous.text.endswith("\n".join(shared))
        assert following.text.startswith("\n".join(shared))


def test_zero_overlap_chunks_share_no_lines() -> None:
    text = "\n".join(_line_with_tokens(10) for _ in range(30))
    chunks = _chunks(text, tokens=100, overlap=0)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 9), (10, 18), (19, 27), (28, 30)]


def test_overlap_never_carries_the_whole_previous_chunk() -> None:
    # overlap is clamped to tokens - 1, so it would swallow any one-line chunk.
    text = "\n".join(_line_with_tokens(30) for _ in range(5))
    chunks = _chunks(text, tokens=40, overlap=39)
    assert [(c.start_line, c.end_line) for c in chunks] == [(n, n) for n in range(1, 6)]


def test_carried_overlap_is_trimmed_so_the_next_chunk_stays_within_budget() -> None:
    sizes = [10, 200, 60, 150]  # costs 11, 201, 61, 151
    text = "\n".join(_line_with_tokens(n) for n in sizes)
    chunks = _chunks(text, tokens=400, overlap=80)
    # Lines 2-3 (262) reach the overlap, but 262 + 151 > 400: line 2 is dropped from the carry.
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 3), (3, 4)]
    sizes = [50, 300, 100]
    chunks = _chunks("\n".join(_line_with_tokens(n) for n in sizes), tokens=400, overlap=80)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 3)]
    assert all(_budget_used(c) <= 400 for c in chunks)


def test_chunks_stay_within_the_token_budget() -> None:
    text = (MARKDOWN + "\n" + "Ein längerer Absatz über Ärger, Öl und Übermut. " * 3 + "\n") * 20
    for tokens, overlap in [(400, 80), (64, 16), (16, 4), (8, 0)]:
        chunks = _chunks(text, tokens=tokens, overlap=overlap)
        assert all(_budget_used(c) <= tokens for c in chunks)


def test_chinese_paragraph_is_sized_by_real_tokens_not_chars_over_four() -> None:
    sentence = ZH_SENTENCE
    paragraph = sentence * (2000 // len(sentence) + 1)
    assert len(paragraph) >= 2000
    chunks = _chunks(paragraph)
    # chars/4 thinks this is ~500 tokens: 2 chunks of 1600 chars. It is ~1260 tokens.
    assert math.ceil(len(paragraph) / 1600) <= 2
    assert len(chunks) == math.ceil(count_tokens(paragraph) / 400) >= 3
    assert "".join(c.text for c in chunks) == paragraph
    assert all(count_tokens(c.text) <= 400 for c in chunks)
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)


@pytest.mark.parametrize(
    "sentence",
    [
        ZH_SENTENCE,
        "今日はプロジェクトの進捗について話し合い、来週から新機能の開発を始めることにしました。",
        "오늘 우리는 프로젝트 진행 상황을 논의하고 다음 주에 새 기능 개발을 시작하기로 했습니다.",
        "Launch party 🎉🚀 with the team 👩‍💻👨‍💻 and family 👨‍👩‍👧‍👦 in 🇯🇵 👍🏽",
    ],
)
def test_cjk_and_emoji_lines_are_chunked_by_real_token_counts(sentence: str) -> None:
    lines = [f"{i}. {sentence}" for i in range(60)]
    chunks = _chunks("\n".join(lines), tokens=120, overlap=30)
    line_cost = [count_tokens(line) + 1 for line in lines]
    assert len(chunks) >= sum(line_cost) // 120
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert sum(line_cost[chunk.start_line - 1 : chunk.end_line]) <= 120
    assert _covered(chunks) == set(range(1, 61))


# No whitespace: a whitespace-only piece would be dropped like any blank chunk.
OVERLONG_LINE = (
    "Ünïcödé,café,naïve,我们今天讨论了,日本語テキスト,한국어,"
    "😀👍🏽👨‍👩‍👧‍👦🇯🇵é🧑‍🔬;" * 6
)


@pytest.mark.parametrize("tokens", [1, 2, 3, 5, 8, 13, 50])
def test_overlong_line_is_split_without_breaking_characters(tokens: int) -> None:
    pieces = split_line(OVERLONG_LINE, tokens)
    assert "".join(pieces) == OVERLONG_LINE
    assert len(pieces) > 1
    for piece in pieces:
        assert piece
        assert "\ufffd" not in piece
        assert count_tokens(piece) <= tokens or len(piece) == 1
    chunks = _chunks(OVERLONG_LINE, tokens=tokens, overlap=0)
    assert [c.text for c in chunks] == list(dict.fromkeys(pieces))  # repeats dropped
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)


def test_split_line_returns_a_line_within_budget_whole() -> None:
    assert split_line("hello world", 2) == ["hello world"]
    assert split_line("", 1) == [""]
    assert split_line(ZH_SENTENCE, 5, "cl100k_base") != split_line(ZH_SENTENCE, 5)
    with pytest.raises(ValueError, match="max_tokens"):
        split_line("hello", 0)


def test_pieces_repeating_in_a_periodic_line_are_stored_once() -> None:
    # Identical chunks would collide on the store's unique chunk id (path, lines, hash).
    line = "=" * 5000
    pieces = split_line(line, 50)
    assert "".join(pieces) == line
    chunks = _chunks(f"# Title\n{line}\nend", tokens=50, overlap=10)
    keys = [(c.start_line, c.end_line, c.hash) for c in chunks]
    assert len(keys) == len(set(keys))
    assert {c.text for c in chunks if c.start_line == c.end_line == 2} <= set(pieces)


def test_overlong_line_keeps_its_line_number_between_other_lines() -> None:
    text = f"before\n{OVERLONG_LINE}\nafter"
    chunks = _chunks(text, tokens=20, overlap=0)
    assert chunks[0].text == "before"
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 1)
    assert chunks[-1].text.endswith("\nafter")
    assert (chunks[-1].start_line, chunks[-1].end_line) == (2, 3)
    middle = [c.text.split("\n")[0] for c in chunks[1:]]
    assert middle == list(dict.fromkeys(split_line(OVERLONG_LINE, 20)))
    assert all(c.start_line == 2 for c in chunks[1:])


def test_overlong_line_pieces_are_never_joined_by_an_invented_newline() -> None:
    long_line = " ".join(f"word{i}" for i in range(300))
    text = f"intro\n{long_line}\nshort tail line\nanother"
    lines = split_lines(text)
    chunks = _chunks(text, tokens=50, overlap=20)
    for chunk in chunks:
        assert chunk.text in "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert _budget_used(chunk) <= 50
    pieces = [c.text.split("\n") for c in chunks if c.start_line <= 2 <= c.end_line]
    assert "".join(dict.fromkeys(p for parts in pieces for p in parts if "word" in p)) == long_line


def test_line_map_maps_chunk_lines_to_transcript_lines() -> None:
    # Text lines 1..6 come from JSONL lines 3, 3, 4, 8, 8, 9 (multi-line messages).
    text = "\n".join(_line_with_tokens(10) for _ in range(6))
    line_map = [3, 3, 4, 8, 8, 9]
    chunks = chunk_text(
        text,
        path="sessions/abc.jsonl",
        source="sessions",
        settings=ChunkingSettings(tokens=33, overlap=0),
        line_map=line_map,
    )
    assert [(c.start_line, c.end_line) for c in chunks] == [(3, 4), (8, 9)]
    assert all(c.source == "sessions" and c.path == "sessions/abc.jsonl" for c in chunks)


def test_empty_transcript_with_empty_line_map_yields_no_chunks() -> None:
    assert _chunks("", line_map=[]) == []


def test_line_map_shorter_than_the_text_is_rejected() -> None:
    with pytest.raises(ValueError, match="line_map"):
        _chunks("a\nb\nc", line_map=[1, 2])


def test_crlf_file_gives_the_same_chunks_as_lf_file() -> None:
    lf = MARKDOWN * 4
    crlf = lf.replace("\n", "\r\n")
    assert _chunks(crlf, tokens=50, overlap=10) == _chunks(lf, tokens=50, overlap=10)
    assert all("\r" not in c.text for c in _chunks(crlf, tokens=50, overlap=10))


def test_carriage_return_inside_a_line_is_kept() -> None:
    [chunk] = _chunks("a\rb\r\nc\r")
    assert chunk.text == "a\rb\nc"
    assert (chunk.start_line, chunk.end_line) == (1, 2)


def test_trailing_newline_does_not_add_a_line() -> None:
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\nb\n\n") == ["a", "b", ""]
    assert split_lines("a\r\nb") == ["a", "b"]
    assert split_lines("") == [""]
    [chunk] = _chunks("a\nb\n")
    assert (chunk.start_line, chunk.end_line, chunk.text) == (1, 2, "a\nb")


def test_special_token_text_is_chunked_as_ordinary_text() -> None:
    text = "\n".join(["<|endoftext|> appears in my notes", "<|fim_prefix|><|endofprompt|>"] * 20)
    chunks = _chunks(text, tokens=30, overlap=5)
    assert len(chunks) > 1
    assert _covered(chunks) == set(range(1, 41))
    assert all(_budget_used(c) <= 30 for c in chunks)


def test_configured_encoding_is_used_for_counting() -> None:
    paragraph = ZH_SENTENCE * 70
    for encoding in ("o200k_base", "cl100k_base"):
        chunks = chunk_text(
            paragraph,
            path="memory/zh.md",
            source="memory",
            settings=ChunkingSettings(tokens=400, overlap=0, encoding=encoding),
        )
        assert len(chunks) == math.ceil(count_tokens(paragraph, encoding) / 400)
        assert all(count_tokens(c.text, encoding) <= 400 for c in chunks)


def test_blank_only_chunks_are_dropped() -> None:
    text = "heading\n" + "\n" * 50 + "tail"
    chunks = _chunks(text, tokens=10, overlap=0)
    assert all(c.text.strip() for c in chunks)
    assert _covered(chunks) >= {1, 52}


def test_chunking_is_deterministic() -> None:
    assert _chunks(MARKDOWN * 10, tokens=64, overlap=16) == _chunks(
        MARKDOWN * 10, tokens=64, overlap=16
    )


def test_public_names_are_sorted() -> None:
    assert chunking.__all__ == sorted(chunking.__all__)


_LINE_CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\r\n")
_LINE = st.one_of(
    st.just(""),
    st.text(alphabet=" \t", max_size=4),
    st.text(alphabet=_LINE_CHARS, max_size=40),
    st.text(alphabet="我们今天日本語한국어😀👍🏽\u200d🇯🇵é ", max_size=40),
    st.text(alphabet="ab ", min_size=60, max_size=200),  # often longer than the budget
)
_BUDGET = st.integers(min_value=1, max_value=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(_LINE, max_size=30),
    newline=st.sampled_from(["\n", "\r\n"]),
    trailing=st.booleans(),
    tokens=_BUDGET,
    overlap_share=st.floats(min_value=0.0, max_value=1.0),
)
def test_chunks_reproduce_source_lines_cover_them_in_order_and_fit_the_budget(
    lines: list[str], newline: str, trailing: bool, tokens: int, overlap_share: float
) -> None:
    text = newline.join(lines) + (newline if trailing and lines else "")
    chunks = _chunks(text, tokens=tokens, overlap=int(overlap_share * tokens))
    source = lines or [""]

    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(source)
        assert chunk.text.strip()
        assert chunk.hash == hashlib.sha256(chunk.text.encode()).hexdigest()
        # One item per line of the range: whole lines, except that the first may be the
        # end (or a middle piece) of a cut line and the last the start of one.
        items = chunk.text.split("\n")
        span = source[chunk.start_line - 1 : chunk.end_line]
        assert len(items) == len(span)
        assert items[1:-1] == span[1:-1]
        if len(items) == 1:
            assert items[0] in span[0]
        else:
            assert span[0].endswith(items[0])
            assert span[-1].startswith(items[-1])
        is_single_char_piece = len(chunk.text) == 1
        assert _budget_used(chunk) <= tokens or is_single_char_piece

    assert _nonblank(source) <= _covered(chunks)
    for previous, following in itertools.pairwise(chunks):
        assert previous.start_line <= following.start_line
        assert previous.end_line <= following.end_line


_SOLID_CHARS = st.characters(exclude_categories=["Cs", "Cc", "Zs", "Zl", "Zp"])


@settings(max_examples=100, deadline=None)
@given(
    line=st.text(alphabet=_SOLID_CHARS, min_size=1, max_size=300)
    | st.text(alphabet="我们今天日本語한국어😀👍🏽\u200d🇯🇵é", min_size=1, max_size=300),
    tokens=_BUDGET,
)
def test_cut_line_pieces_concatenate_to_the_line_exactly(line: str, tokens: int) -> None:
    pieces = split_line(line, tokens)
    assert "".join(pieces) == line
    assert all(count_tokens(p) <= tokens or len(p) == 1 for p in pieces)
    chunks = _chunks(line, tokens=tokens, overlap=0)
    assert [c.text for c in chunks] == list(dict.fromkeys(pieces))
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)
