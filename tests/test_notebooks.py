"""The notebooks in notebooks/ run top to bottom in a fresh kernel and show what they promise.

Each notebook is executed with nbclient in its own ``python3`` kernel (ipykernel's kernelspec
of this environment), with the notebooks folder as working directory, exactly as a reader
running *Run All* would. The committed files must carry no outputs: stale outputs would show
figures the current code no longer produces.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))
CELL_TIMEOUT_S = 300


def _execute(path: Path, tmp_path: Path) -> Any:
    notebook = nbformat.read(path, as_version=4)
    # The kernel is a separate process, outside pytest-socket: point every HTTP client at a
    # dead local proxy so that a download attempt fails instead of silently going online.
    dead_proxy = "http://127.0.0.1:9"
    env = {**os.environ, "HTTP_PROXY": dead_proxy, "HTTPS_PROXY": dead_proxy,
           "http_proxy": dead_proxy, "https_proxy": dead_proxy, "NO_PROXY": "", "no_proxy": "",
           "HF_HUB_OFFLINE": "1", "OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state"),
           "MPLBACKEND": "Agg"}
    client = NotebookClient(notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute(env=env)
    return notebook


def _code_cells(notebook: Any) -> list[Any]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _text(cell: Any) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif "data" in output:
            parts.append(str(output.data.get("text/markdown", output.data.get("text/plain", ""))))
    return "".join(parts)


def _cell_with(notebook: Any, source_fragment: str) -> Any:
    matches = [cell for cell in _code_cells(notebook) if source_fragment in cell.source]
    assert len(matches) == 1, f"expected one code cell containing {source_fragment!r}"
    return matches[0]


def test_the_three_notebooks_are_there() -> None:
    assert [p.name for p in NOTEBOOK_FILES] == [
        "01_getting_started.ipynb", "02_tuning_retrieval.ipynb", "03_langgraph_agent.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda p: p.stem)
def test_committed_notebook_has_no_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    stale = [n for n, cell in enumerate(notebook.cells) if cell.cell_type == "code"
             and (cell.outputs or cell.execution_count is not None)]
    assert stale == [], f"{path.name}: clear the outputs of code cells {stale}"


def _run_checked(name: str, tmp_path: Path) -> Any:
    notebook = _execute(NOTEBOOKS / name, tmp_path)
    errors = [output for cell in _code_cells(notebook) for output in cell.outputs
              if output.output_type == "error"]
    assert errors == []
    assert all(cell.execution_count is not None for cell in _code_cells(notebook))
    return notebook


@pytest.mark.slow
def test_getting_started_cites_and_reads_back_the_lines(tmp_path: Path) -> None:
    notebook = _run_checked("01_getting_started.ipynb", tmp_path)
    search = _text(_cell_with(notebook, 'response = memory.search("which database'))
    assert "MEMORY.md#L" in search
    read_back = _text(_cell_with(notebook, "answer_line = top.start_line"))
    assert "PostgreSQL 16" in read_back and "the answer is on MEMORY.md#L" in read_back
    assert "refused:" in _text(_cell_with(notebook, 'memory.get("../../etc/passwd")'))
    assert "MEMORY.md in the results: False" in _text(_cell_with(notebook, 'chat_type="group"'))
    assert "same answer after the rebuild: True" in _text(_cell_with(notebook, "index_file.unlink()"))


@pytest.mark.slow
def test_agent_notebook_flushes_cites_and_hides_the_silent_turn(tmp_path: Path) -> None:
    notebook = _run_checked("03_langgraph_agent.ipynb", tmp_path)
    transcript = "".join(_text(cell) for cell in _code_cells(notebook))
    agent_lines = [line for line in transcript.splitlines() if line.startswith("agent> ")]
    assert agent_lines and not any("NO_REPLY" in line for line in agent_lines)
    assert "[memory flush" in transcript and "compaction #1" in transcript
    written = _text(_cell_with(notebook, "(written by the agent)"))
    assert "The design review with Priya is on Thursday at 15:00 in room Atlas." in written
    direct = _text(_cell_with(notebook, 'chat("When is the design review with Priya?", thread="alice")'))
    assert "Thursday at 15:00" in direct and "Source: memory/" in direct
    group = _text(_cell_with(notebook, 'thread="team-room", chat_type="group")\nchat('))
    assert "Thursday at 15:00" in group and "Source:" not in group and "MEMORY.md" not in group
    assert "found nothing" in group  # the allergy is only in MEMORY.md, private in groups
    summary = _text(_cell_with(notebook, "nodes that streamed text"))
    assert "['agent']" in summary and "reached the user: False" in summary
