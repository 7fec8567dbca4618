"""Hits as search returns them, built by hand, and the default encoder, for tests of what
happens to hits after scoring (dates, newer first, present values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openclaw_memory.search.subject_lines import PlacedLine
from openclaw_memory.types import HitExplanation, SearchHit


def cited_hit(path: str, text: str, score: float) -> SearchHit:
    """A hit citing ``text`` (line 1 of ``path``) with ``score``, as search renders it."""
    return SearchHit(path, 1, 1, score, f"{text}\n\nSource: {path}#L1", "memory", f"{path}#L1",
                     "id-" + path, HitExplanation(None, None, None, None, score))


def default_embed() -> Any:
    """The bundled default encoder's ``embed_documents``."""
    from openclaw_memory.config import EmbeddingSettings
    from openclaw_memory.embeddings.factory import build_provider

    return build_provider("local", EmbeddingSettings()).embed_documents


def curated_lines(*lines: str, path: str = "MEMORY.md") -> list[PlacedLine]:
    """``lines`` as a curated file's, numbered from 1."""
    return [PlacedLine(text, path, n, f"{path}:1") for n, text in enumerate(lines, 1)]


def barbers_workspace(ws: Path) -> Path:
    """Twelve people's haircut lines in MEMORY.md and in daily logs, all in the words a
    question asks with ("X现在找谁理发？"), and 王芳's change in other words (剪头发), on
    2025-03-05 at line 3: the search alone ranks everyone's lines above it."""
    (ws / "memory").mkdir(parents=True)
    people = ["赵敏", "张伟", "黄涛", "周婷", "吴昊", "李强", "刘洋", "陈静", "杨磊", "胡军",
              "朱琳", "郭雪"]
    barbers = ["阿强", "阿杰", "老周", "小美"]
    facts = "".join(f"- {who}一直找{barbers[n % 4]}理发。\n" for n, who in enumerate(people))
    (ws / "MEMORY.md").write_text("# 事实\n\n- 王芳一直找小美理发。\n" + facts, encoding="utf-8")
    for day in range(1, 29):
        lines = [f"- {people[(day + k) % 12]}现在找{barbers[(day + k) % 4]}理发。" for k in range(3)]
        lines.insert(1, "- 看了季度预算。")
        (ws / "memory" / f"2025-02-{day:02d}.md").write_text("\n".join(lines) + "\n",
                                                             encoding="utf-8")
    (ws / "memory" / "2025-03-05.md").write_text(
        "- 三楼的打印机又坏了。\n- 看了季度预算。\n- 王芳改去找老周剪头发了。\n- 预约了牙医。\n",
        encoding="utf-8")
    return ws


#: Where :func:`greyhound_day` writes its lines, and the two that hold the question's words.
GREYHOUND_DAY = "memory/2026-03-02.md"


def greyhound_day(ws: Path) -> list[str]:
    """A day of long standup lines in which line 3 holds three of the words of "Joanna
    greyhound Pixel Riverside" and line 12 all four: a search cites lines 3-14 (1 100
    characters), its best line 12. The file's lines."""
    (ws / "memory").mkdir(parents=True)
    lines = ["# 2026-03-02", ""] + [f"- Standup {n}: nothing new on the roadmap, the build is green "
                                    "and the backlog is groomed." for n in range(16)]
    lines[2] = "- Joanna walked the greyhound past the Riverside park gates after the standup."
    lines[11] = "- Joanna adopted the greyhound Pixel from the Riverside shelter last spring."
    (ws / GREYHOUND_DAY).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines
