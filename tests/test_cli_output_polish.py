"""What the CLI prints reads as prose: no Python None or reprs, short floats, whole words."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from cli_entry import ENTRY_POINT

from openclaw_memory.search.snippets import ELLIPSIS, clamp_snippet

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ENTRY_POINT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ), check=True)


def test_status_prints_no_python_none_or_dict_reprs(workspace: Path) -> None:
    out = run("--workspace", str(workspace), "--provider", "none", "status").stdout
    assert "None" not in out and "{'" not in out and "[]" not in out
    assert "mode_reason: embedding provider is 'none' (keyword-only)" in out


def test_explain_prints_factors_to_four_decimals_and_json_keeps_them_whole(workspace: Path) -> None:
    base = ("--workspace", str(workspace), "search", "Lisbon flight", "--explain")
    text = run(*base).stdout
    factors = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    assert factors and not re.search(r"\d\.\d{5,}", text)
    assert any(isinstance(v, float) and v not in (0.0, 1.0) for f in factors for v in f.values())
    precise = json.loads(run(*base, "--json").stdout)["results"][0]["explain"]
    assert any(len(repr(v)) > 8 for v in precise.values() if isinstance(v, float))


def test_a_cut_snippet_ends_on_a_whole_word_with_an_ellipsis() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta"
    cut = clamp_snippet(text, 20)
    assert cut == "alpha beta gamma" + ELLIPSIS and len(cut) <= 20
    assert clamp_snippet(text, len(text)) == text


def test_text_without_spaces_is_cut_at_the_limit_with_an_ellipsis() -> None:
    text = "我们决定账单数据库使用PostgreSQL因为团队熟悉它" * 3
    cut = clamp_snippet(text, 10)
    assert cut == text[:9] + ELLIPSIS and len(cut) == 10


def test_a_long_word_near_the_limit_is_not_cut_far_back() -> None:
    text = "a " + "x" * 100
    cut = clamp_snippet(text, 50)
    assert cut == text[:49] + ELLIPSIS


def test_write_cites_one_line_as_search_does(workspace: Path) -> None:
    out = run("--workspace", str(workspace), "--provider", "none", "write", "One line note.").stdout
    assert re.search(r"#L\d+\n?$", out) and "-L" not in out
    written = json.loads(run("--workspace", str(workspace), "--provider", "none", "write",
                             "Another.", "--json").stdout)
    assert written["citation"].endswith(f"#L{written['start_line']}")


def test_eval_names_the_workspace_it_scored_even_when_given_as_a_relative_path(tmp_path: Path) -> None:
    out = run("--provider", "none", "--workspace", "notebooks/data/kestrel-team", "--index",
              str(tmp_path / "i.sqlite"), "eval", "notebooks/data/kestrel-team/queries.jsonl",
              "--ks", "1,6", cwd=ROOT).stdout
    first = out.splitlines()[0]
    assert f"scored over {ROOT / 'notebooks/data/kestrel-team'};" in first, first


def test_a_hit_under_the_relevance_gate_says_why_it_is_listed(tmp_path: Path) -> None:
    # The header says a score under the gate is nothing relevant: a hit listed under it says
    # what kept it; those over it say nothing more. (The sample, the default local model.)
    home = {"HOME": str(tmp_path)}
    done = subprocess.run([ENTRY_POINT, "--sample", "search", "rollback"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **home})
    rows = [line for line in done.stdout.splitlines() if re.match(r"^\d+\. ", line)]
    scores = [float(re.search(r"score=([\d.]+)", row).group(1)) for row in rows]  # type: ignore[union-attr]
    assert any(s < 0.15 for s in scores) and any(s >= 0.15 for s in scores), done.stdout
    for row, score in zip(rows, scores, strict=True):
        assert ("(under 0.15: " in row) is (score < 0.15), row
