"""Citations point at the lines an editor shows, for every line-ending convention, and ``get``
reads the same lines back; text after a NUL byte is findable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex

LINES = [f"line {i} token{i}" for i in range(1, 401)]


def _editor_lines(data: bytes) -> list[str]:
    # What an editor shows: CRLF, lone CR and LF each end one line.
    return re.split(r"\r\n|\r|\n", data.decode("utf-8"))


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n", "mixed"])
def test_citations_and_get_agree_with_an_editor(tmp_path: Path, ending: str) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    if ending == "mixed":
        body = "".join(line + ("\r\n", "\r", "\n")[i % 3] for i, line in enumerate(LINES))
    else:
        body = ending.join(LINES) + ending
    data = body.encode()
    (ws / "memory" / "notes.md").write_bytes(data)
    shown = _editor_lines(data)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"}) as memory:
        for n in (1, 2, 150, 399, 400):
            hit = memory.search(f"token{n}").results[0]
            assert hit.start_line <= n <= hit.end_line and hit.end_line <= 400, (ending, n)
            assert f"line {n} token{n}" in shown[n - 1]
            back = memory.get(hit.citation or "").text.split("\n")
            assert back == shown[hit.start_line - 1: hit.end_line]
            assert memory.get("memory/notes.md", from_line=n, lines=1).text == shown[n - 1]


def test_text_after_a_nul_byte_is_findable(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "nul.md").write_bytes(b"alpha\x00 bravo zulu\nsecond line quebec\n")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"}) as memory:
        hit = memory.search("zulu").results[0]
        assert (hit.path, hit.start_line) == ("memory/nul.md", 1)
