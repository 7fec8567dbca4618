"""Notebook 02 (tuning retrieval) runs top to bottom in a fresh kernel and its tables and
plots say what its text claims. In a file of its own: it is the suite's longest test, and
the workers share files, not tests."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_notebooks import _cell_with, _code_cells, _run_checked, _text


@pytest.mark.slow
def test_tuning_notebook_shows_explanations_tables_and_png_plots(tmp_path: Path) -> None:
    notebook = _run_checked("02_tuning_retrieval.ipynb", tmp_path)
    pngs = [output for cell in _code_cells(notebook) for output in cell.outputs
            if "image/png" in output.get("data", {})]
    assert len(pngs) >= 4
    assert all(len(str(output.data["image/png"])) > 1_000 for output in pngs)
    anatomy = _text(_cell_with(notebook, "anatomy = explain(question)"))
    for column in ("text_score", "bm25", "strength", "vector", "decay", "mmr_penalty"):
        assert column in anatomy
    baseline = _text(_cell_with(notebook, "baseline = measure()"))
    assert "| all | 28 |" in baseline
    fusion = _text(_cell_with(notebook, "fusion = {w: measure"))
    assert fusion.count("\n| ") >= 8  # one row per vector weight
    _tuning_plots_teach_what_they_claim(notebook)


def _tuning_plots_teach_what_they_claim(notebook: Any) -> None:
    """Issue 16 item 10: each plot or figure in notebook 02 says something true."""
    prose = "\n".join("".join(c.source) for c in notebook.cells if c.cell_type == "markdown")
    assert "1 986" not in prose and "608" in prose  # the dev set's real size
    # The bars add up: 0.7 x cosine + 0.3 x coverage is the score, + 0.1 x strength is fused.
    gap = _text(_cell_with(notebook, "plot_anatomy(anatomy, question)"))
    assert float(re.search(r"fused / score: ([\d.e+-]+)", gap).group(1)) < 1e-9
    # The sweep marks the default weight, and the default sits within a question of the best.
    sweep = _text(_cell_with(notebook, "fusion = {w: measure"))
    assert "| 0.7 (default) |" in sweep
    summary = _text(_cell_with(notebook, "plateau = ["))
    plateau = re.search(r"best recall@3: \[([^\]]*)\]", summary).group(1)
    assert "0.7" in plateau.split(", ")
    # The MMR plot is not flat: copies in the top 5 fall as lambda falls.
    redundancy = _text(_cell_with(notebook, "repeated hits in the top 5: {mmr"))
    without, with_mmr = map(float, re.findall(r"([\d.]+) (?:without MMR|at lambda)", redundancy))
    assert without >= 1.0 and with_mmr < without
