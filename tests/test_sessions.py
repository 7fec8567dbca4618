"""Transcript flattening (one line per message, JSONL line map) and the JSONL writer."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)

from openclaw_memory.errors import WorkspaceError
from openclaw_memory.sessions import append_messages, flatten_transcript, message_text


def jsonl(*records: Any) -> bytes:
    """Records as JSONL; a ``bytes`` item is written verbatim as one line."""
    lines = [r if isinstance(r, bytes) else json.dumps(r).encode() for r in records]
    return b"\n".join(lines) + b"\n"


def msg(role: str, content: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": role, "content": content}}


# ---------------------------------------------------------------------------- flattening


def test_flatten_openclaw_messages_one_line_each() -> None:
    result = flatten_transcript(jsonl(msg("user", "Hi there"), msg("assistant", "Hello!")))
    assert result.text == "User: Hi there\nAssistant: Hello!"
    assert result.line_map == (1, 2)
    assert (result.messages, result.malformed) == (2, 0)


def test_flatten_keeps_only_text_blocks_of_array_content() -> None:
    content = [
        {"type": "thinking", "thinking": "secret reasoning"},
        {"type": "text", "text": "Let me check."},
        {"type": "toolCall", "name": "memory_search", "arguments": {"query": "x"}},
        {"type": "image", "data": "iVBORw0KGgo="},
        {"type": "text", "text": "  Found it.  "},
        {"type": "text", "text": "   "},
        {"type": "text", "text": 42},
    ]
    result = flatten_transcript(jsonl(msg("assistant", content)))
    assert result.text == "Assistant: Let me check. Found it."


def test_flatten_drops_tool_results_system_and_non_message_records() -> None:
    data = jsonl(
        {"type": "session", "id": "abc", "cwd": "/tmp"},
        msg("system", "You are helpful"),
        msg("toolResult", [{"type": "text", "text": "tool output"}]),
        {"type": "custom", "customType": "openclaw:bootstrap-context:full"},
        msg("user", "real question"),
        {"type": "message", "message": "not an object"},
        {"type": "message"},
    )
    result = flatten_transcript(data)
    assert result.text == "User: real question"
    assert result.line_map == (5,)
    assert result.malformed == 0


def test_flatten_skips_messages_with_no_text() -> None:
    tool_only = [{"type": "toolCall", "name": "memory_get"}]
    result = flatten_transcript(jsonl(msg("assistant", tool_only), msg("user", " \n\t ")))
    assert (result.text, result.line_map, result.messages) == ("", (), 0)


def test_flatten_normalises_every_kind_of_line_break_to_one_space() -> None:
    text = "first\n\n   second\r\nthird\u2028fourth\x0bfifth\u0085sixth\tseventh"
    result = flatten_transcript(jsonl(msg("user", text)))
    assert result.text == "User: first second third fourth fifth sixth seventh"
    assert len(result.text.splitlines()) == 1


def test_line_map_points_at_jsonl_lines_across_blanks_and_damage() -> None:
    data = b"\n".join(
        [
            json.dumps(msg("user", "one")).encode(),  # 1
            b"",  # 2 blank: ignored, not damage
            b"{not json",  # 3
            json.dumps({"type": "session"}).encode(),  # 4
            b"   ",  # 5
            json.dumps(msg("assistant", "two")).encode(),  # 6
            b"\xff\xfe garbage",  # 7 invalid UTF-8
            json.dumps(msg("user", "three")).encode() + b"\r",  # 8 CRLF file
            b'{"type": "message", "message": {"role": "user", "content": "cut o',  # 9 torn
        ]
    )
    result = flatten_transcript(data)
    assert result.text == "User: one\nAssistant: two\nUser: three"
    assert result.line_map == (1, 6, 8)
    assert result.malformed == 3


@pytest.mark.parametrize("line", [b"[1, 2]", b"42", b'"text"', b"null", b"true"])
def test_json_values_that_are_not_objects_count_as_malformed(line: bytes) -> None:
    assert flatten_transcript(line + b"\n").malformed == 1


def test_deeply_nested_json_is_malformed_not_a_crash() -> None:
    assert flatten_transcript(b"[" * 100_000 + b"\n").malformed == 1


def test_lone_surrogates_from_json_escapes_become_replacement_characters() -> None:
    result = flatten_transcript(
        b'{"type":"message","message":{"role":"user","content":"a\\ud83d b"}}'
    )
    assert result.text == "User: a\ufffd b"
    result.text.encode("utf-8")  # always storable


def test_flatten_accepts_langchain_message_dicts() -> None:
    dumped = messages_to_dict([HumanMessage("from dict"), AIMessage("answer"), SystemMessage("s")])
    flat = [{"type": "human", "content": "flat human"}, {"type": "ai", "content": "flat ai"}]
    result = flatten_transcript(jsonl(*dumped, *flat))
    assert result.text.split("\n") == [
        "User: from dict",
        "Assistant: answer",
        "User: flat human",
        "Assistant: flat ai",
    ]
    assert result.line_map == (1, 2, 4, 5)


def test_hash_covers_text_and_line_map() -> None:
    first = flatten_transcript(jsonl(msg("user", "same")))
    shifted = flatten_transcript(b"\n" + jsonl(msg("user", "same")))
    assert first.text == shifted.text
    assert first.hash != shifted.hash  # citations would point at other lines
    expected = hashlib.sha256(b"User: same\n1").hexdigest()
    assert first.hash == expected


def test_empty_transcript() -> None:
    result = flatten_transcript(b"")
    assert (result.text, result.line_map, result.messages, result.malformed) == ("", (), 0, 0)
    assert result.hash == hashlib.sha256(b"\n").hexdigest()


def test_message_text_of_unknown_content_is_empty() -> None:
    assert message_text(None) == ""
    assert message_text({"type": "text", "text": "not in a list"}) == ""
    assert message_text(["bare", " strings "]) == "bare strings"


@settings(max_examples=200)
@given(
    data=st.binary(max_size=400)
    | st.lists(st.text(max_size=30)).map(lambda xs: "\n".join(xs).encode())
)
def test_flatten_never_raises_and_keeps_one_line_per_message(data: bytes) -> None:
    result = flatten_transcript(data)
    lines = result.text.split("\n") if result.text else []
    assert len(lines) == len(result.line_map) == result.messages
    assert all(line.startswith(("User: ", "Assistant: ")) for line in lines)
    assert list(result.line_map) == sorted(set(result.line_map))


@settings(max_examples=100)
@given(
    turns=st.lists(
        st.tuples(st.sampled_from(["user", "assistant"]), st.text(max_size=50)), max_size=8
    )
)
def test_flattened_line_maps_back_to_the_record_it_came_from(
    turns: list[tuple[str, str]],
) -> None:
    data = jsonl(*(msg(role, text) for role, text in turns))
    result = flatten_transcript(data)
    raw_lines = data.split(b"\n")
    for text_line, jsonl_line in zip(result.text.split("\n"), result.line_map, strict=False):
        record = json.loads(raw_lines[jsonl_line - 1])
        speaker = "User" if record["message"]["role"] == "user" else "Assistant"
        assert text_line == f"{speaker}: {' '.join(record['message']['content'].split())}"


# ---------------------------------------------------------------------------- writer


def test_append_messages_round_trips_through_flatten(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "abc.jsonl"  # the folder does not exist yet
    written = append_messages(path, [HumanMessage("What is my cat called?"), AIMessage("Miso.")])
    assert written == 2
    result = flatten_transcript(path.read_bytes())
    assert result.text == "User: What is my cat called?\nAssistant: Miso."
    assert result.line_map == (1, 2)


def test_append_messages_appends_and_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    append_messages(path, [HumanMessage("one")])
    append_messages(path, [AIMessage("two")])
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["message"]["role"] for r in records] == ["user", "assistant"]
    assert all(r["type"] == "message" for r in records)
    assert all(r["timestamp"].endswith("Z") for r in records)
    assert all(isinstance(r["message"]["timestamp"], int) for r in records)


def test_append_messages_stores_other_roles_without_indexing_them(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    messages = [
        SystemMessage("be brief"),
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "memory_search", "args": {"query": "x"}, "id": "c1"}]),
        ToolMessage("tool said things", tool_call_id="c1"),
        AIMessageChunk(content="streamed answer"),
    ]
    assert append_messages(path, messages) == 5
    roles = [json.loads(line)["message"]["role"] for line in path.read_text().splitlines()]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    result = flatten_transcript(path.read_bytes())
    assert result.text == "User: hi\nAssistant: streamed answer"
    assert result.line_map == (2, 5)


def test_append_messages_keeps_multiline_content_on_one_jsonl_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    append_messages(path, [HumanMessage("line one\nline two\u2028three")])
    assert path.read_bytes().count(b"\n") == 1
    assert flatten_transcript(path.read_bytes()).text == "User: line one line two three"


def test_append_messages_keeps_list_content_blocks(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    blocks: list[str | dict[str, Any]] = [
        {"type": "text", "text": "here"},
        {"type": "image_url", "image_url": {"url": "data:..."}},
    ]
    append_messages(path, [HumanMessage(content=blocks)])
    assert flatten_transcript(path.read_bytes()).text == "User: here"


def test_append_messages_recovers_from_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"type": "message", "mess')  # a writer crashed mid-record
    append_messages(path, [HumanMessage("after the crash")])
    result = flatten_transcript(path.read_bytes())
    assert result.text == "User: after the crash"
    assert (result.line_map, result.malformed) == ((2,), 1)


def test_append_messages_with_nothing_writes_nothing(tmp_path: Path) -> None:
    assert append_messages(tmp_path / "t.jsonl", []) == 0
    assert not (tmp_path / "t.jsonl").exists()


def test_append_messages_refuses_to_write_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    (tmp_path / "t.jsonl").symlink_to(target)
    with pytest.raises(WorkspaceError, match="symlink"):
        append_messages(tmp_path / "t.jsonl", [HumanMessage("x")])
    assert target.read_text() == ""


def test_append_messages_creates_private_files(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    append_messages(path, [HumanMessage("x")])
    assert os.stat(path).st_mode & 0o077 == 0


def _write_many(path: str, who: str, count: int, start: Any) -> None:
    start.wait()
    for index in range(count):
        append_messages(
            Path(path), [HumanMessage(f"{who} {index}"), AIMessage(f"ack {who} {index}")]
        )


def test_two_processes_appending_messages_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [
        context.Process(target=_write_many, args=(str(path), who, 100, start))
        for who in ("alpha", "beta")
    ]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    result = flatten_transcript(path.read_bytes())
    assert (result.messages, result.malformed) == (400, 0)
    lines = result.text.split("\n")
    for who in ("alpha", "beta"):
        for index in range(100):
            # Each call's two messages stay adjacent: one write per call, under the lock.
            position = lines.index(f"User: {who} {index}")
            assert lines[position + 1] == f"Assistant: ack {who} {index}"
