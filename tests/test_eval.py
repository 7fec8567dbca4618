"""``openclaw-memory eval``: metrics as the LoCoMo scorer computes them, suites, bad input.

The fixtures are our own tiny notes written in the LoCoMo dev set's queries format; the dev
set itself (CC BY-NC 4.0) is never copied here. The cross-check runs the real
``../shared/bench/score.py`` when it is present next to this checkout.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from openclaw_memory.cli.app import main
from openclaw_memory.evaluation.metrics import EvalQuery, QueryOutcome, score_hits, summarize
from openclaw_memory.store.paths import default_index_path

SCORER = Path(__file__).resolve().parents[2] / "shared" / "bench" / "score.py"
needs_scorer = pytest.mark.skipif(
    not SCORER.is_file(), reason=f"LoCoMo scorer not found at {SCORER} (only on dev machines)")

DAYS = {  # one topic a day, so a hit tells which note was found
    "2026-02-01": ["Ana: I adopted a grey cat called Pixel last week.",
                   "Ana: Pixel sleeps on the radiator all day."],
    "2026-02-03": ["Ben: I am training for the Lisbon marathon in April.",
                   "Ben: My running shoes are worn out."],
    "2026-02-05": ["Ana: My sister Marta moved to Porto for a job at a bakery.",
                   "Ana: She starts at four in the morning."],
    "2026-02-07": ["Ben: I switched my team from Jenkins to GitHub Actions.",
                   "Ben: Our deploys are twice as fast since the CI migration."],
    "2026-02-09": ["Ben: The marathon training plan says 30 km this Sunday.",
                   "Ana: Marta sent photos of the bakery's almond croissants."],
}
NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def _q(qid: str, question: str, category: int, gold: list[tuple[str, int]]) -> dict[str, Any]:
    return {"qid": qid, "question": question, "category": category,
            "category_name": NAMES[category],
            "gold": [{"path": p, "line": line} for p, line in gold]}


def _conversation(root: Path, name: str) -> Path:
    """A workspace laid out like a dev-set conversation, with a queries.jsonl beside memory/."""
    ws = root / name
    (ws / "memory").mkdir(parents=True)
    for session, (day, turns) in enumerate(DAYS.items(), 1):
        body = "".join(f"- [D{session}:{n}] {turn}\n" for n, turn in enumerate(turns, 1))
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n{body}", encoding="utf-8")

    def d(day: str) -> str:
        return f"memory/{day}.md"
    queries = [
        _q(f"{name}:q0", "What is the name of Ana's cat?", 4, [(d("2026-02-01"), 3)]),
        _q(f"{name}:q1", "Which marathon is Ben training for and how far this Sunday?", 1,
           [(d("2026-02-03"), 3), (d("2026-02-09"), 3)]),
        _q(f"{name}:q2", "When did Ben switch away from Jenkins?", 2, [(d("2026-02-07"), 3)]),
        _q(f"{name}:q3", "What does Marta bake in Porto?", 3,
           [(d("2026-02-05"), 3), (d("2026-02-09"), 4)]),
        _q(f"{name}:q4", "Did Ana adopt a dog?", 5, [(d("2026-02-01"), 3)]),
        _q(f"{name}:q5", "quantum chromodynamics lecture notes", 4, [(d("2026-02-09"), 3)]),
    ]
    (ws / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries),
                                      encoding="utf-8")
    return ws


def _eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["--provider", "none", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("locomo_score", SCORER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the figures equal the LoCoMo scorer's --------------------------------------------------

@needs_scorer
def test_suite_figures_equal_score_py_on_the_results_out_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite"
    _conversation(suite, "conv-a")
    _conversation(suite, "conv-b")
    results, ours_path = tmp_path / "results.jsonl", tmp_path / "scorer.json"
    code, out, err = _eval(capsys, "eval", "--suite", str(suite), "--exclude-category", "5",
                           "--ks", "1,3,6,10", "--results-out", str(results), "--json")
    assert code == 0, err
    ours = json.loads(out)
    done = subprocess.run([sys.executable, str(SCORER), "--data", str(suite), "--results",
                           str(results), "--json", str(ours_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(ours_path.read_text())
    assert theirs["missing"] == 0 and theirs["unknown_qids"] == 0
    rename = {"cat1-4": "overall"}
    assert [rename.get(g, g) for g in theirs["groups"]] == list(ours["groups"])
    for group, figures in theirs["groups"].items():
        mine = ours["groups"][rename.get(group, group)]
        assert set(figures) <= set(mine)
        for key, value in figures.items():
            assert mine[key] == pytest.approx(value, rel=1e-12, abs=1e-12), (group, key)
    # Not a vacuous comparison: some queries are found, some are missed.
    assert 0 < ours["groups"]["all"]["recall@6"] < 1
    assert ours["groups"]["all"]["n"] == 12 and ours["groups"]["overall"]["n"] == 10


@needs_scorer
@pytest.mark.parametrize("gold, hits", [
    ([("memory/a.md", 4), ("memory/a.md", 9)], [("memory/a.md", 1, 5), ("memory/a.md", 8, 9)]),
    ([("memory/a.md", 4), ("memory/a.md", 4)], [("memory/a.md", 4, 4)]),  # repeated gold line
    ([("memory/a.md", 4)], [("memory/a.md", 1, 5)] * 3 + [("memory/b.md", 1, 2)]),  # duplicates
    ([("./memory/a.md", 4)], [("memory\\a.md", 3, 4)]),  # ./ and backslashes
    ([("memory/a.md", 4)], [("././memory/a.md", 4, 4)]),
    ([("memory/a.md", 4)], [("/home/u/ws/memory/a.md", 2, 6)]),  # absolute hit path
    ([("memory/a.md", 4)], [("xmemory/a.md", 2, 6)]),  # a suffix that is not a path part
    ([("memory/a.md", 4)], [("memory/a.md", 5, 9), ("memory/a.md", 9, 3)]),  # inverted span
    ([("memory/a.md", 4)], []),  # k larger than the hits
])
def test_score_hits_agrees_with_score_py_on_edge_cases(
        gold: list[tuple[str, int]], hits: list[tuple[str, int, int]]) -> None:
    scorer = _scorer()
    ks = (1, 3, 6, 10)
    theirs = scorer.score_query(
        {"gold": [{"path": p, "line": line} for p, line in gold]},
        [{"path": p, "startLine": s, "endLine": e} for p, s, e in hits], ks)
    ours = score_hits([(p, line, line) for p, line in gold], hits, ks)
    for k in ks:
        for metric in ("recall", "any", "all", "lines"):
            assert ours[f"{metric}@{k}"] == theirs[k][metric], (metric, k)


# -- metric edge cases (no scorer needed) ----------------------------------------------------

def test_gold_range_is_covered_by_any_overlapping_hit_and_counts_once() -> None:
    gold = [("memory/a.md", 10, 14), ("MEMORY.md", 2, 2)]
    m = score_hits(gold, [("memory/a.md", 1, 10), ("notes.md", 1, 99)], (1, 2))
    assert m["recall@1"] == 0.5 and m["any@1"] == 1.0 and m["all@1"] == 0.0
    assert m["lines@1"] == 10 and m["lines@2"] == 109
    assert score_hits(gold, [("memory/a.md", 15, 20)], (1,))["recall@1"] == 0.0


def test_multiple_gold_lines_give_fractional_recall_and_mrr_of_first_covering_hit() -> None:
    gold = [("m.md", 1, 1), ("m.md", 5, 5), ("m.md", 9, 9)]
    hits = [("x.md", 1, 3), ("m.md", 4, 6), ("m.md", 8, 9)]
    m = score_hits(gold, hits, (1, 2, 3))
    assert [m["recall@1"], m["recall@2"], m["recall@3"]] == pytest.approx([0.0, 1 / 3, 2 / 3])
    assert m["all@3"] == 0.0 and m["any@2"] == 1.0 and m["mrr"] == 0.5


def test_duplicate_hits_add_lines_but_not_recall() -> None:
    m = score_hits([("m.md", 2, 2)], [("m.md", 1, 3), ("m.md", 1, 3)], (2,))
    assert m["recall@2"] == 1.0 and m["lines@2"] == 6.0 and m["mrr"] == 1.0


def test_k_larger_than_the_hits_uses_what_was_returned() -> None:
    m = score_hits([("m.md", 2, 2)], [("m.md", 2, 4)], (1, 10))
    assert m["recall@10"] == 1.0 and m["lines@10"] == m["lines@1"] == 3.0


def test_queries_without_gold_are_counted_not_averaged() -> None:
    def outcome(qid: str, gold: tuple[tuple[str, int, int], ...], category: str) -> QueryOutcome:
        q = EvalQuery(qid, "?", category, gold)
        hits = (("m.md", 1, 2),)
        return QueryOutcome(q, hits, (1.0,), score_hits(gold, hits, (1,)) if gold else None)

    report = summarize([outcome("a", (("m.md", 1, 1),), "1"), outcome("b", (), "1"),
                        outcome("c", (("m.md", 7, 7),), "5")], ks=(1,), exclude_categories=["5"])
    assert report["no_gold"] == ["b"] and report["scored"] == 2 and report["queries"] == 3
    assert report["groups"]["1"] == {"n": 1, "recall@1": 1.0, "any@1": 1.0, "all@1": 1.0,
                                     "lines@1": 2.0, "mrr": 1.0}
    assert report["groups"]["overall"]["n"] == 1 and report["groups"]["all"]["recall@1"] == 0.5


# -- the command ------------------------------------------------------------------------------

def test_eval_prints_a_table_per_category_with_overall_and_reuses_the_state_index(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    code, out, err = _eval(capsys, "--workspace", str(ws), "eval", str(ws / "queries.jsonl"),
                           "--ks", "1,6", "--exclude-category", "5")
    assert code == 0, err
    rows = {cells[0]: cells for cells in map(str.split, out.splitlines())
            if len(cells) > 2 and cells[1].isdigit()}
    assert {"1:multi-hop", "2:temporal", "3:open-domain", "4:single-hop", "5:adversarial",
            "overall", "all"} <= set(rows)
    assert rows["overall"][1] == "5" and rows["all"][1] == "6"
    assert rows["4:single-hop"][2:4] == ["50.0", "50.0"]  # Pixel found first, physics never
    assert "overall = all but category 5" in out and "keyword-only" in out
    # The usual per-workspace state location (keyword-only: a file of its own, "*.emb-*").
    assert list(default_index_path(ws).parent.glob(default_index_path(ws).stem + ".emb-*.sqlite"))


def test_eval_single_k_and_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    code, out, _ = _eval(capsys, "--workspace", str(ws), "eval", str(ws / "queries.jsonl"),
                         "-k", "3", "--json", "--min-score", "0")
    report = json.loads(out)
    assert code == 0 and report["ks"] == [3] and report["min_score"] == 0.0
    assert set(report["groups"]["all"]) == {"n", "recall@3", "any@3", "all@3", "lines@3", "mrr"}
    assert "overall" not in report["groups"]  # nothing excluded: "all" is the overall figure
    assert report["modes"] == {"keyword-only": 6}


def test_results_out_lines_are_ranked_hits_in_score_py_shape(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    out_file = tmp_path / "hits.jsonl"
    code, _, err = _eval(capsys, "--workspace", str(ws), "eval", str(ws / "queries.jsonl"),
                         "-k", "4", "--results-out", str(out_file))
    assert code == 0, err
    lines = [json.loads(x) for x in out_file.read_text().splitlines()]
    assert [x["qid"] for x in lines] == [f"conv-a:q{i}" for i in range(6)]
    first = lines[0]["hits"]
    assert first and {"path", "startLine", "endLine"} <= set(first[0])
    assert all(len(x["hits"]) <= 4 for x in lines)
    scores = [h["score"] for h in first]
    assert scores == sorted(scores, reverse=True)


def test_suite_aggregates_per_query_not_per_workspace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite"
    _conversation(suite, "conv-a")
    small = _conversation(suite, "conv-b")
    lines = small.joinpath("queries.jsonl").read_text().splitlines()
    small.joinpath("queries.jsonl").write_text(lines[0] + "\n")  # one easy query only
    index_dir = tmp_path / "indexes"
    code, out, err = _eval(capsys, "eval", "--suite", str(suite), "--json", "-k", "6",
                           "--index-dir", str(index_dir))
    assert code == 0, err
    report = json.loads(out)
    single = {}
    for ws in ("conv-a", "conv-b"):
        _, one, _ = _eval(capsys, "--workspace", str(suite / ws), "eval",
                          str(suite / ws / "queries.jsonl"), "--json", "-k", "6")
        single[ws] = json.loads(one)["groups"]["all"]
    a, b = single["conv-a"], single["conv-b"]
    assert report["groups"]["all"]["n"] == 7
    assert report["groups"]["all"]["recall@6"] == pytest.approx(
        (6 * a["recall@6"] + b["recall@6"]) / 7)
    assert len(list(index_dir.glob("*.sqlite"))) == 2


def test_malformed_line_is_a_one_line_error_naming_the_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    queries = ws / "queries.jsonl"
    text = queries.read_text().splitlines()
    text[2] = text[2][:-5]  # truncated JSON on line 3
    queries.write_text("\n".join(text) + "\n")
    code, out, err = _eval(capsys, "--workspace", str(ws), "eval", str(queries))
    assert code == 3 and out == ""
    assert err.startswith(f"openclaw-memory: error: {queries}:3: not a valid query line")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("line, why", [
    ('{"qid": "x", "question": "q", "gold": [{"path": "m.md"}]}', "needs 'line'"),
    ('{"qid": "x", "question": "q", "gold": [{"path": "m.md", "line": 0}]}', "positive"),
    ('{"qid": "x", "question": "", "gold": []}', "question"),
    ('{"qid": "x", "question": "q", "gold": [{"path": "m.md", "start_line": 5, "end_line": 2}]}',
     "before"),
    ('[1, 2]', "JSON object"),
])
def test_invalid_query_lines_are_rejected_with_the_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, why: str) -> None:
    ws = _conversation(tmp_path, "conv-a")
    queries = tmp_path / "bad.jsonl"
    queries.write_text("\n" + line + "\n")
    code, _, err = _eval(capsys, "--workspace", str(ws), "eval", str(queries))
    assert code == 3 and f"{queries}:2:" in err and why in err


def test_empty_or_missing_queries_file_is_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    code, _, err = _eval(capsys, "--workspace", str(ws), "eval", str(empty))
    assert code == 3 and "holds no queries" in err
    code, _, err = _eval(capsys, "--workspace", str(ws), "eval", str(tmp_path / "nope.jsonl"))
    assert code == 3 and "does not exist" in err


def test_duplicate_qids_across_a_suite_are_an_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite"
    _conversation(suite, "conv-a")
    b = _conversation(suite, "conv-b")
    b.joinpath("queries.jsonl").write_text(
        (suite / "conv-a" / "queries.jsonl").read_text())
    code, _, err = _eval(capsys, "eval", "--suite", str(suite))
    assert code == 3 and "duplicate qid 'conv-a:q0'" in err and "conv-b" in err


def test_missing_gold_path_warns_and_still_scores_it_as_a_miss(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    (ws / "notes.md").write_text("Pixel is a grey cat.\n")  # exists, but not a memory file
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps(_q("q0", "grey cat Pixel", 4, [("memory/2026-03-01.md", 1)])) + "\n" +
        json.dumps(_q("q1", "grey cat Pixel", 4, [("notes.md", 1)])) + "\n" +
        json.dumps(_q("q2", "grey cat Pixel", 4, [("./memory/2026-02-01.md", 3)])) + "\n")
    code, out, err = _eval(capsys, "--workspace", str(ws), "eval", str(queries), "--json")
    assert code == 0
    assert f"{queries}:1: gold path memory/2026-03-01.md does not exist" in err
    assert f"{queries}:2: gold path notes.md is not indexed" in err
    report = json.loads(out)
    assert report["groups"]["all"]["n"] == 3
    assert report["groups"]["all"]["recall@6"] == pytest.approx(1 / 3)
    assert len(report["warnings"]) == 2


def test_query_without_gold_warns_and_is_left_out_of_the_averages(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"qid": "open", "question": "Pixel", "gold": []}) + "\n" +
                       json.dumps(_q("q1", "grey cat Pixel", 4, [("memory/2026-02-01.md", 3)])))
    code, out, err = _eval(capsys, "--workspace", str(ws), "eval", str(queries), "--json")
    assert code == 0 and "1 queries have no gold and are not scored: open" in err
    figures = json.loads(out)["groups"]["all"]
    assert figures["n"] == 1 and figures["recall@6"] == 1.0 and figures["mrr"] == 1.0


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["eval"])  # neither a queries file nor --suite
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["eval", "q.jsonl", "--ks", "0,3"])
    assert exc.value.code == 2
    suite = tmp_path / "suite"
    _conversation(suite, "conv-a")
    code, _, err = _eval(capsys, "--index", str(tmp_path / "x.sqlite"), "eval", "--suite",
                         str(suite))
    assert code == 3 and "--index-dir" in err
    code, _, err = _eval(capsys, "eval", "--suite", str(tmp_path / "empty-dir-missing"))
    assert code == 3 and "not a directory" in err


def test_eval_never_modifies_the_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _conversation(tmp_path, "conv-a")
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert _eval(capsys, "--workspace", str(ws), "eval", str(ws / "queries.jsonl"))[0] == 0
    assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before
