"""Long syncs show done/total, rate, elapsed and time left on a terminal, and nothing otherwise."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
from pathlib import Path

from cli_entry import ENTRY_POINT

from openclaw_memory.cli.progress import ProgressBar, format_duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_rate_and_time_left_come_from_recent_progress() -> None:
    out, clock = io.StringIO(), Clock()
    bar = ProgressBar(out, enabled=True, clock=clock)
    for done in range(0, 51):  # 50 files in 10 s: 5 files/s, 150 left -> 30 s
        bar(done, 200, "memory/x.md")
        clock.now += 0.2
    last = out.getvalue().split("\r")[-1]
    assert "50/200 files" in last and "5.0 files/s" in last and "0:30 left" in last, last
    assert "0:10 elapsed" in last


def test_a_slow_start_does_not_make_the_estimate_optimistic_forever() -> None:
    out, clock = io.StringIO(), Clock()
    bar = ProgressBar(out, enabled=True, clock=clock)
    for done in range(0, 101):  # the first 100 files (cached) take 1 s ...
        bar(done, 400, "m.md")
        clock.now += 0.01
    for done in range(101, 151):  # ... then 1 file a second
        clock.now += 1.0
        bar(done, 400, "m.md")
    last = out.getvalue().split("\r")[-1]
    assert "1.0 files/s" in last and "4:10 left" in last, last


def test_the_last_update_ends_the_line_without_time_left() -> None:
    out, clock = io.StringIO(), Clock()
    bar = ProgressBar(out, enabled=True, clock=clock)
    for done in range(0, 21):
        bar(done, 20, "m.md")
        clock.now += 0.5
    assert out.getvalue().endswith("\n") and "left" not in out.getvalue().split("\r")[-1]


def test_nothing_is_drawn_off_a_terminal_or_for_a_short_sync() -> None:
    out = io.StringIO()
    ProgressBar(out)(5, 100, "m.md")  # StringIO is not a tty
    ProgressBar(out, enabled=True)(5, 10, "m.md")
    assert out.getvalue() == ""


def test_durations_read_as_clock_time() -> None:
    assert [format_duration(s) for s in (7, 725, 3723)] == ["0:07", "12:05", "1:02:03"]


def test_the_cli_draws_the_bar_on_a_real_terminal(tmp_path: Path) -> None:
    for day in range(1, 41):
        note = tmp_path / "memory" / f"2026-01-{day % 28 + 1:02d}-{day}.md"
        note.parent.mkdir(exist_ok=True)
        note.write_text(f"# Day {day}\n\nWe talked about topic {day}.\n", encoding="utf-8")
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([ENTRY_POINT, "--provider", "none", "--workspace", str(tmp_path),
                             "index"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=secondary, env=dict(os.environ))
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(primary)
    drawn = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert re.search(r"\[#+\] 40/40 files +\d+:\d\d elapsed +[\d.]+ files/s", drawn), drawn
