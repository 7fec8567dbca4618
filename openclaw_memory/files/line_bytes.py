"""A file's lines as it holds them: each line's own bytes and ending, so that replacing some
lines leaves every other byte of the file as it was.

An edit of ``MEMORY.md`` used to decode the whole file, normalise its line endings and write it
back as UTF-8: a cp1252 ``é`` on another line became U+FFFD (unrecoverable, and in no history),
CRLF and CR became LF, a UTF-16 file became UTF-8. Here only the lines replaced are new; the new
ones take the encoding the file is in (UTF-16/32 with its byte-order mark, else UTF-8) and the
line ending of the first line they replace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import AnyStr

from openclaw_memory.files.reading import unicode_encoding

__all__ = ["FileLines"]

_ENDINGS = re.compile(r"\r\n|\r|\n")
_BYTE_ENDINGS = re.compile(rb"\r\n|\r|\n")
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


@dataclass(frozen=True, slots=True)
class FileLines:
    """The file as lines: ``texts`` (decoded, for comparing; an invalid byte shows as U+FFFD)
    and, for each, the exact ``raw`` bytes of the line and of its ending."""

    bom: bytes
    codec: str
    raw: tuple[bytes, ...]
    endings: tuple[bytes, ...]
    texts: tuple[str, ...]

    @classmethod
    def parse(cls, data: bytes) -> FileLines:
        bom, codec = b"", "utf-8"
        if unicode_encoding(data[:4]) != "utf-8":
            bom, codec = next((b, c) for b, c in _BOMS if data.startswith(b))
        elif data.startswith(b"\xef\xbb\xbf"):
            bom = b"\xef\xbb\xbf"
        if codec == "utf-8":  # per line, so an invalid byte on one line stays that line's
            pieces = _split(data[len(bom):], _BYTE_ENDINGS)
            return cls(bom, codec, tuple(p for p, _ in pieces), tuple(e for _, e in pieces),
                       tuple(p.decode("utf-8", errors="replace") for p, _ in pieces))
        text = data[len(bom):].decode(codec, errors="replace")
        split = _split(text, _ENDINGS)
        return cls(bom, codec, tuple(p.encode(codec) for p, _ in split),
                   tuple(e.encode(codec) for _, e in split), tuple(p for p, _ in split))

    def replaced(self, start: int, end: int, new_lines: list[str]) -> bytes:
        """The file's bytes with lines ``start..end`` (1-based) replaced by ``new_lines``
        (none: removed), every other byte as it was."""
        first = start - 1
        ending = next((e for e in (*self.endings[first:], *self.endings) if e),
                      "\n".encode(self.codec))
        kept = list(zip(self.raw, self.endings, strict=True))
        new = [(line.encode(self.codec), ending) for line in new_lines]
        if new and kept and end >= len(kept):  # the file's last line: keep how it ended
            new[-1] = (new[-1][0], kept[-1][1])
        lines = kept[:first] + new + kept[end:]
        # A line that ended the file without an ending and now has lines after it gets one.
        lines = [(r, e or ending) if k < len(lines) - 1 else (r, e)
                 for k, (r, e) in enumerate(lines)]
        return self.bom + b"".join(r + e for r, e in lines)


def _split(text: AnyStr, endings: re.Pattern[AnyStr]) -> list[tuple[AnyStr, AnyStr]]:
    """(line, its ending) of ``text``, the last line's ending empty when it has none."""
    pieces: list[tuple[AnyStr, AnyStr]] = []
    at = 0
    for match in endings.finditer(text):
        pieces.append((text[at:match.start()], match.group(0)))
        at = match.end()
    if at < len(text):
        pieces.append((text[at:], text[:0]))
    return pieces
