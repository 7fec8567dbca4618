"""Editing one line leaves every other byte of the file as it was: another line's cp1252
character, each line's own ending (CRLF, CR, LF), the file's encoding (UTF-16 with its mark)
and a last line without an ending; the new line takes the file's encoding and the ending of
the line it replaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.files.line_bytes import FileLines


def _edit(tmp_path: Path, data: bytes, citation: str, expected: str,
          replacement: str | None) -> bytes:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_bytes(data)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"},
                          timezone="UTC") as memory:
        result = memory.edit(citation, expected, replacement)
        assert result.applied, result
    return (ws / "MEMORY.md").read_bytes()


def test_a_cp1252_character_on_another_line_is_kept_byte_for_byte(tmp_path: Path) -> None:
    data = b"- Caf\xe9 on the corner.\n- Ada lives in Paris.\n- Ren\xe9e likes tea.\n"
    after = _edit(tmp_path, data, "MEMORY.md#L2", "- Ada lives in Paris.", "- Ada lives in Lyon.")
    assert after.startswith(b"- Caf\xe9 on the corner.\n- Ada lives in Lyon. (as of ")
    assert after.endswith(b")\n- Ren\xe9e likes tea.\n")


@pytest.mark.parametrize("ending", [b"\r\n", b"\r"])
def test_each_lines_own_ending_is_kept_and_the_new_line_takes_the_replaced_ones(
        tmp_path: Path, ending: bytes) -> None:
    data = ending.join([b"# Facts", b"- Ada lives in Paris.", b"- Bo likes tea.", b""])
    after = _edit(tmp_path, data, "MEMORY.md#L2", "- Ada lives in Paris.", "- Ada lives in Lyon.")
    lines = after.split(ending)
    assert lines[0] == b"# Facts" and lines[1].startswith(b"- Ada lives in Lyon.")
    assert lines[2:] == [b"- Bo likes tea.", b""] and b"\n" not in after.replace(b"\r\n", b"")


def test_a_utf16_file_stays_utf16_with_its_mark(tmp_path: Path) -> None:
    text = "# Facts\r\n- Ada lives in Paris.\r\n- Zoë likes tea.\r\n"
    data = b"\xff\xfe" + text.encode("utf-16-le")
    after = _edit(tmp_path, data, "MEMORY.md#L2", "- Ada lives in Paris.", None)
    assert after == b"\xff\xfe" + "# Facts\r\n- Zoë likes tea.\r\n".encode("utf-16-le")


def test_a_last_line_without_an_ending_keeps_none_and_a_mixed_file_keeps_its_mix(
        tmp_path: Path) -> None:
    data = b"- one\r\n- two\n- three"
    after = _edit(tmp_path, data, "MEMORY.md#L3", "- three", "- THREE")
    assert after.startswith(b"- one\r\n- two\n- THREE (as of ") and after.endswith(b")")


@pytest.mark.parametrize("data", [b"", b"a", b"a\n", b"a\r\nb", b"\xef\xbb\xbfa\nb\n",
                                  b"\xff\xfea\x00\n\x00", b"x\xe9\ry\n"])
def test_a_file_parses_into_lines_that_give_back_its_bytes(data: bytes) -> None:
    lines = FileLines.parse(data)
    assert lines.bom + b"".join(r + e for r, e in zip(lines.raw, lines.endings, strict=True)) == data


@pytest.mark.parametrize("data", [b"a", b"a\n", b"a\r\nb", b"\xef\xbb\xbfa\nb\n",
                                  b"\xff\xfea\x00\n\x00", b"x\xe9\ry\n"])
def test_replacing_the_last_line_by_its_own_text_gives_the_same_bytes(
        data: bytes) -> None:
    lines = FileLines.parse(data)
    last = len(lines.raw)
    # The last line holds no invalid byte: it comes back byte for byte.
    assert lines.replaced(last, last, [lines.texts[-1]]) == data
