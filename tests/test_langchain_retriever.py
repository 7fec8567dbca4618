"""OpenClawMemoryRetriever: memory hits as Documents, with filters and the scope policy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError

from openclaw_memory import MemoryIndex
from openclaw_memory.langchain import OpenClawMemoryRetriever, format_docs


@pytest.fixture()
def ws(workspace: Path) -> Path:
    """The shared workspace plus two more dated logs and an undated note about invoices."""
    (workspace / "memory" / "2026-01-20.md").write_text(
        "# 2026-01-20\n\n- The invoice archive moves to cold storage.\n", encoding="utf-8")
    (workspace / "memory" / "2026-02-03.md").write_text(
        "# 2026-02-03\n\n- Invoice emails now go out at 09:00.\n", encoding="utf-8")
    (workspace / "memory" / "billing.md").write_text(
        "# Billing\n\nInvoice numbers are never reused.\n", encoding="utf-8")
    return workspace


@pytest.fixture()
def index(ws: Path, tmp_path: Path) -> Iterator[MemoryIndex]:
    with MemoryIndex.open(ws, index_path=tmp_path / "r.sqlite",
                          embedding={"provider": "none"}) as memory:
        memory.sync()
        yield memory


def paths(docs: list) -> set[str]:  # type: ignore[type-arg]
    return {d.metadata["path"] for d in docs}


def test_documents_carry_text_lines_score_citation_and_chunk_id(index: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(index=index)
    doc = retriever.invoke("zero-amount invoices crash")[0]
    meta = doc.metadata
    assert meta["path"] == "memory/2026-01-10.md" and meta["source"] == "memory"
    assert meta["citation"] == f"memory/2026-01-10.md#L{meta['start_line']}-L{meta['end_line']}"
    assert 0 < meta["score"] <= 1
    assert "Source:" not in doc.page_content and "BILL-482" in doc.page_content
    cited = index.get(meta["path"], meta["start_line"], meta["end_line"] - meta["start_line"] + 1)
    assert cited.text == doc.page_content
    hit = index.search("zero-amount invoices crash").results[0]
    assert doc.id == hit.chunk_id
    assert retriever.invoke("zero-amount invoices crash")[0].id == doc.id  # stable


def test_k_is_a_field_and_a_per_call_override(index: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(index=index, k=2, min_score=0)
    assert len(retriever.invoke("invoice")) == 2
    assert len(retriever.invoke("invoice", k=1)) == 1
    assert len(retriever.invoke("invoice", k=4)) == 4


async def test_async_invoke_honours_per_call_k(index: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(index=index, min_score=0)
    assert len(await retriever.ainvoke("invoice", k=3)) == 3


def test_path_glob_filters_on_the_workspace_path(index: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(index=index, min_score=0, path_glob="memory/2026-02-*")
    assert paths(retriever.invoke("invoice")) == {"memory/2026-02-03.md"}
    assert paths(retriever.invoke("invoice", path_glob="*billing*")) == {"memory/billing.md"}


def test_date_range_keeps_daily_files_in_range_and_excludes_undated_ones(
        index: MemoryIndex) -> None:
    retriever = OpenClawMemoryRetriever(index=index, min_score=0, k=10)
    everything = paths(retriever.invoke("invoice"))
    assert "memory/billing.md" in everything
    january = paths(retriever.invoke("invoice", date_from="2026-01-01", date_to=date(2026, 1, 31)))
    assert january == {"memory/2026-01-10.md", "memory/2026-01-20.md"}
    since = paths(retriever.invoke("invoice", date_from=date(2026, 1, 15)))
    assert since == {"memory/2026-01-20.md", "memory/2026-02-03.md"}


def test_group_chat_never_sees_memory_md_nor_citations(index: MemoryIndex) -> None:
    direct = OpenClawMemoryRetriever(index=index, min_score=0, k=10)
    group = OpenClawMemoryRetriever(index=index, min_score=0, k=10, chat_type="group")
    assert "MEMORY.md" in paths(direct.invoke("PostgreSQL billing peanuts"))
    group_docs = group.invoke("PostgreSQL billing peanuts")
    assert "MEMORY.md" not in paths(group_docs)
    assert all("citation" not in d.metadata for d in group_docs)
    assert "MEMORY.md" not in paths(direct.invoke("PostgreSQL billing", chat_type="channel"))


def test_sources_filter_selects_session_transcripts(ws: Path, tmp_path: Path) -> None:
    sessions = ws / "sessions"
    sessions.mkdir()
    (sessions / "s1.jsonl").write_text(
        json.dumps({"type": "message",
                    "message": {"role": "user", "content": "the invoice printer is jammed"}}) + "\n",
        encoding="utf-8")
    retriever = OpenClawMemoryRetriever(workspace=ws, index_path=tmp_path / "s.sqlite",
                                        embedding={"provider": "none"},
                                        sessions={"enabled": True}, min_score=0, k=10)
    try:
        only_sessions = retriever.invoke("invoice", sources=("sessions",))
        assert {d.metadata["source"] for d in only_sessions} == {"sessions"}
        only_memory = retriever.invoke("invoice", sources=["memory"])
        assert {d.metadata["source"] for d in only_memory} == {"memory"}
    finally:
        retriever.close()


def test_explain_adds_the_score_breakdown(index: MemoryIndex) -> None:
    doc = OpenClawMemoryRetriever(index=index, explain=True).invoke("BILL-482")[0]
    assert {"vector_score", "text_score", "fused", "decay"} <= set(doc.metadata["explain"])


def test_built_from_keywords_with_settings_sections(ws: Path, tmp_path: Path) -> None:
    retriever = OpenClawMemoryRetriever(workspace=ws, index_path=tmp_path / "kw.sqlite",
                                        embedding={"provider": "none"},
                                        search={"citations": "off"}, k=1)
    try:
        [doc] = retriever.invoke("BILL-482")
        assert doc.metadata["path"] == "memory/2026-01-10.md"
        assert "citation" not in doc.metadata  # the settings section was applied
    finally:
        retriever.close()


def test_closing_a_retriever_leaves_a_borrowed_index_open(index: MemoryIndex) -> None:
    OpenClawMemoryRetriever(index=index).close()
    assert index.search("BILL-482").results


def test_index_and_workspace_keywords_are_mutually_exclusive(index: MemoryIndex,
                                                             ws: Path) -> None:
    with pytest.raises(ValidationError, match="either index"):
        OpenClawMemoryRetriever(index=index, workspace=ws)


def test_unknown_per_call_options_are_rejected(index: MemoryIndex) -> None:
    with pytest.raises(ValidationError, match="colour"):
        OpenClawMemoryRetriever(index=index).invoke("invoice", colour="blue")


def test_format_docs_keeps_each_citation_next_to_its_text(index: MemoryIndex) -> None:
    docs = OpenClawMemoryRetriever(index=index, k=2, min_score=0).invoke("invoice")
    text = format_docs(docs)
    for doc in docs:
        assert f"{doc.page_content}\nSource: {doc.metadata['citation']}" in text


def test_format_docs_dates_each_dated_note_for_the_model(index: MemoryIndex) -> None:
    docs = OpenClawMemoryRetriever(index=index, k=4, min_score=0).invoke("invoice")
    by_path = {d.metadata["path"]: d for d in docs}
    assert by_path["memory/2026-02-03.md"].metadata["as_of"] == "2026-02-03"
    assert "as_of" not in by_path["memory/billing.md"].metadata  # undated: nothing claimed
    text = format_docs(docs)
    assert "(learned 2026-02-03)\n" + by_path["memory/2026-02-03.md"].page_content in text
    assert "(learned" not in format_docs([by_path["memory/billing.md"]])


def test_format_docs_labels_an_older_version_with_the_newer_notes_citation() -> None:
    from langchain_core.documents import Document

    older = Document(page_content="- Ada lives in Paris.", metadata={
        "citation": "MEMORY.md#L3", "superseded_by": "memory/2026-03-02.md#L2"})
    newer = Document(page_content="- Ada moved to Lyon.", metadata={
        "citation": "memory/2026-03-02.md#L2", "as_of": "2026-03-02"})
    text = format_docs([newer, older])
    assert text.startswith("(learned 2026-03-02)\n- Ada moved to Lyon.\nSource: ")
    assert ("(older: a newer note says otherwise, memory/2026-03-02.md#L2)\n- Ada lives in Paris."
            in text)


def test_local_model_finds_a_paraphrase_end_to_end(workspace: Path, tmp_path: Path) -> None:
    retriever = OpenClawMemoryRetriever(workspace=workspace, index_path=tmp_path / "local.sqlite",
                                        embedding={"provider": "local"}, k=1)
    try:
        [doc] = retriever.invoke("what food must the user avoid?")
        assert doc.metadata["path"] == "MEMORY.md"
        assert "peanuts" in doc.page_content
        assert retriever.memory.status()["provider"] == "local"
    finally:
        retriever.close()


def test_metadata_filters_read_front_matter_and_hit_fields(workspace: Path, tmp_path: Path) -> None:
    notes = workspace / "memory" / "trips"
    notes.mkdir(parents=True)
    (notes / "lisbon.md").write_text("---\nkind: travel\nyear: 2026\ntags:\n  - flight\n---\n"
                                     "Booked the flight to Lisbon for the offsite.\n", encoding="utf-8")
    (notes / "porto.md").write_text("---\nkind: travel\nyear: 2024\n---\n"
                                    "Took the flight to Porto for the conference.\n", encoding="utf-8")
    (notes / "dentist.md").write_text("---\nkind: health\nyear: 2026\n---\n"
                                      "Dentist appointment before the flight.\n", encoding="utf-8")
    with MemoryIndex.open(workspace, index_path=tmp_path / "f.sqlite",
                          embedding={"provider": "none"}) as memory:
        retriever = OpenClawMemoryRetriever(index=memory, min_score=0.0)

        def found(spec: dict[str, object]) -> set[str]:
            return {d.metadata["path"] for d in retriever.invoke("flight", filter=spec)}

        assert found({"kind": "travel", "year": {"$gte": 2025}}) == {"memory/trips/lisbon.md"}
        assert found({"kind": {"$in": ["health"]}}) == {"memory/trips/dentist.md"}
        assert found({"tags": {"$exists": True}}) == {"memory/trips/lisbon.md"}
        assert found({"path": {"$like": "memory/trips/p%"}}) == {"memory/trips/porto.md"}
        assert found({"date": {"$gte": "2026-01-01"}}) == set()  # topic notes have no date
        set_on_retriever = OpenClawMemoryRetriever(index=memory, min_score=0.0,
                                                   filter={"kind": "health"})
        assert {d.metadata["path"] for d in set_on_retriever.invoke("flight")} == {
            "memory/trips/dentist.md"}
        with pytest.raises(Exception, match="unknown filter operator"):
            retriever.invoke("flight", filter={"kind": {"$regex": "t.*"}})
