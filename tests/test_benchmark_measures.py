"""What the benchmarks count: the knowledge-update benchmark an answer only where the subject's
own line holds it (values recur across people, and another person's line with the same value
answers nothing); the retrieval benchmark an answer line as shown only when a snippet holds its
whole text (a citation can name lines its snippet has no room for)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from knowledge_update import _rank_of
from retrieval import _shown

from openclaw_memory import MemoryIndex
from openclaw_memory.evaluation.metrics import EvalQuery


@dataclass
class _Hit:
    snippet: str


def test_another_persons_line_with_the_value_answers_nothing() -> None:
    hits = [_Hit("- Tara Singh now drives a Skoda.\n- Hugo Weber is keto."),
            _Hit("- Hugo Weber's car is a Honda."), _Hit("- Hugo Weber drove a Skoda.")]
    assert _rank_of(hits, "a Skoda", "Hugo Weber") == 3
    assert _rank_of(hits, "a Skoda") == 1  # without a subject: any line
    assert _rank_of(hits, "a Fiat", "Hugo Weber") is None


def test_an_answer_line_counts_as_shown_only_when_a_snippet_holds_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    lines = ["# 2026-03-02", ""] + [f"- Standup {n}: nothing new on the roadmap, the build is green "
                                    "and the backlog is groomed." for n in range(16)]
    lines[2] = "- Joanna walked the greyhound past the Riverside park gates after the standup."
    lines[11] = "- Joanna adopted the greyhound Pixel from the Riverside shelter last spring."
    (ws / "memory" / "2026-03-02.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = "memory/2026-03-02.md"
    ask = "Joanna greyhound Pixel Riverside"
    # Both lines are cited (3-14); the 300-character snippet shows line 12, not line 3.
    queries = [EvalQuery("shown", ask, "4", ((path, 12, 12),)),
               EvalQuery("cut", ask, "4", ((path, 3, 3),)),
               EvalQuery("half", ask, "4", ((path, 3, 3), (path, 12, 12))),
               EvalQuery("five", ask, "5", ((path, 12, 12),))]
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite",
                          search={"snippet_chars": 300}) as memory:
        memory.sync()
        assert _shown(memory, ws, queries, exclude=["5"]) == [1.0, 0.0, 0.5]
