"""Transcript flattening (one line per message, JSONL line map) and the JSONL writer."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import threading
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

from openclaw_memory.errors import ContentError, WorkspaceError
from openclaw_memory.sessions.transcripts import (
    flatten_transcript,
    indexable_prefix,
    message_text,
)
from openclaw_memory.sessions.writer import append_messages


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


def test_append_messages_round_trips_unicode_multiline_blocks_and_tool_calls(
        tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    call = {"name": "memory_search", "args": {"query": "Zürich"}, "id": "call-1",
            "type": "tool_call"}
    messages = [
        HumanMessage("Grüße aus Zürich 🚀\n\n東京の天気は？\r\n  مرحبا  "),
        AIMessage(content=[
            {"type": "text", "text": "Checking…\nsecond line"},
            {"type": "tool_use", "id": "call-1", "name": "memory_search", "input": {}},
            {"type": "reasoning", "reasoning": "hidden"},
            {"type": "text", "text": "e\u0301 (combining) and ß"},
        ], tool_calls=[call]),
        ToolMessage("tool output that must not be indexed", tool_call_id="call-1"),
        AIMessage("Sunny in 東京.", name="planner"),
    ]
    assert append_messages(path, messages) == 4
    result = flatten_transcript(path.read_bytes())
    assert result.text.split("\n") == [
        "User: Grüße aus Zürich 🚀 東京の天気は？ مرحبا",
        "Assistant: Checking… second line e\u0301 (combining) and ß",
        "Assistant: Sunny in 東京.",
    ]
    assert (result.line_map, result.malformed) == ((1, 2, 4), 0)
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    # The transcript stays complete: tool calls and results are kept, outside the text.
    assert records[1]["message"]["tool_calls"] == [call]
    assert records[2]["message"]["tool_call_id"] == "call-1"
    assert records[3]["message"]["name"] == "planner"
    assert "東京" in path.read_text("utf-8")  # stored as UTF-8, not \\u escapes


def test_append_messages_accepts_a_string_path_and_any_iterable(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    assert append_messages(str(path), (m for m in [HumanMessage("a"), AIMessage("b")])) == 2
    assert flatten_transcript(path.read_bytes()).messages == 2


@pytest.mark.parametrize("bad", ["just a string", {"role": "user", "content": "x"}, None])
def test_append_messages_refuses_what_is_not_a_message_and_writes_nothing(
        tmp_path: Path, bad: Any) -> None:
    path = tmp_path / "t.jsonl"
    with pytest.raises(ContentError, match="LangChain messages"):
        append_messages(path, [HumanMessage("ok"), bad])
    assert not path.exists()


def test_append_messages_refuses_a_symlinked_folder(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    (tmp_path / "sessions").symlink_to(real)
    with pytest.raises(WorkspaceError, match="symlink"):
        append_messages(tmp_path / "sessions" / "t.jsonl", [HumanMessage("x")])
    assert list(real.iterdir()) == []


def test_append_messages_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").symlink_to(tmp_path / "missing.jsonl")
    with pytest.raises(WorkspaceError, match="symlink"):
        append_messages(tmp_path / "t.jsonl", [HumanMessage("x")])
    assert not (tmp_path / "missing.jsonl").exists()


def test_append_messages_refuses_a_fifo_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(WorkspaceError, match="not a regular file"):
        append_messages(fifo, [HumanMessage("x")])


HOLD_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, sys.argv[2][:30].encode())     # half a record, under the lock
print("locked", flush=True)
sys.stdin.readline()                        # until the test says go
os.write(fd, sys.argv[2][30:].encode() + b"\\n")
os.close(fd)                                # releases the lock
"""


def _waits_for_flock(path: Path, thread: threading.Thread) -> bool:
    """True once /proc/locks shows a blocked flock on ``path``; False if the thread ended."""
    inode = f":{path.stat().st_ino} "
    for _ in range(10_000):  # bounded; each turn yields the CPU
        if not thread.is_alive():
            return False
        locks = Path("/proc/locks").read_text()
        if any("->" in line and "FLOCK" in line and inode in line
               for line in locks.splitlines()):
            return True
        thread.join(timeout=0.001)
    return False


def test_append_messages_waits_for_another_process_holding_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    held = json.dumps(msg("user", "written by the lock holder"))
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path), held],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdin is not None
    assert holder.stdout.readline() == "locked\n"
    errors: list[BaseException] = []

    def ours() -> None:
        try:
            append_messages(path, [AIMessage("written after the lock was released")])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=ours)
    thread.start()
    try:
        # Let the holder finish only once the kernel lists our append as waiting for it.
        assert _waits_for_flock(path, thread), "append_messages did not wait for the lock"
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.wait(timeout=60) == 0
    finally:
        if holder.poll() is None:
            holder.kill()  # releases the lock: the thread below cannot hang
        holder.wait()
    thread.join(timeout=60)
    assert not thread.is_alive() and errors == []
    # Had we not waited, our record would have split the holder's half-written one.
    result = flatten_transcript(path.read_bytes())
    assert result.text.split("\n") == [
        "User: written by the lock holder", "Assistant: written after the lock was released"]
    assert (result.line_map, result.malformed) == ((1, 2), 0)


# ---------------------------------------------------------------------------- indexable prefix


@pytest.mark.parametrize(("data", "kept"), [
    (b'{"type": "message"}\n{"type": "mess', b'{"type": "message"}\n'),  # being written
    (b'{"type": "message"}\n{"a": 1}', b'{"type": "message"}\n{"a": 1}'),  # no final newline
    (b'{"type": "message"}\n', b'{"type": "message"}\n'),
    (b'{"half', b""),
    (b"", b""),
    (b'{"a": 1}\n  ', b'{"a": 1}\n  '),  # trailing blanks are not a record
])
def test_indexable_prefix_leaves_out_only_a_record_still_being_written(
        data: bytes, kept: bytes) -> None:
    assert indexable_prefix(data) == kept
