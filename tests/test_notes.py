"""memory_get / memory_write on files: ranges, daily appends, MEMORY.md edits, locking."""

from __future__ import annotations

import errno
import fcntl
import multiprocessing
import os
import stat
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from privileges import CAN_TEST_PERMISSIONS, unprivileged_copy

from openclaw_memory.errors import (
    ConfigError,
    OpenClawMemoryError,
    PathRefusedError,
    WorkspaceError,
)
from openclaw_memory.files.notes import (
    append_daily,
    daily_note_path,
    read_note,
    today,
    write_memory_md,
)
from openclaw_memory.files.workspace import Workspace

NOON = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
DAILY = "memory/2024-05-01.md"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").write_text("one\ntwo\nthree\nfour\nfive\n", encoding="utf-8")
    return ws


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


# ---------------------------------------------------------------------------- read_note


def test_read_whole_file_returns_text_unchanged(ws: Workspace) -> None:
    note = read_note(ws, "MEMORY.md")
    assert note.text == "one\ntwo\nthree\nfour\nfive\n"
    assert (note.start_line, note.end_line, note.total_lines, note.missing) == (1, 5, 5, False)
    assert note.path == "MEMORY.md"


def test_read_missing_file_is_empty_not_an_error(ws: Workspace) -> None:
    note = read_note(ws, "memory/2030-01-01.md")
    assert (note.text, note.missing, note.total_lines) == ("", True, 0)
    assert note.path == "memory/2030-01-01.md"


def test_read_in_a_missing_workspace_is_empty(tmp_path: Path) -> None:
    assert read_note(Workspace(tmp_path / "absent"), "MEMORY.md").missing


@pytest.mark.parametrize(
    ("from_line", "lines", "text", "start", "end"),
    [
        (2, 2, "two\nthree", 2, 3),
        (4, None, "four\nfive", 4, 5),
        (None, 2, "one\ntwo", 1, 2),
        (0, 2, "one\ntwo", 1, 2),  # 0 and negatives clamp to line 1
        (-7, 1, "one", 1, 1),
        (3, 0, "three\nfour\nfive", 3, 5),  # lines=0 means "to the end"
        (3, -4, "three", 3, 3),  # negative count clamps to one line
        (5, 100, "five", 5, 5),
        (6, 1, "", 6, 5),  # past the end: empty, never an error
        (10_000, 10, "", 10_000, 9_999),
    ],
)
def test_read_ranges_are_clamped_and_never_raise(
    ws: Workspace, from_line: int | None, lines: int | None, text: str, start: int, end: int
) -> None:
    note = read_note(ws, "MEMORY.md", from_line, lines)
    assert (note.text, note.start_line, note.end_line, note.total_lines) == (text, start, end, 5)


def test_read_invalid_utf8_is_replaced_not_fatal(root: Path, ws: Workspace) -> None:
    (root / "MEMORY.md").write_bytes(b"caf\xe9\n\xff\xfe ok\n")
    note = read_note(ws, "MEMORY.md", 2, 1)
    assert note.text == "\ufffd\ufffd ok"


def test_read_counts_lines_on_newlines_only(root: Path, ws: Workspace) -> None:
    # U+2028 and form feed are line breaks to str.splitlines but not to the chunker.
    (root / "MEMORY.md").write_text("a\u2028b\x0cc\nsecond\n", encoding="utf-8")
    assert read_note(ws, "MEMORY.md", 2, 1).text == "second"
    assert read_note(ws, "MEMORY.md").total_lines == 2


def test_read_file_without_final_newline_counts_its_last_line(root: Path, ws: Workspace) -> None:
    (root / "MEMORY.md").write_text("a\nb", encoding="utf-8")
    assert read_note(ws, "MEMORY.md", 2, 5).text == "b"
    assert read_note(ws, "MEMORY.md").total_lines == 2


def test_read_goes_through_the_gate(root: Path, ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("secret")
    (root / "memory").mkdir()
    (root / "memory" / "leak.md").symlink_to(tmp_path / "secret.md")
    for path in ("../secret.md", str(tmp_path / "secret.md"), "memory/leak.md", "x.txt"):
        with pytest.raises(PathRefusedError):
            read_note(ws, path)


def test_read_extra_path_outside_the_workspace(root: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("g1\ng2\n")
    note = read_note(Workspace(root, extra_paths=[docs]), str(docs / "guide.md"), 2, 1)
    assert note.text == "g2"


# ---------------------------------------------------------------------------- dates


def test_today_uses_the_configured_zone_late_utc_is_tomorrow_in_tokyo() -> None:
    late = datetime(2024, 3, 1, 23, 30, tzinfo=UTC)
    assert daily_note_path("Asia/Tokyo", late) == "memory/2024-03-02.md"
    assert daily_note_path("UTC", late) == "memory/2024-03-01.md"
    assert daily_note_path("America/Los_Angeles", late) == "memory/2024-03-01.md"


def test_append_daily_writes_to_tokyo_date_when_utc_is_2330(root: Path, ws: Workspace) -> None:
    late = datetime(2024, 3, 1, 23, 30, tzinfo=UTC)
    result = append_daily(ws, "- shipped", tz="Asia/Tokyo", now=late)
    assert result.path == "memory/2024-03-02.md"
    assert (root / "memory" / "2024-03-02.md").read_text() == "- shipped\n"


def test_today_falls_back_to_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    late = datetime(2024, 3, 1, 23, 30, tzinfo=UTC)
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert str(today(None, late)) == "2024-03-02"
        assert str(today("  ", late)) == "2024-03-02"  # blank means "not configured"
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../../etc/passwd", "America", "UTC+9"])
def test_invalid_time_zone_is_a_config_error(ws: Workspace, zone: str) -> None:
    with pytest.raises(ConfigError, match="time zone"):
        append_daily(ws, "x", tz=zone, now=NOON)


# ---------------------------------------------------------------------------- append_daily


def test_append_daily_creates_memory_folder_and_file(root: Path, ws: Workspace) -> None:
    result = append_daily(ws, "- decided to use SQLite\n", now=NOON, tz="UTC")
    assert (result.path, result.start_line, result.end_line) == (DAILY, 1, 1)
    assert (result.appended, result.reason, result.written) == (True, "appended", True)
    assert (root / DAILY).read_text() == "- decided to use SQLite\n"


def test_append_daily_separates_notes_and_reports_their_lines(ws: Workspace) -> None:
    append_daily(ws, "first", now=NOON, tz="UTC")
    second = append_daily(ws, "second\nspans two lines", now=NOON, tz="UTC")
    assert (second.start_line, second.end_line) == (3, 4)
    assert read_note(ws, DAILY).text == "first\n\nsecond\nspans two lines\n"
    assert read_note(ws, DAILY, second.start_line, 2).text == "second\nspans two lines"


def test_append_daily_terminates_an_unfinished_last_line_first(root: Path, ws: Workspace) -> None:
    (root / "memory").mkdir()
    (root / DAILY).write_bytes(b"hand-written, no newline")
    result = append_daily(ws, "agent note", now=NOON, tz="UTC")
    assert (root / DAILY).read_bytes() == b"hand-written, no newline\n\nagent note\n"
    assert (result.start_line, result.end_line) == (3, 3)


def test_append_daily_after_a_blank_line_adds_no_extra_blank(root: Path, ws: Workspace) -> None:
    (root / "memory").mkdir()
    (root / DAILY).write_text("old\n\n")
    result = append_daily(ws, "new", now=NOON, tz="UTC")
    assert (root / DAILY).read_text() == "old\n\nnew\n"
    assert result.start_line == 3


def test_append_daily_never_appends_the_same_note_twice(root: Path, ws: Workspace) -> None:
    first = append_daily(ws, "- prefers tea", now=NOON, tz="UTC")
    append_daily(ws, "- other", now=NOON, tz="UTC")
    again = append_daily(ws, "\n\n- prefers tea   \n", now=NOON, tz="UTC")
    assert (again.appended, again.reason, again.written) == (False, "duplicate", False)
    assert (again.start_line, again.end_line) == (first.start_line, first.end_line)
    assert (root / DAILY).read_text().count("prefers tea") == 1


def test_duplicate_check_matches_whole_blocks_not_substrings(root: Path, ws: Workspace) -> None:
    (root / "memory").mkdir()
    (root / DAILY).write_text("- prefers tea\n- and biscuits\n")
    result = append_daily(ws, "- prefers tea", now=NOON, tz="UTC")
    assert result.appended
    assert (root / DAILY).read_text().count("- prefers tea") == 2


def test_duplicate_check_finds_multi_paragraph_notes(ws: Workspace) -> None:
    note = "## Decisions\n\n- keep SQLite\n- drop Redis"
    append_daily(ws, note, now=NOON, tz="UTC")
    assert append_daily(ws, note, now=NOON, tz="UTC").reason == "duplicate"


def test_append_daily_keeps_first_line_indentation(root: Path, ws: Workspace) -> None:
    append_daily(ws, "\n\n    indented code\n", now=NOON, tz="UTC")
    assert (root / DAILY).read_text() == "    indented code\n"


def test_append_daily_normalises_crlf(root: Path, ws: Workspace) -> None:
    append_daily(ws, "a\r\nb\rc", now=NOON, tz="UTC")
    assert (root / DAILY).read_bytes() == b"a\nb\nc\n"


@pytest.mark.parametrize("content", ["", "   ", "\n\n\t\n"])
def test_empty_note_is_refused(ws: Workspace, content: str) -> None:
    with pytest.raises(OpenClawMemoryError, match="empty"):
        append_daily(ws, content, now=NOON, tz="UTC")


def test_note_with_nul_byte_is_refused(root: Path, ws: Workspace) -> None:
    with pytest.raises(OpenClawMemoryError, match="NUL"):
        append_daily(ws, "a\x00b", now=NOON, tz="UTC")
    assert not (root / "memory").exists()


def test_note_with_lone_surrogate_is_refused(ws: Workspace) -> None:
    with pytest.raises(OpenClawMemoryError, match="not valid text"):
        append_daily(ws, "bad \udcff", now=NOON, tz="UTC")


def test_append_daily_refuses_a_symlinked_daily_file(root: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text("untouched\n")
    (root / "memory").mkdir()
    (root / DAILY).symlink_to(target)
    with pytest.raises(PathRefusedError):
        append_daily(Workspace(root), "x", now=NOON, tz="UTC")
    assert target.read_text() == "untouched\n"


def test_append_daily_refuses_a_symlinked_memory_folder(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "memory").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(PathRefusedError):
        append_daily(Workspace(root), "x", now=NOON, tz="UTC")
    assert list(elsewhere.iterdir()) == []


def test_append_daily_in_a_missing_workspace_is_a_workspace_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        append_daily(Workspace(tmp_path / "absent"), "x", now=NOON, tz="UTC")


def test_read_only_file_system_is_a_workspace_error(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    def read_only(*args: object, **kwargs: object) -> int:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Workspace, "open_file", read_only)
    with pytest.raises(WorkspaceError, match="read-only"):
        append_daily(ws, "x", now=NOON, tz="UTC")


@pytest.mark.skipif(
    not CAN_TEST_PERMISSIONS,
    reason="running as root with no 'nobody' user to drop to: nothing can be made read-only",
)
def test_read_only_workspace_folder_is_a_workspace_error(root: Path) -> None:
    # As root, the append runs as 'nobody' over a copy that nobody owns.
    with unprivileged_copy(root) as (copy, run):
        def append() -> str | None:
            try:
                append_daily(Workspace(copy), "x", now=NOON, tz="UTC")
            except WorkspaceError as exc:
                return str(exc)
            return None

        copy.chmod(0o555)
        try:
            error = run(append)
        finally:
            copy.chmod(0o755)
    assert error is not None and "read-only" in error


def _normalised_lines(note: str) -> list[str]:
    lines = note.replace("\r\n", "\n").replace("\r", "\n").rstrip().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return [line.rstrip() for line in lines]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes=st.lists(st.text(min_size=1, max_size=40).filter(str.strip), min_size=1, max_size=5))
def test_append_is_append_only_and_reported_lines_read_back(
    tmp_path_factory: pytest.TempPathFactory, notes: list[str]
) -> None:
    root = tmp_path_factory.mktemp("prop")
    ws = Workspace(root)
    before = b""
    for note in notes:
        try:
            result = append_daily(ws, note, now=NOON, tz="UTC")
        except OpenClawMemoryError:
            continue  # NUL bytes and lone surrogates are refused before touching the file
        after = (root / DAILY).read_bytes()
        assert after.startswith(before)  # nothing already written ever changes
        before = after
        span = result.end_line - result.start_line + 1
        block = read_note(ws, DAILY, result.start_line, span).text
        assert [line.rstrip() for line in block.split("\n")] == _normalised_lines(note)


# ---------------------------------------------------------------------------- two processes


def _append_many(root: str, who: str, count: int, start: object, out: object) -> None:
    ws = Workspace(Path(root))
    start.wait()  # type: ignore[attr-defined]
    results = []
    for index in range(count):
        note = f"- {who} note {index}\n  detail {index} from {who}"
        result = append_daily(ws, note, now=NOON, tz="UTC")
        results.append((note, result.start_line, result.end_line, result.appended))
    out.put(results)  # type: ignore[attr-defined]


def test_two_processes_appending_lose_nothing_and_never_interleave(root: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    out = context.Queue()
    workers = [
        context.Process(target=_append_many, args=(str(root), who, 200, start, out))
        for who in ("alpha", "beta")
    ]
    for worker in workers:
        worker.start()
    start.set()
    reports = [out.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0

    text = (root / DAILY).read_text()
    blocks = text.rstrip("\n").split("\n\n")
    expected = {
        f"- {w} note {i}\n  detail {i} from {w}" for w in ("alpha", "beta") for i in range(200)
    }
    assert len(blocks) == 400
    assert set(blocks) == expected  # every note whole, none lost, none twice
    lines = text.split("\n")
    for note, start_line, end_line, appended in (r for rep in reports for r in rep):
        assert appended
        assert "\n".join(lines[start_line - 1 : end_line]) == note


# ---------------------------------------------------------------------------- MEMORY.md


def test_write_memory_md_appends_by_default(root: Path, ws: Workspace) -> None:
    result = write_memory_md(ws, "- likes green")
    assert (result.path, result.start_line, result.end_line, result.appended) == (
        "MEMORY.md",
        7,
        7,
        True,
    )
    assert (root / "MEMORY.md").read_text().endswith("five\n\n- likes green\n")


def test_write_memory_md_skips_duplicates(ws: Workspace) -> None:
    write_memory_md(ws, "- likes green")
    assert write_memory_md(ws, "- likes green").reason == "duplicate"


def test_write_memory_md_creates_the_file(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    write_memory_md(Workspace(root), "# Facts")
    assert (root / "MEMORY.md").read_text() == "# Facts\n"


def test_write_memory_md_edits_an_existing_lowercase_file(tmp_path: Path) -> None:
    root = tmp_path / "lower"
    root.mkdir()
    (root / "memory.md").write_text("old\n")
    result = write_memory_md(Workspace(root), "new")
    assert result.path == "memory.md"
    assert (root / "memory.md").read_text() == "old\n\nnew\n"
    assert sorted(p.name for p in root.iterdir()) == ["memory.md"]


def test_replace_swaps_content_atomically_and_keeps_permissions(root: Path, ws: Workspace) -> None:
    (root / "MEMORY.md").chmod(0o600)
    inode_before = (root / "MEMORY.md").stat().st_ino
    result = write_memory_md(ws, "# Rewritten\n\n- fact", mode="replace")
    assert (result.reason, result.appended, result.start_line, result.end_line) == (
        "replaced",
        False,
        1,
        3,
    )
    assert (root / "MEMORY.md").read_text() == "# Rewritten\n\n- fact\n"
    assert stat.S_IMODE((root / "MEMORY.md").stat().st_mode) == 0o600
    assert (root / "MEMORY.md").stat().st_ino != inode_before  # a new file was renamed in
    assert sorted(p.name for p in root.iterdir()) == ["MEMORY.md"]  # no temp file left


def test_replace_refuses_a_symlinked_memory_md(root: Path, tmp_path: Path) -> None:
    target = tmp_path / "target.md"
    target.write_text("keep\n")
    (root / "MEMORY.md").unlink()
    (root / "MEMORY.md").symlink_to(target)
    for mode in ("append", "replace"):
        with pytest.raises(PathRefusedError):
            write_memory_md(Workspace(root), "x", mode=mode)
    assert target.read_text() == "keep\n"
    assert (root / "MEMORY.md").is_symlink()


def test_replace_failure_leaves_the_old_file_and_no_temp(
    root: Path, ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_replace(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(WorkspaceError, match="I/O error"):
        write_memory_md(ws, "new", mode="replace")
    assert (root / "MEMORY.md").read_text().startswith("one\n")
    assert sorted(p.name for p in root.iterdir()) == ["MEMORY.md"]


def test_unknown_write_mode_is_refused(ws: Workspace) -> None:
    with pytest.raises(OpenClawMemoryError, match="mode"):
        write_memory_md(ws, "x", mode="truncate")  # type: ignore[arg-type]


def test_append_waiting_on_a_replaced_file_lands_in_the_new_file(root: Path, ws: Workspace) -> None:
    # Hold the lock on the current MEMORY.md, as a replace in progress does.
    old_fd = os.open(root / "MEMORY.md", os.O_RDONLY)
    fcntl.flock(old_fd, fcntl.LOCK_EX)
    appender = threading.Thread(target=write_memory_md, args=(ws, "- late fact"))
    appender.start()
    time.sleep(0.2)  # the appender is now blocked on the old file's lock
    (root / "new.tmp").write_text("# Replaced\n")
    os.replace(root / "new.tmp", root / "MEMORY.md")
    os.close(old_fd)  # releases the lock
    appender.join(timeout=10)
    assert (root / "MEMORY.md").read_text() == "# Replaced\n\n- late fact\n"
