"""A question about how things are with someone it names reads all of their lines, not only
those the search ranked first: the newest answer no hit cites becomes the first hit, citing its
line, and the hits answering with older values are marked superseded by it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from search_hits import barbers_workspace, cited_hit, curated_lines, default_embed

from openclaw_memory import MemoryIndex
from openclaw_memory.search.question import ask
from openclaw_memory.search.recency import newer_first
from openclaw_memory.search.subject_lines import (
    PlacedLine,
    find_subject,
    line_label,
    named_under,
    other_names,
    question_subject,
)


@pytest.fixture(scope="module")
def embed() -> Any:
    return default_embed()


def _ada_lines(subject: set[str]) -> list[PlacedLine]:
    assert subject == {"ada", "park"}
    return [PlacedLine("- Ada Park moved to Lisbon.", "memory/2025-06-02.md", 3, "c9"),
            PlacedLine("- Ada Park bought a Honda.", "memory/2025-05-01.md", 1, "c8"),
            PlacedLine("- Ada Park lives in Paris.", "MEMORY.md", 4, "c1")]


def test_the_newest_answer_no_hit_cites_comes_first_citing_its_line(embed: Any) -> None:
    hits = [cited_hit("MEMORY.md", "- Ada Park lives in Paris.", 0.5),
            cited_hit("memory/2025-03-01.md", "- Ada Park moved to Berlin.", 0.4),
            cited_hit("memory/2025-04-01.md", "- Lee Wu moved to Rome.", 0.3)]
    ranked = newer_first(hits, ask("Where does Ada Park live now?"), embed, subject_text=_ada_lines)
    assert ranked[0].citation == "memory/2025-06-02.md#L3"
    assert ranked[0].snippet == "- Ada Park moved to Lisbon.\n\nSource: memory/2025-06-02.md#L3"
    assert ranked[0].as_of == "2025-06-02" and ranked[0].explanation.surfaced
    assert ranked[0].score == 0.5  # as the best hit it answers above
    assert [(h.path, h.superseded_by) for h in ranked[1:]] == [
        ("memory/2025-03-01.md", "memory/2025-06-02.md#L3"),
        ("MEMORY.md", "memory/2025-06-02.md#L3"),
        ("memory/2025-04-01.md", None)]


def test_an_uncited_line_older_than_the_cited_answer_changes_nothing(embed: Any) -> None:
    hits = [cited_hit("memory/2025-07-01.md", "- Ada Park moved to Oslo.", 0.5),
            cited_hit("memory/2025-04-01.md", "- Lee Wu moved to Rome.", 0.3)]
    ranked = newer_first(hits, ask("Where does Ada Park live now?"), embed, subject_text=_ada_lines)
    assert [h.path for h in ranked] == ["memory/2025-07-01.md", "memory/2025-04-01.md"]
    assert not any(h.explanation.surfaced for h in ranked)


def test_a_conversations_lines_are_not_searched_for_the_speaker(embed: Any) -> None:
    hits = [cited_hit("memory/2025-03-01.md", "- Nate: I moved to Berlin last week.", 0.5),
            cited_hit("memory/2025-02-01.md", "- Nate: I still live in Paris.", 0.4)]
    asked: list[set[str]] = []

    def lines(subject: set[str]) -> list[PlacedLine]:
        asked.append(subject)
        return [PlacedLine("- Nate: I moved to Oslo.", "memory/2025-06-01.md", 1, "c3")]

    ranked = newer_first(hits, ask("Where does Nate live now?"), embed, subject_text=lines)
    assert not any(h.explanation.surfaced for h in ranked)
    assert asked == []


def test_a_chinese_lead_no_hit_cites_is_found_in_memory() -> None:
    cited = [["- 赵敏一直找阿强理发。"], ["- 张伟改去找阿强剪头发了。"]]
    found = [PlacedLine("- 王芳改去找老周剪头发了。", "memory/2025-03-01.md", 1, "c1"),
             PlacedLine("- 王芳一直找小美理发。", "MEMORY.md", 5, "c2")]
    assert find_subject("王芳现在找谁理发？", cited, lambda probe: found) == ({"王芳"}, [])
    assert find_subject("王芳现在找谁理发？", cited, None) == (set(), [])
    asked: list[set[str]] = []
    assert find_subject("我现在找谁理发？", cited, lambda probe: asked.append(probe) or found) == (
        set(), [])
    assert asked == []  # a pronoun names nobody to look for


def test_a_chinese_question_gets_the_named_persons_newest_line(tmp_path: Path) -> None:
    # Everyone's haircut lines share the question's words; the named person's change says
    # 剪头发, not 理发: the search alone ranks the curated file and others' lines first.
    ws = barbers_workspace(tmp_path / "ws")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("王芳现在找谁理发？").results
    assert hits[0].citation == "memory/2025-03-05.md#L3"
    assert hits[0].as_of == "2025-03-05" and hits[0].explanation.surfaced
    assert hits[1].path == "MEMORY.md" and hits[1].superseded_by == "memory/2025-03-05.md#L3"


def test_a_subject_whose_store_read_fails_keeps_the_hits(embed: Any) -> None:
    hits = [cited_hit("MEMORY.md", "- Ada Park lives in Paris.", 0.5),
            cited_hit("memory/2025-03-01.md", "- Ada Park moved to Berlin.", 0.4)]
    ranked = newer_first(hits, ask("Where does Ada Park live now?"), embed,
                         curated_text=lambda: curated_lines("- Ada Park lives in Paris."),
                         subject_text=lambda subject: [])
    assert [h.path for h in ranked] == ["memory/2025-03-01.md", "MEMORY.md"]


def test_a_group_chat_never_gets_a_private_line_surfaced(tmp_path: Path) -> None:
    ws = barbers_workspace(tmp_path / "ws")
    curated = (ws / "MEMORY.md").read_text(encoding="utf-8")
    (ws / "MEMORY.md").write_text(curated + "- 王芳改找阿杰理发了。 (as of 2025-06-01)\n",
                                  encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        direct = memory.search("王芳现在找谁理发？").results
        group = memory.search("王芳现在找谁理发？", chat_type="group").results
    assert direct[0].path == "MEMORY.md" and "阿杰" in direct[0].snippet
    assert group and all(h.path != "MEMORY.md" for h in group)


def test_lines_under_a_heading_naming_the_subject_are_the_subjects() -> None:
    lines = ["# Memory", "## Orchard (research programme)", "- Sponsor: Helga Brandt.",
             "- Budget: 40k for the year.", "## People", "- Helga likes tea.", "- Orchard slips."]
    assert named_under(lines, {"orchard"}) == [
        "## Orchard (research programme)", "- Sponsor: Helga Brandt.",
        "- Budget: 40k for the year.", "- Orchard slips."]


def test_a_line_label_names_the_attribute_not_a_person() -> None:
    assert line_label("- Work laptop: ThinkPad X1 Carbon.", {"chen", "yu"}) == "work laptop"
    assert line_label("- 工作电脑\uff1aThinkPad", set()) == "工作电脑"
    assert line_label("- Maya: signed the lease in Lyon.", {"maya"}) == ""  # only the name
    # A person's full name says whom the line is about, not which of their facts.
    assert line_label("- Tom Reyes: Maya's colleague, lives in Leeds.", {"maya"}) == ""
    assert line_label("- Ada lives in Paris.", {"ada"}) == ""
    assert line_label("- 10:00 Standup: retry bug still open.", set()) == ""


def test_an_unchanged_fact_under_its_subjects_heading_keeps_its_place(tmp_path: Path) -> None:
    # "- Sponsor: Helga" names no Orchard; read as Orchard's (its heading), it answers "Who
    # sponsors Orchard?" itself, and the newer notes on Orchard's budget do not pass it.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n## Orchard (customer research, 2026)\n- Sponsor: Helga Brandt, head of "
        "research.\n- Budget: 40k for the year.\n- Weekly sync on Tuesdays.\n", encoding="utf-8")
    for day, text in {"2026-02-02": "- Orchard: 18 interviews booked, incentives eating the budget.",
                      "2026-03-30": "- Orchard spend so far: 26k of 40k.",
                      "2026-04-14": "- Finance approved the top-up for Orchard, 55k now."}.items():
        (ws / "memory" / f"{day}.md").write_text(text + "\n", encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("Who sponsors Orchard?").results
    assert hits[0].path == "MEMORY.md" and "Helga" in hits[0].snippet


def test_a_name_with_another_in_brackets_gives_the_subject_its_other_name() -> None:
    lines = ["- Wu Fang (吴芳): my cousin, lives in Xiamen.", "- 用户：刘洋（小刘），做风控。"]
    assert other_names({"吴芳"}, lines) == [frozenset({"wu", "fang"})]
    assert other_names({"wu", "fang"}, lines) == [frozenset({"吴芳"})]
    assert other_names({"小刘"}, lines) == [frozenset({"刘洋"})]
    assert other_names({"王磊"}, lines) == []


def test_a_line_naming_the_subject_by_its_other_name_is_the_subjects(embed: Any) -> None:
    # The question names her in Chinese; the curated line about her son names her in English:
    # read as hers, it answers, and the newer notes of her moves do not pass it.
    curated = cited_hit("MEMORY.md", "- Wu Fang (吴芳): my cousin, lives in Xiamen, works in "
                                     "logistics.\n- Wu Fang's son is called Lele (乐乐).", 0.5)
    thinking = cited_hit("memory/2025-03-02.md", "- 吴芳说厦门太潮了，想搬回老家。", 0.45)
    moved = cited_hit("memory/2025-06-10.md", "- 吴芳搬回福州了，新家在鼓楼区。", 0.44)
    ranked = newer_first([moved, thinking, curated], ask("吴芳的儿子叫什么？"), embed)
    assert ranked[0].path == "MEMORY.md"


def test_a_project_named_in_lower_case_is_the_subject_over_an_acronym() -> None:
    # The hand-written knowledge-update dev set's en27: "CI" had been the subject, and the
    # GitHub Actions line stayed above the move to Buildkite.
    lines = ["- GHA bill for December: $11k. harbor CI p50 is 31 minutes on GitHub Actions.",
             "- Gabriel wants self-hosted runners or a different CI.",
             "- Migrated harbor's pipelines off GHA. Buildkite agents on our own boxes now.",
             '- Main repo: "harbor" monorepo (Go + TypeScript), Bazel build.']
    assert question_subject("What CI does harbor use now?", lines) == {"harbor"}
    assert question_subject("What build tool does harbor use?", lines) == {"harbor"}
    # A name, a pronoun or a word no two lines hold is not replaced.
    assert question_subject("What CI does Gabriel want?", lines) == {"gabriel"}
    assert question_subject("What CI does he use now?", lines) == {"ci"}
    assert question_subject("What CI does kestrel use now?", lines) == {"ci"}


def test_the_first_person_i_is_nobodys_name() -> None:
    # "What should I order for Sam?" had taken "I" and "Sam" for the subject: no line says
    # both, and the newer order ("Sam has quit caffeine") could not move up (en17).
    lines = ["- Coffee run: Sam oat flat white.", "- Sam has quit caffeine; peppermint tea now."]
    assert question_subject("What should I order for Sam on the coffee run?", lines) == {"sam"}
    assert question_subject("What do I'm told Sam drinks?", lines) == {"sam"}


def test_a_line_labelled_with_a_persons_name_still_answers_for_the_subject_it_names(
        embed: Any) -> None:
    # "Dana Whitfield: Omar's manager from June on" is about Dana and states Omar's manager.
    curated = cited_hit("MEMORY.md", "- Omar's manager is Sarah Kim.", 0.6)
    dana = cited_hit("memory/2026-06-10.md", "- Dana Whitfield: Omar's manager from June on.", 0.5)
    ranked = newer_first([curated, dana], ask("Who is Omar's manager now?"), embed)
    assert [h.path for h in ranked] == ["memory/2026-06-10.md", "MEMORY.md"]
    assert ranked[1].superseded_by == "memory/2026-06-10.md#L1"
