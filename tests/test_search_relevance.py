"""Scores with absolute meaning, with the real default (multilingual) model: an off-topic
question gets nothing, a paraphrase in another language is found, and a hit's score does not
depend on what else the index holds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex
from openclaw_memory.cli.app import main
from openclaw_memory.langchain import OpenClawMemoryRetriever, format_docs, memory_tools

OFF_TOPIC = ["How tall is Mount Everest?", "Who wrote the novel War and Peace?",
             "珠穆朗玛峰有多高？", "What is the chemical symbol for tungsten?"]


@pytest.fixture()
def memory(workspace: Path, tmp_path: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite") as index:
        index.sync()
        yield index


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_an_off_topic_question_gets_nothing_relevant(memory: MemoryIndex, question: str) -> None:
    response = memory.search(question)
    assert response.mode == "hybrid" and response.results == ()
    assert any(n.startswith("nothing relevant: ") for n in response.notes)


def test_the_tool_tells_the_model_there_is_no_relevant_memory(memory: MemoryIndex) -> None:
    search = memory_tools(memory)[0]
    message = search.invoke({"type": "tool_call", "id": "c1", "name": "memory_search",
                             "args": {"query": "How tall is Mount Everest?"}})
    assert message.status == "error" and "No memory matched" in message.content


@pytest.mark.parametrize(("question", "path"), [
    ("用户对什么过敏？", "MEMORY.md"),                           # Chinese question, English note
    ("Which team discussed the caching plan?", "memory/2026-01-11.md"),   # English over Chinese
    ("nut allergy", "MEMORY.md"),                              # no shared word or stem
])
def test_paraphrases_and_other_languages_are_found(memory: MemoryIndex, question: str,
                                                    path: str) -> None:
    hits = memory.search(question).results
    assert hits and hits[0].path == path


def test_a_hit_scores_the_same_whatever_else_the_index_holds(memory: MemoryIndex,
                                                             workspace: Path) -> None:
    before = memory.search("PostgreSQL billing service").results[0]
    (workspace / "memory" / "2026-02-01.md").write_text(
        "# 2026-02-01\n\n- The billing team moved its standup to 09:30.\n"
        "- Weather was rainy all week in Lisbon.\n", encoding="utf-8")
    memory.sync()
    after = next(h for h in memory.search("PostgreSQL billing service").results
                 if (h.path, h.start_line) == (before.path, before.start_line))
    # Coverage weighs terms by how rare they are, so new notes may shift it a little; the
    # per-query min-max scaling that gave the best candidate 1.0 whatever it was is gone.
    assert after.score == pytest.approx(before.score, abs=0.05) and before.score < 0.9


def test_explain_adds_up_to_the_score(memory: MemoryIndex) -> None:
    hit = memory.search("PostgreSQL billing service").results[0]
    e = hit.explanation
    assert e.vector_score is not None and e.text_score is not None
    evidence = 0.7 * max(0.0, e.vector_score) + 0.3 * e.text_score
    assert e.fused == pytest.approx(evidence + 0.1 * (e.keyword_strength or 0.0)
                                    + (0.2 if e.date_match else 0.0))
    # the score is the evidence; the bonuses only order the hits
    assert hit.score == pytest.approx(evidence * e.decay)
    assert json.dumps(hit.as_dict(explain=True))  # JSON-ready


def test_keyword_strength_is_bm25_relative_to_the_best_keyword_match(memory: MemoryIndex) -> None:
    hits = memory.search("PostgreSQL billing service", max_results=20, min_score=0.0).results
    keyword = [h.explanation for h in hits if h.explanation.bm25 is not None]
    best = min(e.bm25 for e in keyword if e.bm25 is not None)
    for e in keyword:
        assert e.bm25 is not None and e.keyword_strength == pytest.approx(e.bm25 / best)
    assert max(e.keyword_strength or 0.0 for e in keyword) == pytest.approx(1.0)
    assert all(h.explanation.keyword_strength is None for h in hits if h.explanation.bm25 is None)


def test_keyword_strength_never_opens_the_relevance_gate(memory: MemoryIndex) -> None:
    # An off-topic question has a best keyword match too ("service": strength 1.0), which
    # lifts its score over the gate; the gate reads the absolute evidence alone.
    question = "Who invented the service economy theory?"
    best = memory.search(question, min_score=0.0).results[0]
    assert best.explanation.keyword_strength == pytest.approx(1.0)
    assert best.explanation.fused >= 0.15  # over the gate with the bonus: it must not count
    assert best.score < 0.15
    response = memory.search(question)
    assert response.results == ()
    assert any(n.startswith("nothing relevant") for n in response.notes)


# A paraphrase with no shared word whose best score falls under the gate (0.15) but over
# low_confidence_gate (0.10): the note about the Lisbon flight.
WEAK_PARAPHRASE = "Where am I travelling next month?"


def test_a_weak_paraphrase_gets_no_hit_but_a_low_confidence_one(memory: MemoryIndex) -> None:
    response = memory.search(WEAK_PARAPHRASE)
    assert response.results == ()
    weak = response.low_confidence_results
    assert [h.path for h in weak] == ["memory/topics.md"]
    assert all(0.10 <= h.score < 0.15 for h in weak[:1])
    assert any(n.startswith("nothing relevant: ") for n in response.notes)
    assert any(n.startswith("low confidence:") for n in response.notes)
    assert response.as_dict()["low_confidence_results"][0]["path"] == "memory/topics.md"


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_an_off_topic_question_gets_no_low_confidence_hit_either(memory: MemoryIndex,
                                                                 question: str) -> None:
    response = memory.search(question)
    assert response.results == () and response.low_confidence_results == ()
    assert "low_confidence_results" not in response.as_dict()


def test_low_confidence_hits_are_never_given_beside_real_ones(memory: MemoryIndex) -> None:
    response = memory.search("PostgreSQL billing service")
    assert response.results and response.low_confidence_results == ()


def test_a_low_confidence_gate_at_the_relevance_gate_turns_them_off(workspace: Path,
                                                                   tmp_path: Path) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "off.sqlite",
                          search={"low_confidence_gate": 0.15}) as index:
        index.sync()
        response = index.search(WEAK_PARAPHRASE)
    assert response.results == () and response.low_confidence_results == ()


def test_an_explicit_min_score_has_no_low_confidence_band(memory: MemoryIndex) -> None:
    # min_score replaces the gate: whatever passes it is a hit, nothing is set apart.
    response = memory.search(WEAK_PARAPHRASE, min_score=0.1)
    assert [h.path for h in response.results][:1] == ["memory/topics.md"]
    assert response.low_confidence_results == ()
    assert memory.search(WEAK_PARAPHRASE, min_score=0.3).low_confidence_results == ()


def test_the_tool_shows_low_confidence_notes_under_no_relevant_memory(memory: MemoryIndex) -> None:
    search = memory_tools(memory)[0]
    message = search.invoke({"type": "tool_call", "id": "c1", "name": "memory_search",
                             "args": {"query": WEAK_PARAPHRASE}})
    payload = json.loads(message.content)
    assert message.status == "success"
    assert payload["results"] == [] and payload["no_relevant_memory"] is True
    assert payload["note"].startswith("No relevant memory")
    assert [item["path"] for item in payload["low_confidence"]] == ["memory/topics.md"]
    assert "Lisbon" in payload["low_confidence"][0]["snippet"]
    assert payload["low_confidence"][0]["citation"].startswith("memory/topics.md#L")


def test_the_cli_lists_low_confidence_notes_apart(workspace: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--workspace", str(workspace), "--index", str(tmp_path / "cli.sqlite"),
                 "search", WEAK_PARAPHRASE])
    out = capsys.readouterr().out
    assert code == 0
    head, _, tail = out.partition("possibly related (low confidence, not a match):")
    assert "note: nothing relevant" in head and "memory/topics.md" not in head
    assert "1. memory/topics.md#L" in tail and "Lisbon" in tail


def test_eval_counts_low_confidence_hits_only_when_asked(workspace: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"qid": "q1", "question": WEAK_PARAPHRASE,
                                   "gold": [{"path": "memory/topics.md", "line": 4}]}) + "\n",
                       encoding="utf-8")
    recall = {}
    for flag in ([], ["--low-confidence"]):
        code = main(["--workspace", str(workspace), "eval", str(queries), "--json",
                     "--index-dir", str(tmp_path / "eval"), *flag])
        report = json.loads(capsys.readouterr().out)
        assert code == 0
        recall[bool(flag)] = report["groups"]["all"]["recall@6"]
    assert recall == {False: 0.0, True: 1.0}


def test_the_retriever_returns_low_confidence_documents_only_when_asked(
        memory: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(index=memory)
    assert retriever.invoke(WEAK_PARAPHRASE) == []
    docs = retriever.invoke(WEAK_PARAPHRASE, low_confidence=True)
    assert [d.metadata["path"] for d in docs] == ["memory/topics.md"]
    assert docs[0].metadata["low_confidence"] is True
    assert format_docs(docs).startswith("(low confidence, possibly unrelated)\n")
    confident = retriever.invoke("PostgreSQL billing service", low_confidence=True)
    assert confident and not any("low_confidence" in d.metadata for d in confident)
    assert retriever.invoke("How tall is Mount Everest?", low_confidence=True) == []
