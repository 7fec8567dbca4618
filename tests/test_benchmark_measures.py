"""The knowledge-update benchmark counts an answer only where the subject's own line holds it:
values recur across people, and another person's line with the same value answers nothing."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from knowledge_update import _rank_of


@dataclass
class _Hit:
    snippet: str


def test_another_persons_line_with_the_value_answers_nothing() -> None:
    hits = [_Hit("- Tara Singh now drives a Skoda.\n- Hugo Weber is keto."),
            _Hit("- Hugo Weber's car is a Honda."), _Hit("- Hugo Weber drove a Skoda.")]
    assert _rank_of(hits, "a Skoda", "Hugo Weber") == 3
    assert _rank_of(hits, "a Skoda") == 1  # without a subject: any line
    assert _rank_of(hits, "a Fiat", "Hugo Weber") is None
