"""One search never hands the model more than search.max_injected_chars of snippet text:
hits are kept in rank order, the last that fits only in part, and the response says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_memory import MemoryIndex

OPTS: dict[str, Any] = {"embedding": {"provider": "none"}, "timezone": "UTC"}


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    for n in range(8):
        lines = [f"- Heron deploy note {n}.{k}: the heron pipeline ran its migration step "
                 f"number {k} with the usual checks and a long explanation of why."
                 for k in range(8)]
        (root / "memory" / f"heron-{n}.md").write_text("\n".join(lines) + "\n")
    return root


def _search(ws: Path, tmp_path: Path, budget: int, **extra: Any) -> Any:
    with MemoryIndex.open(ws, index_path=tmp_path / f"i{budget}.sqlite", **OPTS,
                          search={"max_injected_chars": budget, **extra}) as memory:
        memory.sync()
        return memory.search("heron pipeline migration", max_results=8)


def test_the_hits_text_stays_within_the_budget_and_the_response_says_so(
        ws: Path, tmp_path: Path) -> None:
    unbounded = _search(ws, tmp_path, 0)
    assert sum(len(h.snippet) for h in unbounded.results) > 2_000
    bounded = _search(ws, tmp_path, 2_000)
    assert sum(len(h.snippet) for h in bounded.results) <= 2_000
    assert [h.path for h in bounded.results] == [h.path for h in unbounded.results][
        :len(bounded.results)]  # rank order kept
    assert bounded.results[-1].snippet.endswith("\u2026")  # the last one in part
    assert bounded.results[-1].citation == unbounded.results[len(bounded.results) - 1].citation
    assert any("max_injected_chars (2000 characters)" in n for n in bounded.notes)
    assert not any("max_injected_chars" in n for n in unbounded.notes)


def test_the_best_hit_alone_over_the_budget_is_cut_not_dropped(ws: Path, tmp_path: Path) -> None:
    tiny = _search(ws, tmp_path, 100)
    assert len(tiny.results) == 1 and len(tiny.results[0].snippet) <= 100
