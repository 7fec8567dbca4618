"""The PostgreSQL backend behaves as the folder + SQLite one: documents with paths and lines,
append-only daily notes, citations that read back, hybrid search, the path gate, bad input,
export/publish, versioned migrations, and workspaces that never see each other."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from search_hits import barbers_workspace

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import ContentError, PathRefusedError, StoreError
from openclaw_memory.postgres import SCHEMA_VERSION, PostgresMemory
from openclaw_memory.postgres.tenant import Tenant

DAY = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
KEYWORD_ONLY = {"embedding": {"provider": "none"}, "timezone": "UTC"}


def _pg(dsn: str, name: str = "agent", **kw: object) -> PostgresMemory:
    return PostgresMemory.open(dsn, workspace=name, **{**KEYWORD_ONLY, **kw})


def test_a_written_note_is_found_with_a_citation_that_get_reads_back(pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="alice", timezone="UTC") as memory:  # real model
        memory.write("We chose PostgreSQL for the billing service database.", now=DAY)
        second = memory.write("Alice prefers green tea in the morning.", now=DAY)
        assert (second.path, second.start_line, second.end_line) == ("memory/2026-03-02.md", 3, 3)
        response = memory.search("which database does billing use?")
        assert response.mode == "hybrid"
        top = response.results[0]
        assert top.path == "memory/2026-03-02.md" and top.citation
        back = memory.get(top.citation)
        assert "PostgreSQL for the billing" in back.text
        assert memory.get("memory/2026-03-02.md", 3, 1).text == "Alice prefers green tea in the morning."


def test_an_off_topic_question_gets_nothing_and_cjk_is_found(pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="zh", timezone="UTC") as memory:
        memory.write("我们选择了新的部署方案,下周上线。", target="memory")
        memory.write("The deploy window is Tuesday night.", now=DAY)
        assert memory.search("部署方案").results[0].path == "MEMORY.md"
        assert memory.search("How tall is Mount Everest?").results == ()


def test_absent_rare_words_and_titles_lower_confidence_on_postgres_too(pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="rare", timezone="UTC") as memory:
        memory.write("Bart discovered a new bacteria culture in the school lab.", now=DAY)
        memory.write("Bart读了他最喜欢的冒险小说《鲁滨逊漂流记》。", now=DAY)
        off = memory.search("Who discovered penicillin?")
        assert off.results == ()
        assert any("penicillin appears nowhere in memory" in n for n in off.notes)
        lowered = memory.search("Who discovered penicillin?", min_score=0.0).results
        assert memory.search("Who discovered the bacteria culture?").results
        title = memory.search("《战争与和平》的作者是谁？")
        assert title.results == () and any("《战争与和平》" in n for n in title.notes)
    with PostgresMemory.open(pg_dsn, workspace="rare", timezone="UTC",
                             search={"absent_name_check": False}) as unchecked:
        raw = unchecked.search("Who discovered penicillin?", min_score=0.0).results
        # Every score halved (relevance gate 0.15 over the absent gate 0.30); unchecked, the
        # shared "discovered" is a hit.
        assert max(h.score for h in lowered) == pytest.approx(max(h.score for h in raw) / 2)
        assert unchecked.search("Who discovered penicillin?").results


def test_a_search_of_an_empty_workspace_says_it_holds_no_documents_and_only_then(
        pg_dsn: str) -> None:
    with _pg(pg_dsn, "empty-hint") as memory:
        assert any("holds no documents yet" in n for n in memory.search("billing").notes)
        memory.write("The deploy window is Tuesday night.", now=DAY)
        nothing = memory.search("zebra")
        assert nothing.results == () and not any("no documents" in n for n in nothing.notes)


def test_a_weak_paraphrase_gets_low_confidence_hits_apart(pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="weak", timezone="UTC") as memory:
        memory.write("Coffee: dark roast, no sugar.\nFlight to Lisbon on December 3rd.",
                     target="memory")
        response = memory.search("Where am I travelling next month?")
        assert response.results == ()
        assert [h.path for h in response.low_confidence_results] == ["MEMORY.md"]
        assert memory.search("How tall is Mount Everest?").low_confidence_results == ()


def test_a_question_in_the_other_language_is_translated(pg_dsn: str) -> None:
    notes = ("上午和房东讨论了续租合同，租金不变。\n下午去超市买了牛奶、鸡蛋和面包。\n"
             "女儿的生日派对定在六月十二日，在公园里举行。\n晚上读完了一本关于宇宙的科普书。\n"
             "车子的保险下个月到期，需要续保。\n同事推荐了一家新开的川菜馆。\n"
             "周末计划去爬山，天气预报说会下雨。")
    with PostgresMemory.open(pg_dsn, workspace="bilingual", timezone="UTC") as memory:
        memory.write(notes, target="memory")
        top = memory.search("When is my daughter's birthday party?").results[0]
        assert top.citation == "MEMORY.md#L1-L5"  # line 3, the party, at the centre
        assert top.explanation is not None and top.explanation.translated
        assert "女儿的生日派对" in memory.get(top.citation).text
    with PostgresMemory.open(pg_dsn, workspace="bilingual", timezone="UTC",
                             search={"translate_queries": False}) as memory:
        # by meaning alone, just over the gate, and nothing says which line
        alone = memory.search("When is my daughter's birthday party?").results[0]
        assert alone.citation == "MEMORY.md#L1-L7" and alone.score < top.score


def test_daily_notes_are_appended_as_blocks_and_a_duplicate_is_not_written_again(
        pg_dsn: str) -> None:
    with _pg(pg_dsn) as memory:
        first = memory.write("first note", now=DAY)
        again = memory.write("first note\n", now=DAY)
        memory.write("second\nnote", now=DAY)
        assert first.appended and not again.appended and again.reason == "duplicate"
        assert memory.get("memory/2026-03-02.md").text == "first note\n\nsecond\nnote\n"


def test_the_same_statement_is_cited_and_any_other_note_written_with_related_lines_as_on_sqlite(
        pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="dup", timezone="UTC") as memory:  # real model
        memory.write("Elena Rossi is vegan.", target="memory")
        again = memory.write("elena rossi is vegan", now=DAY)
        assert again.reason == "duplicate" and (again.path, again.start_line) == ("MEMORY.md", 1)
        changed = memory.write("Elena Rossi is no longer vegan.", now=DAY)
        assert changed.appended
        first = changed.related[0]
        assert first.citation == "MEMORY.md#L1" and first.text.startswith("Elena Rossi is vegan.")
        assert first.learned is not None and f"(as of {first.learned})" in first.text
        assert memory.write("Elena Rossi is keto.", now=DAY).appended  # the same words, swapped


def test_export_writes_what_was_written_byte_for_byte_and_publish_loads_it_back(
        pg_dsn: str, tmp_path: Path) -> None:
    with _pg(pg_dsn, "source") as memory:
        memory.write("Kestrel launches on Friday.", now=DAY)
        memory.write("Curated: the API key lives in the vault.", target="memory")
        memory.put_document("memory/projects/kestrel.md", b"# Kestrel\r\nno final newline")
        exported = memory.export(tmp_path / "out")
        assert exported == 3
        for path in memory.paths():
            assert (tmp_path / "out" / path).read_bytes() == memory.documents_bytes(path)
    with _pg(pg_dsn, "copy") as other:
        report = other.publish(tmp_path / "out")
        assert (report.written, report.unchanged) == (3, 0)
        again = other.publish(tmp_path / "out")
        assert (again.written, again.unchanged) == (0, 3)  # incremental, as sync is
        (tmp_path / "out" / "memory" / "2026-03-02.md").write_text("Kestrel moved to Monday.\n")
        (tmp_path / "out" / "memory" / "projects" / "kestrel.md").unlink()
        changed = other.publish(tmp_path / "out")
        assert (changed.written, changed.unchanged, changed.deleted) == (1, 1, 0)
        assert "memory/projects/kestrel.md" in other.paths()  # kept without mirror
        assert other.publish(tmp_path / "out", mirror=True).deleted == 1
        assert other.search("Kestrel Monday").results[0].path == "memory/2026-03-02.md"
        assert other.search("kestrel friday").results[0].path != "memory/projects/kestrel.md"


def test_a_named_persons_newest_line_no_hit_cites_is_surfaced_as_on_sqlite(
        pg_dsn: str, tmp_path: Path) -> None:
    folder = barbers_workspace(tmp_path / "barbers")
    with PostgresMemory.open(pg_dsn, workspace="barbers", timezone="UTC") as memory:  # real model
        memory.publish(folder)
        hits = memory.search("王芳现在找谁理发？").results
    assert hits[0].citation == "memory/2025-03-05.md#L3" and hits[0].explanation.surfaced
    assert hits[1].superseded_by == "memory/2025-03-05.md#L3"


def test_workspaces_share_a_database_but_no_search_get_or_write_crosses_them(
        pg_dsn: str) -> None:
    with _pg(pg_dsn, "alice") as alice, _pg(pg_dsn, "bob") as bob:
        alice.write("alice secret: the vault code is 4711", now=DAY)
        bob.write("bob likes climbing", now=DAY)
        assert [h.path for h in alice.search("vault code").results] == ["memory/2026-03-02.md"]
        assert bob.search("vault code").results == ()
        assert "4711" not in bob.get("memory/2026-03-02.md").text
        assert bob.get("memory/2026-03-02.md").text == "bob likes climbing\n"
        bob.write("alice secret: the vault code is 4711", now=DAY)  # same text: own copy
        assert alice.get("memory/2026-03-02.md").text.count("4711") == 1
        bob.delete_document("memory/2026-03-02.md")
        assert alice.search("vault code").results  # bob's delete never reaches alice
        assert alice.paths() == ["memory/2026-03-02.md"] and bob.paths() == []


def test_a_statement_without_the_workspace_parameter_is_refused_before_the_server(
        pg_dsn: str) -> None:
    with _pg(pg_dsn) as memory:
        tenant: Tenant = memory.tenant
        with pytest.raises(AssertionError, match="not scoped"):
            tenant.rows("select count(*) from openclaw_memory.chunks")


def test_every_backend_statement_names_the_workspace(pg_dsn: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    original = Tenant._params

    def spy(self: Tenant, sql: str, params: object) -> dict[str, object]:
        seen.append(sql)
        return original(self, sql, params)  # type: ignore[arg-type]

    monkeypatch.setattr(Tenant, "_params", spy)
    with _pg(pg_dsn) as memory:
        memory.write("a note about rockets", now=DAY)
        memory.search("rockets")
        memory.get("memory/2026-03-02.md")
        memory.status()
    data = [s for s in seen if "openclaw_memory.chunks" in s or "openclaw_memory.documents" in s]
    assert data and all("workspace = %(ws)s" in s or "values (%(ws)s" in s for s in data)


def test_the_path_gate_and_bad_input_hold_on_this_backend(pg_dsn: str) -> None:
    with _pg(pg_dsn) as memory:
        for bad in ("../etc/passwd.md", "/etc/x.md", "memory/../../x.md", "notes.txt",
                    "memory/a\x00.md", "memory\\x.md", "other/x.md", "memory/"):
            with pytest.raises(PathRefusedError):
                memory.get(bad)
            with pytest.raises(PathRefusedError):
                memory.put_document(bad, b"x")
        with pytest.raises(PathRefusedError):
            memory.write("note", area="../escape")
        with pytest.raises(ContentError):
            memory.write("nul \x00 byte")
        with pytest.raises(ContentError):
            memory.write("   \n ")
        assert memory.paths() == []  # nothing was written by any refused call
        assert memory.get("memory/never.md").missing


@pytest.mark.parametrize("query", [
    '"unbalanced', "a AND OR NOT", "(", "*", "NEAR(x y)", "col:value", "x' or 1=1 --",
    "a & b | !c", "<-> :*", "'); drop table openclaw_memory.chunks; --", "\\", "😀 emoji",
])
def test_query_syntax_is_plain_text_on_postgres_too(pg_dsn: str, query: str) -> None:
    with _pg(pg_dsn) as memory:
        memory.write(f"a note that mentions {query} verbatim and chunks", now=DAY)
        response = memory.search(query)
        assert not any("failed" in n for n in response.notes)
        assert memory.search("verbatim").results  # the table is still there


def test_a_bad_dsn_is_a_one_line_store_error() -> None:
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        PostgresMemory.open("postgresql://nobody@127.0.0.1:1/nothing", **KEYWORD_ONLY)


def test_migrations_are_recorded_and_a_newer_schema_is_refused(pg_dsn: str) -> None:
    _pg(pg_dsn).close()
    _pg(pg_dsn).close()  # a second open runs nothing again
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        versions = [r[0] for r in conn.execute(
            "select version from openclaw_memory.schema_migrations order by version")]
        assert versions == list(range(1, SCHEMA_VERSION + 1))
        conn.execute("insert into openclaw_memory.schema_migrations(version, description) "
                     "values (%s, 'from the future')", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer than this library"):
        _pg(pg_dsn)


def test_a_model_change_rebuilds_the_workspace_with_vectors(pg_dsn: str) -> None:
    with _pg(pg_dsn) as memory:
        memory.write("The staging cluster runs on ARM machines.", now=DAY)
        assert memory.sync().vectors_pending == 0
        assert memory.status()["vectors"] == 0
    with PostgresMemory.open(pg_dsn, workspace="agent", timezone="UTC") as memory:
        assert memory.status()["needs_rebuild"]
        report = memory.sync()
        assert report.full_rebuild and report.chunks_added == 1
        assert memory.status()["vectors"] == 1 and not memory.status()["needs_rebuild"]
        assert memory.search("processor architecture of staging").mode == "hybrid"


def test_the_same_notes_rank_the_same_on_sqlite_and_on_postgres(pg_dsn: str,
                                                                workspace: Path) -> None:
    notes = ["We picked Redis for the session cache.", "Bob is allergic to peanuts.",
             "The quarterly review moved to Thursday.", "Deploys are frozen in December.",
             "Carol runs the on-call rotation this month."]
    with MemoryIndex.open(workspace, **KEYWORD_ONLY) as local, _pg(pg_dsn) as shared:
        for i, note in enumerate(notes):
            day = datetime(2026, 3, 1 + i, tzinfo=UTC)
            local.write(note, now=day)
            shared.write(note, now=day)
        for query in ["session cache", "peanuts allergy", "when is the review", "December"]:
            a = [(h.path, h.start_line) for h in local.search(query).results]
            b = [(h.path, h.start_line) for h in shared.search(query).results]
            assert a[:1] == b[:1], query


def test_common_terms_are_estimated_from_planner_statistics_and_rare_ones_counted(
        pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.postgres import term_counts

    monkeypatch.setattr(term_counts, "COUNT_CAP", 10)
    with _pg(pg_dsn) as memory:
        for i in range(60):
            memory.put_document(f"memory/n{i}.md",
                                f"meeting notes {i}: {'zebra ' if i < 3 else ''}budget".encode())
        memory.sync()  # ANALYZE: pg_stats now lists the common lexemes
        total, counts = memory.index.term_statistics(["meeting", "zebra", "budget"])
        assert total == 60
        assert counts["zebra"] == 3                    # rare: counted exactly
        assert 50 <= counts["meeting"] <= 70           # common: estimated (exact is 60)
        with psycopg.connect(pg_dsn) as conn:
            tracked = conn.execute("select most_common_elems::text from pg_stats where "
                                   "tablename = 'chunks' and attname = 'tsv'").fetchone()
        assert tracked is not None and "meet" in tracked[0]
        assert memory.search("zebra meeting").results[0].path in {
            "memory/n0.md", "memory/n1.md", "memory/n2.md"}


def test_a_phrase_costs_every_chunk_holding_its_words_and_large_workspaces_count_it_so(
        pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from openclaw_memory.language.textsearch import keyword_terms
    from openclaw_memory.postgres import term_counts
    from openclaw_memory.search.keywords import candidate_query

    with _pg(pg_dsn) as memory:
        for i in range(40):  # 找 and 一 in every note, never side by side
            memory.put_document(f"memory/n{i}.md", f"我找了很久，第{i}天终于有一个答案。".encode())
        memory.put_document("memory/sweater.md", "我找一件红毛衣。".encode())
        pair, sweater = keyword_terms("找一")[0], keyword_terms("毛衣")[0]
        # what the GIN index hands over for the pair: every chunk holding both characters
        assert memory.index.term_costs([pair, sweater]) == {pair: 41, sweater: 1}
        assert memory.index.term_statistics([pair])[1] == {pair: 1}  # small: counted exactly
        monkeypatch.setattr(memory.index, "keyword_budgets", (20, 10))
        memory.index.forget_counts()
        plan = candidate_query(memory.index, [pair, sweater])
        assert plan.expression is not None and "毛" in plan.expression
        assert "找" not in plan.expression  # 41 chunks to read, over the budget of 20
        monkeypatch.setattr(term_counts, "COUNT_CAP", 10)
        memory.index.forget_counts()
        # large: the scattered count (up to the cap), not the exact 1
        assert memory.index.term_statistics([pair])[1] == {pair: 10}


def test_hits_cite_the_lines_that_hold_the_words_as_with_sqlite(pg_dsn: str) -> None:
    filler = [f"- Standup {n}: nothing new on the roadmap." for n in range(1, 19)]
    lines = ["# 2026-03-02", "", *filler]
    lines[12] = "- Joanna adopted a rescue greyhound called Pixel from the Riverside shelter."
    body = "\n".join(lines) + "\n"
    with _pg(pg_dsn) as memory:
        memory.put_document("memory/2026-03-02.md", body.encode())
        hit = memory.search("Pixel the greyhound from the Riverside shelter").results[0]
        assert hit.citation == "memory/2026-03-02.md#L11-L15"
        assert hit.explanation.chunk_lines == (1, 20)
        assert memory.get(hit.citation).text == "\n".join(lines[10:15])


def test_the_vector_index_is_built_with_the_memory_its_graph_needs_up_to_the_setting(
        pg_dsn: str) -> None:
    from openclaw_memory.postgres.search_side import hnsw_build_mb

    # 1M chunks of 512 dims: about 2.6 GB of graph, granted up to the setting
    assert 2_400 < hnsw_build_mb(1_000_000, 512, 1 << 20) < 3_000
    assert hnsw_build_mb(1_000_000, 512, 1024) == 1024
    assert hnsw_build_mb(10, 512, 1024) == 64  # never below the server's own default
    with PostgresMemory.open(pg_dsn, workspace="hnsw", timezone="UTC",
                             store={"index_build_mb": 256, "hnsw_ef_search": 40}) as memory:
        assert memory.index.ef_search == 40
        memory.write("The staging cluster runs on ARM machines.", now=DAY)
        memory.sync()
        with psycopg.connect(pg_dsn) as conn:
            options = conn.execute(
                "select c.reloptions from pg_class c join pg_namespace n on n.oid = "
                "c.relnamespace where n.nspname = 'openclaw_memory' and c.relname = "
                "'chunks_hnsw_512'").fetchone()
        assert options is not None and {"m=16", "ef_construction=64"} <= set(options[0])
        assert memory.search("ARM machines").results


def test_the_vector_side_runs_on_a_second_connection_in_the_searchs_own_snapshot(
        pg_dsn: str) -> None:
    with PostgresMemory.open(pg_dsn, workspace="side", timezone="UTC") as memory, \
            PostgresMemory.open(pg_dsn, workspace="side", timezone="UTC") as writer:
        memory.write("The staging cluster runs on ARM machines.", now=DAY)
        provider = memory.provider
        assert provider is not None
        vector = provider.embed_query("which machines does staging run on?")
        assert memory.index.alongside(lambda b: 1) is None  # outside a search: run it yourself

        def ids(backend: Any) -> set[int]:
            return {key for key, _ in backend.vector_search(vector, 10, ("memory",))}
        before = ids(memory.index)
        with memory.index.snapshot():
            memory.index.max_rowid()  # the snapshot is taken: later commits are not in it
            writer.write("Staging moved to x86 machines last week.", now=DAY)
            later = memory.index.alongside(ids)
            assert later is not None
            with psycopg.connect(pg_dsn) as conn:
                names = {r[0] for r in conn.execute("select application_name from "
                                                    "pg_stat_activity")}
            assert later.result() == before  # the second connection read the same rows,
            # the chunk the writer has since replaced included
        assert "openclaw-memory-side" in names
        # the append replaced the file's chunk: outside the snapshot only the new one is seen
        assert ids(memory.index).isdisjoint(before)
        hits = memory.search("which machines does staging run on?").results
        assert {h.path for h in hits} == {"memory/2026-03-02.md"}


def test_a_search_answers_on_one_connection_when_a_second_cannot_be_opened(
        pg_dsn: str) -> None:
    import uuid

    with PostgresMemory.open(pg_dsn, workspace="solo", timezone="UTC") as memory:
        memory.write("The staging cluster runs on ARM machines.", now=DAY)
    role = f"solo_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # one connection, not two
        conn.execute(f"create role {role} login connection limit 1")
        database = pg_dsn.rsplit("/", 1)[1]
        conn.execute(f"grant create on database {database} to {role}")
        conn.execute(f"grant usage, create on schema openclaw_memory to {role}")
        conn.execute(f"grant select, insert, update, delete on all tables in schema "
                     f"openclaw_memory to {role}")
        conn.execute(f"grant usage, select on all sequences in schema openclaw_memory to {role}")
    with PostgresMemory.open(pg_dsn.replace("postgres@", f"{role}@", 1), workspace="solo",
                             timezone="UTC") as memory:
        response = memory.search("which machines does staging run on?")
        assert [h.path for h in response.results] == ["memory/2026-03-02.md"]
        assert response.results[0].explanation.vector_score is not None  # vectors still read
