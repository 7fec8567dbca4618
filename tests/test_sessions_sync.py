"""Session transcripts as an index source: delta thresholds, backfill, rewrites, malformed-line
counts, JSONL-line citations through ``MemoryIndex.search``, per-agent isolation, migration."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.cli.app import main
from openclaw_memory.errors import ConfigError, PathRefusedError
from openclaw_memory.indexing.sync import Syncer
from openclaw_memory.sessions.delta import SessionDelta, is_due
from openclaw_memory.store import SCHEMA_VERSION
from openclaw_memory.store.schema import _MIGRATIONS

# Small chunks: every message line is a chunk of its own, so citations are exact per line.
ONE_LINE_CHUNKS = {"tokens": 16, "overlap": 0}


def record(role: str, text: str) -> bytes:
    return json.dumps({"type": "message", "message": {"role": role, "content": text}}).encode()


def append(path: Path, *lines: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in lines))


def open_index(ws: Path, **sessions: Any) -> MemoryIndex:
    extra: dict[str, Any] = {}
    if "chunking" in sessions:
        extra["chunking"] = sessions.pop("chunking")
    if "index_path" in sessions:
        extra["index_path"] = sessions.pop("index_path")
    return MemoryIndex.open(ws, embedding={"provider": "none"},
                            sessions={"enabled": True, **sessions}, **extra)


def hit_paths(memory: MemoryIndex, query: str) -> list[str]:
    response = memory.search(query, min_score=0, sources=("sessions",))
    return [hit.path for hit in response.results]


def pending(memory: MemoryIndex, path: str) -> dict[str, Any]:
    return next(d for d in memory.pending_sessions() if d["path"] == path)


@pytest.fixture()
def ws(workspace: Path) -> Path:
    append(workspace / "sessions" / "alpha.jsonl",
           record("user", "Where did we park the zeppelin?"),
           record("assistant", "In hangar seven."))
    append(workspace / "sessions" / "beta.jsonl", record("user", "Order more marmalade."))
    return workspace


# ---------------------------------------------------------------------------- backfill


def test_first_sync_backfills_every_existing_transcript(ws: Path) -> None:
    with open_index(ws) as memory:
        report = memory.sync()
        assert report.indexed == 6  # 4 Markdown notes + 2 transcripts
        assert hit_paths(memory, "zeppelin") == ["sessions/alpha.jsonl"]
        assert hit_paths(memory, "marmalade") == ["sessions/beta.jsonl"]
        assert all(not d["due"] and d["pending_bytes"] == 0 for d in memory.pending_sessions())


def test_a_transcript_that_appears_later_is_indexed_at_once(ws: Path) -> None:
    with open_index(ws) as memory:
        memory.sync()
        append(ws / "sessions" / "gamma.jsonl", record("user", "Feed the axolotl."))
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "axolotl") == ["sessions/gamma.jsonl"]


# ---------------------------------------------------------------------------- thresholds


def test_a_small_append_waits_for_the_thresholds(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws) as memory:
        memory.sync()
        before = alpha.stat().st_size
        append(alpha, record("user", "Also the walrus."))
        report = memory.sync()
        assert (report.indexed, report.sessions_deferred) == (0, 1)
        assert hit_paths(memory, "walrus") == []
        delta = pending(memory, "sessions/alpha.jsonl")
        assert delta["pending_bytes"] == alpha.stat().st_size - before
        assert (delta["pending_lines"], delta["due"], delta["indexed_lines"]) == (1, False, 2)
        # Deferred transcripts do not make the index look out of date.
        assert Syncer(memory.settings, memory.workspace, None).pending(memory.store) == 0


def test_a_touched_transcript_is_unchanged_not_deferred(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws) as memory:
        memory.sync()
        stat = alpha.stat()
        os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
        report = memory.sync()
        assert (report.indexed, report.sessions_deferred, report.unchanged) == (0, 0, 6)
        assert not pending(memory, "sessions/alpha.jsonl")["due"]


def test_the_line_threshold_triggers_a_reindex(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws, delta_lines=5) as memory:
        memory.sync()
        append(alpha, *(record("user", f"note {i}") for i in range(4)))
        assert memory.sync().sessions_deferred == 1
        assert pending(memory, "sessions/alpha.jsonl")["pending_lines"] == 4
        append(alpha, record("assistant", "The walrus is fine."))
        assert pending(memory, "sessions/alpha.jsonl")["due"] is True
        report = memory.sync()
        assert (report.indexed, report.sessions_deferred) == (1, 0)
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]
        after = pending(memory, "sessions/alpha.jsonl")
        assert (after["pending_bytes"], after["pending_lines"], after["indexed_lines"]) == (0, 0, 7)


def test_the_byte_threshold_triggers_a_reindex(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws, delta_bytes=2_000, delta_lines=1_000) as memory:
        memory.sync()
        append(alpha, record("user", "tiny walrus"))
        assert memory.sync().sessions_deferred == 1
        append(alpha, record("assistant", "narwhal " * 300))  # one line of ~2.4 kB
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]
        assert set(hit_paths(memory, "narwhal")) == {"sessions/alpha.jsonl"}  # cut in pieces


def test_the_default_thresholds_are_openclaws(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws) as memory:
        assert (memory.settings.sessions.delta_bytes, memory.settings.sessions.delta_lines) == (
            100_000, 50)
        memory.sync()
        append(alpha, *(record("user", f"line {i}") for i in range(49)))
        assert memory.sync().sessions_deferred == 1
        append(alpha, record("user", "fiftieth walrus"))
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]


def test_a_zero_threshold_reindexes_on_every_change(ws: Path) -> None:
    with open_index(ws, delta_bytes=0) as memory:
        memory.sync()
        append(ws / "sessions" / "alpha.jsonl", record("user", "walrus"))
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]


def test_the_delta_baseline_survives_reopening_the_index(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws, delta_lines=3) as memory:
        memory.sync()
        append(alpha, record("user", "one"), record("user", "two"))
        assert memory.sync().sessions_deferred == 1
    # A new process sees what was indexed, not the size the file had when it started.
    with open_index(ws, delta_lines=3) as memory:
        assert pending(memory, "sessions/alpha.jsonl")["pending_lines"] == 2
        assert memory.sync().sessions_deferred == 1
        append(alpha, record("user", "three walrus"))
    with open_index(ws, delta_lines=3) as memory:
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]


def test_force_sessions_reindexes_below_the_thresholds(ws: Path) -> None:
    with open_index(ws) as memory:
        memory.sync()
        append(ws / "sessions" / "alpha.jsonl", record("user", "walrus"))
        assert memory.sync().sessions_deferred == 1
        report = memory.sync(force_sessions=True)
        assert (report.indexed, report.full_rebuild) == (1, False)
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]


def test_a_full_sync_indexes_pending_transcripts(ws: Path) -> None:
    with open_index(ws) as memory:
        memory.sync()
        append(ws / "sessions" / "alpha.jsonl", record("user", "walrus"))
        assert memory.sync(full=True).full_rebuild
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]
        assert memory.pending_sessions()[0]["pending_bytes"] == 0


# ---------------------------------------------------------------------------- rewrites


def test_a_shrunk_transcript_is_reindexed_at_once(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws) as memory:
        memory.sync()
        alpha.write_bytes(record("user", "Only the walrus now.") + b"\n")
        delta = pending(memory, "sessions/alpha.jsonl")
        assert (delta["rewritten"], delta["due"]) == (True, True)
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "zeppelin") == []
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]


def test_a_same_size_rewrite_of_the_indexed_bytes_is_reindexed_at_once(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws) as memory:
        memory.sync()
        data = alpha.read_bytes()
        alpha.write_bytes(data.replace(b"zeppelin", b"airships"))
        assert len(alpha.read_bytes()) == len(data)
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "zeppelin") == []
        assert hit_paths(memory, "airships") == ["sessions/alpha.jsonl"]


def test_a_rewrite_that_also_grows_is_not_mistaken_for_an_append(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    with open_index(ws) as memory:
        memory.sync()
        alpha.write_bytes(alpha.read_bytes().replace(b"hangar seven", b"hangar seventeen"))
        assert pending(memory, "sessions/alpha.jsonl")["rewritten"] is True
        assert memory.sync().indexed == 1
        assert hit_paths(memory, "seventeen") == ["sessions/alpha.jsonl"]


def test_an_edit_between_the_anchors_waits_but_force_and_full_catch_it(ws: Path) -> None:
    # The rewrite check reads 4 KiB at each end of the indexed bytes; a same-length edit
    # strictly between them looks like no change until a forced or full sync compares hashes.
    big = ws / "sessions" / "big.jsonl"
    append(big, *(record("user", f"filler message number {i:04d}") for i in range(400)))
    with open_index(ws) as memory:
        memory.sync()
        big.write_bytes(big.read_bytes().replace(b"number 0200", b"walrus 0200"))
        assert memory.sync().indexed == 0
        assert memory.sync(force_sessions=True).indexed == 1
        assert hit_paths(memory, "walrus") == ["sessions/big.jsonl"]


def test_a_deleted_transcript_leaves_the_index(ws: Path) -> None:
    with open_index(ws) as memory:
        memory.sync()
        (ws / "sessions" / "alpha.jsonl").unlink()
        assert memory.sync().deleted == 1
        assert hit_paths(memory, "zeppelin") == []
        assert "sessions/alpha.jsonl" not in memory.store.session_states()


# ---------------------------------------------------------------------------- malformed lines


def test_malformed_lines_are_counted_in_the_report_and_persisted(ws: Path) -> None:
    damaged = ws / "sessions" / "damaged.jsonl"
    append(damaged, record("user", "valid walrus"), b"{broken", b"\xff\xfe", b"[1, 2]",
           record("assistant", "still fine"))
    with open_index(ws) as memory:
        report = memory.sync()
        assert report.malformed_lines == 3
        assert report.as_dict()["malformed_lines"] == 3
        assert any("damaged.jsonl: 3 malformed" in w for w in report.warnings)
        assert hit_paths(memory, "walrus") == ["sessions/damaged.jsonl"]
    with open_index(ws) as memory:
        assert pending(memory, "sessions/damaged.jsonl")["malformed"] == 3
        assert memory.sync().malformed_lines == 0  # nothing re-read: nothing newly counted


def test_a_record_still_being_written_is_not_malformed(ws: Path) -> None:
    alpha = ws / "sessions" / "alpha.jsonl"
    full = record("user", "the walrus arrives")
    with open_index(ws, delta_bytes=0) as memory:
        memory.sync()
        with alpha.open("ab") as handle:
            handle.write(full[:20])  # a writer is half-way through this line
        report = memory.sync()
        assert report.malformed_lines == 0
        assert pending(memory, "sessions/alpha.jsonl")["pending_bytes"] == 20
        with alpha.open("ab") as handle:
            handle.write(full[20:] + b"\n")
        report = memory.sync()
        assert (report.indexed, report.malformed_lines) == (1, 0)
        assert hit_paths(memory, "walrus") == ["sessions/alpha.jsonl"]


def test_a_final_record_without_newline_is_indexed(ws: Path) -> None:
    (ws / "sessions" / "nonl.jsonl").write_bytes(record("user", "walrus without newline"))
    with open_index(ws) as memory:
        assert memory.sync().malformed_lines == 0
        assert hit_paths(memory, "walrus") == ["sessions/nonl.jsonl"]


# ---------------------------------------------------------------------------- citations


def jsonl_line(path: Path, number: int) -> str:
    return path.read_bytes().split(b"\n")[number - 1].decode()


def test_hits_cite_jsonl_line_numbers_through_search(ws: Path) -> None:
    chat = ws / "sessions" / "chat.jsonl"
    append(chat,
           json.dumps({"type": "session", "id": "s1"}).encode(),             # 1
           record("user", "What is the capital of Freedonia?"),             # 2
           b"",                                                             # 3
           json.dumps({"type": "message", "message": {"role": "toolResult",
                                                      "content": "x"}}).encode(),  # 4
           b"{torn",                                                        # 5
           record("assistant", "The capital of Freedonia is Fredville."))   # 6
    with open_index(ws, chunking=ONE_LINE_CHUNKS) as memory:
        memory.sync()
        hits = memory.search("Fredville", min_score=0, sources=("sessions",)).results
        assert [(h.path, h.start_line, h.end_line) for h in hits] == [
            ("sessions/chat.jsonl", 6, 6)]
        assert hits[0].citation == "sessions/chat.jsonl#L6"
        assert "Fredville" in jsonl_line(chat, hits[0].start_line)


def test_citations_stay_exact_after_an_incremental_reindex(ws: Path) -> None:
    chat = ws / "sessions" / "chat.jsonl"
    append(chat, record("user", "first question about llamas grazing on mountain pastures"))
    with open_index(ws, chunking=ONE_LINE_CHUNKS, delta_lines=4) as memory:
        memory.sync()
        append(chat, json.dumps({"type": "custom", "customType": "x"}).encode(), b"not json",
               record("assistant", "llamas hum quietly when they are content and well fed"),
               record("user", "and now a question about the okapi in the forest"))
        assert memory.sync().indexed == 1  # 4 new JSONL lines reach delta_lines
        for word, line in (("llamas", 1), ("okapi", 5)):
            hits = memory.search(word, min_score=0, sources=("sessions",)).results
            cited = {(h.start_line, h.end_line) for h in hits}
            assert (line, line) in cited, (word, cited)
            for hit in hits:
                assert word in jsonl_line(chat, hit.start_line)


def test_hits_span_jsonl_lines_with_default_chunking(ws: Path) -> None:
    with open_index(ws) as memory:
        memory.sync()
        hit = memory.search("hangar", min_score=0, sources=("sessions",)).results[0]
        assert (hit.path, hit.start_line, hit.end_line) == ("sessions/alpha.jsonl", 1, 2)


# ---------------------------------------------------------------------------- per agent


def two_agents(root: Path) -> None:
    append(root / "alpha" / "s.jsonl", record("user", "alpha secret: the vault code is 1234"))
    append(root / "beta" / "s.jsonl", record("user", "beta secret: the boat is blue"))


def test_two_agents_side_by_side_never_see_each_others_transcripts(ws: Path) -> None:
    two_agents(ws / "sessions")
    with open_index(ws, agent_id="alpha") as alpha, open_index(ws, agent_id="beta") as beta:
        alpha.sync()
        beta.sync()
        assert alpha.index_path != beta.index_path
        assert hit_paths(alpha, "vault") == ["sessions/s.jsonl"]
        assert hit_paths(alpha, "boat") == []
        assert hit_paths(beta, "boat") == ["sessions/s.jsonl"]
        assert hit_paths(beta, "vault") == []
        # The workspace-level sessions/*.jsonl belong to no agent.
        assert hit_paths(alpha, "zeppelin") == []
        # Both still search the shared Markdown memory.
        assert alpha.search("PostgreSQL").results and beta.search("PostgreSQL").results


def test_the_openclaw_layout_with_an_agent_placeholder(ws: Path, tmp_path: Path) -> None:
    two_agents(tmp_path / "agents")
    for agent in ("alpha", "beta"):
        (tmp_path / "agents" / agent / "s.jsonl").rename(
            tmp_path / "agents" / agent / "keep.jsonl")
        (tmp_path / "agents" / agent / "sessions").mkdir()
        (tmp_path / "agents" / agent / "keep.jsonl").rename(
            tmp_path / "agents" / agent / "sessions" / "s.jsonl")
    template = str(tmp_path / "agents" / "{agent_id}" / "sessions")
    with open_index(ws, agent_id="beta", directory=template) as beta:
        beta.sync()
        assert hit_paths(beta, "boat") == ["sessions/s.jsonl"]
        assert hit_paths(beta, "vault") == []


def test_switching_agents_on_one_index_file_rebuilds_without_the_old_agent(
        ws: Path, tmp_path: Path) -> None:
    two_agents(ws / "sessions")
    index = tmp_path / "shared.sqlite"
    with open_index(ws, agent_id="alpha", index_path=index) as memory:
        memory.sync()
    with open_index(ws, agent_id="beta", index_path=index) as memory:
        report = memory.sync()
        assert report.full_rebuild and "sessions_dir" in (report.rebuild_reason or "")
        assert hit_paths(memory, "vault") == []
        assert hit_paths(memory, "boat") == ["sessions/s.jsonl"]


@pytest.mark.parametrize("bad", ["../etc", "a/b", "", ".hidden", "x" * 65])
def test_agent_ids_must_be_one_safe_name(ws: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="agent_id"):
        open_index(ws, agent_id=bad)


def test_an_agent_placeholder_without_an_agent_is_a_config_error(ws: Path) -> None:
    with pytest.raises(ConfigError, match="agent_id"):
        open_index(ws, directory="agents/{agent_id}/sessions")


# ---------------------------------------------------------------------------- migration


V1_SESSION_STATE = _MIGRATIONS[0][-1]


def downgrade_to_schema_1(index: Path) -> None:
    """Make ``index`` what schema 1 left on disk: its session_state, version and fingerprint.

    Runs while no index connection is open in this process (see the test below).
    """
    conn = sqlite3.connect(index)
    conn.execute("drop table session_state")
    conn.execute(V1_SESSION_STATE)
    conn.execute("pragma user_version = 1")
    (raw,) = conn.execute("select value from meta where key = 'fingerprint'").fetchone()
    old = json.loads(raw)
    old["schema"] = 1
    old.pop("sessions_dir")
    conn.execute("update meta set value = ? where key = 'fingerprint'", (json.dumps(old),))
    conn.commit()
    conn.close()


def test_an_index_of_schema_1_migrates_and_backfills_the_delta_baselines(
        ws: Path, tmp_path: Path) -> None:
    assert SCHEMA_VERSION >= 2  # 2 added session_state's delta baselines
    index = tmp_path / "old.sqlite"
    with open_index(ws, index_path=index) as memory:
        memory.sync()
    downgrade_to_schema_1(index)
    with open_index(ws, index_path=index) as memory:
        # Through the index's own connection: a second SQLite library in this process
        # would break the first one's POSIX locks when it closes.
        assert memory.store.query("pragma user_version")[0][0] == SCHEMA_VERSION
        columns = [r[1] for r in memory.store.query("pragma table_info(session_state)")]
        assert columns == ["path", "indexed_bytes", "indexed_lines", "malformed", "anchor",
                           "indexed_at"]
        assert memory.store.query("select count(*) from chunks where path = ?",
                                  ("sessions/alpha.jsonl",))[0][0] == 1  # old rows kept
        report = memory.sync()  # first sync: the schema is part of the fingerprint
        assert report.full_rebuild and "schema" in (report.rebuild_reason or "")
        assert hit_paths(memory, "zeppelin") == ["sessions/alpha.jsonl"]
        assert set(memory.store.session_states()) == {"sessions/alpha.jsonl",
                                                      "sessions/beta.jsonl"}
        append(ws / "sessions" / "alpha.jsonl", record("user", "walrus"))
        assert memory.sync().sessions_deferred == 1


# ---------------------------------------------------------------------------- live writer


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from langchain_core.messages import AIMessage, HumanMessage
    from openclaw_memory.sessions.writer import append_messages
    path = Path(sys.argv[1])
    for i in range(300):
        append_messages(path, [HumanMessage(f"question {i} about kiwis"),
                               AIMessage(f"answer {i}")])
""")


def test_syncing_while_another_process_appends_loses_nothing(ws: Path) -> None:
    live = ws / "sessions" / "live.jsonl"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(live)])
    reports = []
    with open_index(ws, delta_bytes=0) as memory:
        try:
            while not live.exists() and writer.poll() is None:
                memory.sync()  # the writer is still importing
            for _ in range(5_000):  # bounded: stops with the writer
                reports.append(memory.sync())
                if writer.poll() is not None:
                    break
        finally:
            assert writer.wait(timeout=120) == 0
        overlapping = sum(r.indexed for r in reports)
        reports.append(memory.sync())
        print(f"{overlapping} syncs re-indexed the transcript while it was being written")
        assert overlapping >= 1
        assert all(r.malformed_lines == 0 for r in reports)
        assert pending(memory, "sessions/live.jsonl")["indexed_lines"] == 600
        for i in (0, 299):
            assert hit_paths(memory, f"question {i} kiwis")[0] == "sessions/live.jsonl"


# ---------------------------------------------------------------------------- command line


def cli(capsys: pytest.CaptureFixture[str], ws: Path, *args: str) -> tuple[int, str, str]:
    """``openclaw-memory`` through its entry point, in this process (the parser, the flags and
    the output are the real ones; exit codes of real processes are covered by test_cli)."""
    code = main(["--workspace", str(ws), "--provider", "none", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_command_line_indexes_one_agents_transcripts(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transcript = ws / "sessions" / "bob" / "s.jsonl"
    append(transcript, record("user", "bob grows turnips"), b"{broken")
    code, out, err = cli(capsys, ws, "--agent", "bob", "index", "--json")
    assert code == 0, err
    assert json.loads(out)["malformed_lines"] == 1
    append(transcript, record("assistant", "and parsnips"))
    code, out, _ = cli(capsys, ws, "--agent", "bob", "index")
    assert "1 below the delta thresholds" in out
    code, out, _ = cli(capsys, ws, "--agent", "bob", "index", "--force-sessions", "--json")
    assert (json.loads(out)["indexed"], json.loads(out)["sessions_deferred"]) == (1, 0)
    code, out, _ = cli(capsys, ws, "--agent", "bob", "search", "parsnips", "--json")
    assert [h["citation"] for h in json.loads(out)["results"] if h["source"] == "sessions"] == [
        "sessions/s.jsonl#L1-L3"]
    with pytest.raises(SystemExit) as refused:
        cli(capsys, ws, "--agent", "../alice", "status")
    assert refused.value.code == 2 and "agent id" in capsys.readouterr().err


# ---------------------------------------------------------------------------- the rule


@pytest.mark.parametrize(("pending_bytes", "pending_lines", "delta_bytes", "delta_lines", "due"), [
    (0, 0, 100_000, 50, False),
    (99_999, 49, 100_000, 50, False),
    (100_000, 0, 100_000, 50, True),
    (10, 50, 100_000, 50, True),
    (1, 0, 0, 50, True),       # 0 = any change
    (1, 0, 100_000, 0, True),
    (0, 0, 0, 0, False),       # no change at all is never due
])
def test_the_threshold_rule(pending_bytes: int, pending_lines: int, delta_bytes: int,
                            delta_lines: int, due: bool) -> None:
    delta = SessionDelta("sessions/x.jsonl", pending_bytes, pending_lines)
    assert is_due(delta, delta_bytes=delta_bytes, delta_lines=delta_lines) is due


def test_new_and_rewritten_transcripts_are_always_due() -> None:
    for delta in (SessionDelta("x", 0, 0, new=True), SessionDelta("x", 0, 0, rewritten=True)):
        assert is_due(delta, delta_bytes=10**9, delta_lines=10**9)


def test_a_transcript_citation_from_search_reads_back_its_jsonl_lines(ws: Path) -> None:
    append(ws / "sessions" / "alpha.jsonl", b'{"type": "tool", "content": "ignored"}',
           record("user", "And the blimp?"))
    with open_index(ws) as memory:
        hit = memory.search("zeppelin").results[0]
        assert hit.citation is not None and hit.citation.startswith("sessions/alpha.jsonl#L")
        note = memory.get(hit.citation)
        assert note.path == "sessions/alpha.jsonl" and note.start_line == hit.start_line
        assert "User: Where did we park the zeppelin?" in note.text
        span = memory.get("sessions/alpha.jsonl#L2-L4")
        assert span.text.split("\n") == ["Assistant: In hangar seven.", "", "User: And the blimp?"]
        with pytest.raises(PathRefusedError):
            memory.get("sessions/../MEMORY.md.jsonl#L1")
