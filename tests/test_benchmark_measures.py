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
from search_hits import GREYHOUND_DAY, greyhound_day

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
    greyhound_day(ws)
    path = GREYHOUND_DAY
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
