"""A question about how things are now gets the newest note that answers it first: the
question's subject found by its names (or, in Chinese, its lead), a note answering when it is
in the group of the subject's lines that fits the question best (lines grouped by meaning,
words and cue words); nothing moves when the best-fitting line is about something else."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from search_hits import cited_hit, curated_lines, default_embed

from openclaw_memory import MemoryIndex
from openclaw_memory.config import SearchSettings
from openclaw_memory.errors import ContentError
from openclaw_memory.search.attributes import attribute_patterns, attributes_of, hinted_attributes
from openclaw_memory.search.present_value import CUE_WEIGHT, _alike, asks_now, asks_present, question_subject
from openclaw_memory.search.question import ask, read_question
from openclaw_memory.search.recency import newer_first
from openclaw_memory.search.request import SearchRequest


@pytest.fixture(scope="module")
def embed() -> Any:
    return default_embed()


def _workspace(root: Path, curated: str, logs: dict[str, str]) -> Path:
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text(curated, encoding="utf-8")
    for day, text in logs.items():
        (root / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    return root


def test_a_move_noted_in_a_daily_log_outranks_the_curated_home_asked_with_or_without_now(
        tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws", "# Facts\n\n- The user lives in Paris and works at Acme "
                    "as a data engineer.\n- The user likes jazz.\n",
                    {"2026-10-02": "- The user told me they moved to Berlin last month and now "
                                   "work at Globex.\n- Lunch with Sam.\n"})
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        for question in ("Where does the user live?", "Where does the user live now?"):
            hits = memory.search(question).results
            assert hits[0].path == "memory/2026-10-02.md", question
            assert hits[1].path == "MEMORY.md"
            assert hits[1].superseded_by == hits[0].citation and hits[0].superseded_by is None
        # Asked about the past, the scores' order stands and nothing is marked.
        past = memory.search("Where did the user live before?").results
        assert all(h.superseded_by is None for h in past)


def test_a_chinese_question_finds_its_subject_by_its_lead_and_the_newer_move_first(
        tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "ws", "# 事实\n\n- 王芳住在上海。\n- 王芳在腾讯工作。\n- 李强住在广州。\n",
                    {"2026-03-01": "- 王芳搬到了北京。\n- 今天下雨。\n",
                     "2026-04-01": "- 王芳最近开始吃素。\n- 看了预算。\n"})
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("王芳现在住在哪里？").results
    assert hits[0].path == "memory/2026-03-01.md"
    # The newer note on her diet is about something else: not an answer, not first.
    assert [h.path for h in hits].index("MEMORY.md") == 1


def test_a_newer_note_on_another_attribute_never_passes_the_fact_asked_about(embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park lives in Lisbon.\n- Ada Park works at Globex.", 0.5)
    diet = cited_hit("memory/2025-02-17.md", "- Ada Park became keto.", 0.49)
    car = cited_hit("memory/2025-04-05.md", "- Ada Park switched to a Skoda.", 0.45)
    ranked = newer_first([curated, diet, car], ask("Where does Ada Park work now?"), embed)
    assert ranked[0].path == "MEMORY.md" and ranked[0].superseded_by is None
    assert all(h.superseded_by is None for h in ranked)


def test_a_change_worded_unlike_the_question_is_still_its_answer(embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park lives in Lisbon. (as of 2025-01-10)", 0.5)
    other = cited_hit("memory/2025-02-01.md", "- Ada Park bought a Honda.", 0.48)
    moved = cited_hit("memory/2025-03-10.md", "- Ada Park's new address is in Oslo.", 0.3)
    ranked = newer_first([curated, other, moved], ask("Where does Ada Park live now?"), embed)
    assert [h.path for h in ranked][:2] == ["memory/2025-03-10.md", "MEMORY.md"]
    assert ranked[1].superseded_by == "memory/2025-03-10.md#L1"
    assert ranked[0].as_of == "2025-03-10" and ranked[1].as_of == "2025-01-10"


def test_without_now_conversation_logs_keep_their_order_and_notes_of_facts_do_not(
        embed: Any) -> None:
    # A conversation log names its speakers on every line: without "now" only a curated
    # answer yields there. Notes of facts are ordered newest first either way.
    said_old = cited_hit("memory/2025-01-05.md", "- [D1:3] Ada Park: I moved to Lisbon last week!", 0.6)
    said_new = cited_hit("memory/2025-03-05.md", "- [D7:2] Ada Park: We moved to Oslo in March.", 0.5)
    ranked = newer_first([said_old, said_new], ask("Where does Ada Park live?"), embed)
    assert [h.path for h in ranked] == [said_old.path, said_new.path]
    assert all(h.superseded_by is None for h in ranked)
    # A Chinese speaker's turn, after a full-width colon, is a conversation's too.
    zh_old = cited_hit("memory/2025-01-05.md", "- 王芳：我上周搬到了杭州！", 0.6)
    zh_new = cited_hit("memory/2025-03-05.md", "- 王芳：三月我们又搬去了苏州。", 0.5)
    ranked = newer_first([zh_old, zh_new], ask("王芳住在哪里？"), embed)
    assert [h.path for h in ranked] == [zh_old.path, zh_new.path]
    old = cited_hit("memory/2025-01-05.md", "- Ada Park moved to Lisbon.", 0.6)
    new = cited_hit("memory/2025-03-05.md", "- Ada Park moved to Oslo.", 0.5)
    for question in ("Where does Ada Park live?", "Where does Ada Park live now?"):
        ranked = newer_first([old, new], ask(question), embed)
        assert [h.path for h in ranked] == [new.path, old.path], question
        assert ranked[1].superseded_by == new.citation


def test_the_subject_is_the_questions_names_or_its_chinese_lead() -> None:
    assert question_subject("Where does Ada Park live now?", []) == {"ada", "park"}
    assert question_subject("Who is Chloe Martin's manager now?", []) == {"chloe", "martin"}
    # An acronym is part of the question, not whom it is about, unless nothing else is named.
    assert question_subject("Which API style does Plover use now?", []) == {"plover"}
    assert question_subject("What is the API now?", []) == {"api"}
    assert question_subject("王芳现在住在哪里？", ["王芳搬到了北京。", "王芳住在上海。", "刘洋现在住在北京。"]
                            ) == {"王芳"}
    # 的 ends whose it is: a line saying "青松每周二开例会" is about 青松's meeting too.
    assert question_subject("青松的例会现在是哪天？", ["青松的例会在周四。", "青松的例会改到了周三。",
                                              "青松每周二开例会。"]) == {"青松"}
    # Lines all written "杨磊现在..." or "杨磊在..." do not stretch the name into 现 or 在.
    assert question_subject("杨磊现在住在哪里？", ["杨磊现在住在成都。", "杨磊现在在腾讯上班。"]) == {"杨磊"}
    assert question_subject("杨磊在哪里工作？", ["杨磊在小米工作。", "杨磊在腾讯上班。"]) == {"杨磊"}
    # Named nowhere: the words most cited lines share.
    assert question_subject("Where does my sister live now?",
                            ["- my sister lives in Rome", "- my sister moved to Milan",
                             "- we live near the sea"]) == {"sister"}
    # One capitalised word fewer lines hold than a word most lines share is what is asked
    # about; the project most lines name is the subject. A person's name stays the subject.
    project = ["- kite-api: Flask service. Python 3.10, on Fly.", "- kite-api pods restarting.",
               "- INC-7: rolled kite-api back to 3.9.", "- kite-api latency fine."]
    assert question_subject("Which Python version does kite-api run on?", project) == {"kite", "api"}
    assert question_subject("Where does Maya live now?", ["- Maya lives in Bristol.",
                                                          "- Maya moved to Lyon."]) == {"maya"}
    # A possessive leaves no "s" for every possessive in the notes to share.
    assert question_subject("When is my daughter's birthday party?",
                            ["- The user's favourite tea is oolong.", "- The cat's name is Miso."]
                            ) == set()


def test_when_a_question_is_asked_about_is_never_its_subject() -> None:
    lines = ["- Amara is on holiday this week; Joon makes scope calls.", "- Felix is on call this week.",
             "- Dev is on call this week again.", "- Joon is on call this week.",
             "- Amara set the scope."]
    assert "week" not in question_subject("Who makes scope decisions this week?", lines)


def test_questions_about_now_and_the_present_tense_are_told_from_the_past() -> None:
    assert asks_now("Where does Ada live now?") and asks_now("王芳现在住在哪里？")
    assert not asks_now("现在" + "我们聊了很多事情，" * 20)  # a pasted dialogue is no question
    assert asks_present("Where does the user live?") and asks_present("Who is Ada's manager?")
    assert asks_present("王芳住在哪里？")
    # Advice about the present asks how things are (the hand-written dev set's en17).
    assert asks_present("What should I order for Sam on the coffee run?")
    # "can" asks what is possible, not how things are (the bundled sample's "How many people
    # can join a course?" lost its answer to the time stage).
    assert not asks_present("How many people can join a course?")
    for doer in ("Who owns Kestrel?", "Who insures Ada Park?", "What monitors the API?"):
        assert asks_present(doer), doer
    for not_present in ("Who discussed the plan?", "What happened to Ada?", "Who focus on?"):
        assert not asks_present(not_present), not_present
    for past in ("Where did she live before Berlin?", "What did Caroline research?",
                 "王芳搬到西安之前住在哪里？", "The user lives in Paris."):
        assert not asks_present(past), past


@pytest.mark.parametrize(("text", "attribute"), [
    ("moved to Berlin", "home"), ("her new address is in Porto", "home"), ("搬到了北京", "home"),
    ("started a new job at Acme", "work"), ("跳槽去了百度", "work"),
    ("reports to Priya", "manager"), ("新主管是老王", "manager"),
    ("now drives a Skoda", "vehicle"), ("got married", "family"),
    ("told me the family is in Cork now", "home"), ("is hosted on Hetzner now", "hosting"),
    ("由支付组负责", "ownership"), ("最近领养了一只柯基", "pet"), ("became vegan", "diet"),
    ("改吃纯素了", "diet"), ("现在在学什么语言？", "study"), ("opened an account at Revolut", "bank"),
    ("decided to go with Stripe instead", "decision"),
])
def test_cue_words_name_the_attribute_in_english_and_chinese(text: str, attribute: str) -> None:
    assert attribute in attributes_of(text)


def test_a_manager_by_title_and_working_out_are_not_whom_one_reports_to_or_works_for() -> None:
    assert attributes_of("is a product manager") == {"role"}
    assert attributes_of("Who is manager now?") == {"manager"}
    assert attributes_of("works out at FitHub") == set()
    assert attributes_of("works out of the Berlin office") == {"work"}


def test_getting_to_work_is_commuting_and_a_train_ride_is_no_sport() -> None:
    assert attributes_of("How does get to work now?") == {"commute"}
    assert attributes_of("walks to work since the spring") == {"commute"}
    assert attributes_of("started coming in by car") == {"commute", "vehicle"}
    assert attributes_of("commutes by train") == {"commute"}
    for text in ("What does do on weekends now?", "got hooked on pottery",
                 "has been out hiking every Saturday", "trains for a marathon", "周末去爬山"):
        assert attributes_of(text) == {"pastime"}, text


def test_attributes_that_earned_nothing_on_hand_written_notes_name_nothing() -> None:
    # Drink, doctor, builds, schedule, version, tracker, design, monitoring and gym were
    # measured on the hand-written dev set, changed no figure and held no template family
    # above its floor nor a hand-written probe: removed (data/attribute_words.json).
    for text in ("has switched to cappuccino lately",
                 "sees Dr. Brennan for checkups", "builds on GitHub Actions",
                 "the deadline slipped to 1 June", "is on version 3.0", "Which design tool now?",
                 "接入了Sentry做告警", "trains at PeakFit these days"):
        assert attributes_of(text) == set(), text
    assert attributes_of("got a higher salary") == {"work"}
    # A project's technology has no cue words (search/attributes.py: they named values).
    assert attributes_of("Which programming language is the service written in?") == set()


def test_every_attribute_in_the_data_file_says_what_it_earned() -> None:
    data = json.loads(resources.files("openclaw_memory").joinpath(
        "data/attribute_words.json").read_text("utf-8"))
    entries = {**data["attributes"], **data["hints"]}
    assert entries and all(entry["earned"] for entry in entries.values())
    assert set(attribute_patterns()[0]) == set(data["attributes"])


def test_a_place_one_helps_at_and_a_number_moved_to_a_carrier_name_no_attribute() -> None:
    # Family i's volunteering and carrier lines had been read as code (a library, a port),
    # a pet and a home, and grouped with each other (current@1 78.8 -> 83.2, stale 7.4 -> 4.2 %).
    for text in ("now spends Saturdays helping at the library", "gives time to the library",
                 "volunteers at the animal shelter", "ported the number to O2"):
        assert attributes_of(text) == set(), text
    assert attributes_of("moved the mobile contract over to Three") == {"device"}
    assert attributes_of("We use the requests library") == set()
    assert attributes_of("ported the codebase to Rust") == set()
    assert attributes_of("adopted a dog from the shelter") == {"pet"}
    assert attributes_of("moved to Lyon") == {"home"}


def test_whose_team_lead_is_a_manager_and_a_team_lead_a_role() -> None:
    assert attributes_of("'s team lead is now Rafael") == {"manager"}
    assert attributes_of("was moved under Helen") == {"manager"}
    assert attributes_of("holds the team lead position") == {"role"}
    assert attributes_of("was promoted to team lead") == {"role"}
    assert attributes_of("moved to Berlin") == {"home"}


def test_joining_brings_work_lines_together_but_never_sets_a_club_apart() -> None:
    lines = ["joined Acme", "works at Initech", "joined Northside Rovers for the new season",
             "plays for Riverside FC"]
    said = [attributes_of(line) for line in lines]
    hinted = [hinted_attributes(line) for line in lines]
    assert said[0] == frozenset() and hinted[0] == {"work"}
    shift = _alike(np.zeros((4, 4)), said, hinted)
    assert shift[0, 1] == CUE_WEIGHT  # one joins a company: closer to where one works
    assert shift[2, 3] == 0.0  # ...or a club: not pushed away from the club one plays for
    assert shift[1, 3] == -CUE_WEIGHT  # two cue words of different attributes still are


def test_a_question_about_an_attribute_no_cue_word_knows_is_not_split_by_cue_words(
        tmp_path: Path) -> None:
    # "phone plan" reads as a device and "moved" as a home: for a question about the carrier,
    # which no cue word names, they must not set the two carrier lines apart.
    ws = _workspace(tmp_path / "ws", "# Facts\n\n- Ada Park's phone plan is with Vodafone.\n"
                    "- Ada Park is learning Spanish.\n",
                    {"2025-02-01": "- Ada Park moved the contract over to Three.\n",
                     "2025-03-01": "- Ada Park started Italian lessons.\n"})
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("Which carrier is Ada Park on now?").results
    assert hits[0].path == "memory/2025-02-01.md"
    curated = next(h for h in hits if h.path == "MEMORY.md")
    assert curated.superseded_by == "memory/2025-02-01.md#L1"


def test_generic_change_verbs_name_no_attribute() -> None:
    for text in ("switched to a Renault", "bought a Honda", "upgraded to a Galaxy"):
        assert attributes_of(text) == frozenset(), text


def test_when_every_note_on_the_subject_is_about_something_else_the_order_stands(
        embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park works at Globex.\n- Ada Park drives a Toyota.", 0.5)
    diet = cited_hit("memory/2025-02-17.md", "- Ada Park became keto.", 0.45)
    job = cited_hit("memory/2025-03-01.md", "- Ada Park joined Hooli.", 0.4)
    ranked = newer_first([curated, diet, job], ask("Where does Ada Park live now?"), embed)
    assert [h.path for h in ranked] == [curated.path, diet.path, job.path]
    assert all(h.superseded_by is None for h in ranked)


def test_a_newer_answer_just_past_the_first_hits_is_found(tmp_path: Path) -> None:
    kin = ["brother Ben", "sister Cara", "cousin Dan", "aunt Eve", "uncle Finn", "niece Gia",
           "nephew Hal", "friend Ivy"]
    logs = {f"2025-02-{n + 1:02d}": f"- Ada Park's {who} lives in Rome, where Ada Park lived "
            "as a child.\n" for n, who in enumerate(kin)}
    logs["2025-03-10"] = "- Ada Park relocated to Oslo this month.\n"
    ws = _workspace(tmp_path / "ws", "# Facts\n\n- Ada Park lives in Lisbon.\n", logs)
    question = "Where does Ada Park live now?"
    with MemoryIndex.open(ws, index_path=tmp_path / "s.sqlite",
                          search={"newer_first": False}) as memory:
        scored = [h.path for h in memory.search(question, max_results=20).results]
    assert scored.index("memory/2025-03-10.md") >= 6  # past the first six by score
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search(question, max_results=6).results
    assert len(hits) == 6 and hits[0].path == "memory/2025-03-10.md"
    assert all(h.superseded_by == hits[0].citation for h in hits[1:])


def test_words_the_lines_share_move_nothing_unless_the_best_hit_holds_them(
        tmp_path: Path) -> None:
    # "daughter" names nobody: in the English curated lines it is a word they share, and the
    # best hit, a Chinese note on the party, says it as 女儿. Nothing moves.
    ws = _workspace(tmp_path / "ws", "# Memory\n\n- My daughter loves oolong tea.\n- My "
                    "daughter's school starts at eight.\n- The cat's name is Miso.\n",
                    {"2026-03-02": "- 女儿的生日派对定在六月十二日，在公园里举行。\n- 晚上读完了一本书。\n"})
    question = "When is my daughter's birthday party now?"
    with MemoryIndex.open(ws, index_path=tmp_path / "s.sqlite",
                          search={"newer_first": False}) as memory:
        scored = [h.path for h in memory.search(question).results]
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        ranked = [h.path for h in memory.search(question).results]
    assert scored[0] == "memory/2026-03-02.md" and ranked == scored


def test_over_conversation_logs_a_curated_answer_yields_to_the_newest_and_the_logs_keep_order(
        embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- Ada Park lives in Lisbon.", 0.7)
    said_old = cited_hit("memory/2025-01-05.md", "- [D1:3] Ada Park: I moved to Porto!", 0.6)
    said_new = cited_hit("memory/2025-03-05.md", "- [D7:2] Ada Park: We moved to Oslo.", 0.5)
    ranked = newer_first([curated, said_old, said_new], ask("Where does Ada Park live?"), embed)
    # The newest answer moves right above the curated one; the older log keeps its place
    # below, unmarked: what a conversation said on its day is not superseded.
    assert [h.path for h in ranked] == [said_new.path, curated.path, said_old.path]
    assert ranked[1].superseded_by == said_new.citation and ranked[2].superseded_by is None


def test_only_a_question_where_something_may_move_looks_further() -> None:
    from dataclasses import replace

    from openclaw_memory.search.recency import looks_wider

    said = [cited_hit("memory/2025-01-05.md", "- [D1:3] Ada Park: I moved to Porto!", 0.6),
            cited_hit("memory/2025-03-05.md", "- [D7:2] Ada Park: We moved to Oslo.", 0.5)]
    notes = [cited_hit("memory/2025-01-05.md", "- Ada Park moved to Porto.", 0.6),
             cited_hit("memory/2025-03-05.md", "- Ada Park moved to Oslo.", 0.5)]
    assert looks_wider(ask("Where does Ada Park live now?"), said)  # "now": logs move too
    assert not looks_wider(ask("Where does Ada Park live?"), said)  # a conversation alone
    assert looks_wider(ask("Where does Ada Park live?"), notes)
    assert looks_wider(ask("Where does Ada Park live?"), [cited_hit("MEMORY.md", "- Ada Park lives "
                                                               "in Lisbon.", 0.7), *said])
    assert not looks_wider(ask("Where did Ada Park live before?"), notes)
    dated = [replace(h, explanation=replace(h.explanation, date_match=True)) for h in notes]
    assert not looks_wider(ask("Where does Ada Park live now?"), dated)  # its period decides


def test_asked_now_over_conversation_logs_the_newest_line_close_to_the_question_comes_first(
        embed: Any) -> None:
    said_old = cited_hit("memory/2025-01-05.md", "- [D1:3] Ada Park: I moved to Porto!", 0.6)
    chat = cited_hit("memory/2025-04-01.md", "- [D9:1] Ada Park: I love the new café menu.", 0.55)
    said_new = cited_hit("memory/2025-03-05.md", "- [D7:2] Ada Park: We moved to Oslo.", 0.5)
    ranked = newer_first([said_old, chat, said_new], ask("Where does Ada Park live now?"), embed)
    # Every line of a speaker is about her; only those close to the question move, newest
    # first: the newer chat about a menu stays where it was.
    assert [h.path for h in ranked] == [said_new.path, said_old.path, chat.path]
    assert ranked[1].superseded_by == said_new.citation


def test_a_question_naming_nobody_takes_a_line_with_most_of_its_shared_words_as_about_it(
        tmp_path: Path) -> None:
    # The bundled Kestrel notes: the launch target set on 2 October slipped on 7 October.
    sample = Path(__file__).resolve().parents[1] / "notebooks" / "data" / "kestrel-team"
    with MemoryIndex.open(sample, index_path=tmp_path / "i.sqlite") as memory:
        hits = memory.search("What is the current launch target version and date?").results
    assert [h.path for h in hits][:2] == ["memory/2026-10-07.md", "memory/2026-10-02.md"]
    assert hits[1].superseded_by == hits[0].citation


def test_a_chinese_possessive_question_takes_a_restatement_without_the_possessive_as_newest(
        embed: Any) -> None:
    curated = cited_hit("MEMORY.md", "- 青松的例会在周四。", 0.5)
    moved = cited_hit("memory/2025-03-03.md", "- 青松的例会改到了周三。", 0.45)
    restated = cited_hit("memory/2025-05-17.md", "- 青松每周二开例会。", 0.4)
    ranked = newer_first([moved, curated, restated], ask("青松的例会现在是哪天？"), embed)
    assert ranked[0].path == "memory/2025-05-17.md"
    assert {h.path: h.superseded_by for h in ranked[1:]} == {
        "memory/2025-03-03.md": "memory/2025-05-17.md#L1", "MEMORY.md": "memory/2025-05-17.md#L1"}


def test_one_cited_answer_still_comes_first_when_the_curated_lines_show_its_attribute(
        embed: Any) -> None:
    # The only cited line naming Avocet is the change; the curated lines no hit cites tell
    # that it is the meeting day the question asks about, so it passes another project's line.
    other = cited_hit("memory/2025-04-27.md", "- We meet about Gannet on Monday from now on.", 0.5)
    moved = cited_hit("memory/2025-01-30.md", "- The Avocet standup moved to Tuesday.", 0.4)
    curated = curated_lines("- The Avocet sync is on Wednesday.",
                            "- Avocet sends email through Twilio.", "- The Gannet sync is on Friday.")
    question = "Which day is the Avocet meeting now?"
    ranked = newer_first([other, moved], ask(question), embed, curated_text=lambda: curated)
    assert [h.path for h in ranked] == ["memory/2025-01-30.md", "memory/2025-04-27.md"]
    # Without them, one line has nothing to be told apart from: the order stands.
    assert [h.path for h in newer_first([other, moved], ask(question), embed)] == [
        "memory/2025-04-27.md", "memory/2025-01-30.md"]


def test_a_line_fitting_best_by_another_attributes_words_gives_way_to_the_best_of_the_rest(
        embed: Any) -> None:
    # "home" makes the pet line fit "call home" best, but its cue words are a pet's: the
    # answer is the best-fitting line of those not about another attribute.
    curated = cited_hit("MEMORY.md", "- Ada Park has an apartment in Lyon.\n- Ada Park is dating Sam.",
                        0.5)
    moved = cited_hit("memory/2025-03-11.md", "- Ada Park just finished moving into a place in "
                                              "Valencia.", 0.4)
    pet = cited_hit("memory/2025-05-03.md", "- Ada Park brought home a beagle from the shelter.", 0.45)
    ranked = newer_first([pet, curated, moved], ask("What city does Ada Park call home now?"), embed)
    assert [h.path for h in ranked][:2] == ["memory/2025-03-11.md", "MEMORY.md"]
    assert ranked[1].superseded_by == "memory/2025-03-11.md#L1"
    assert ranked[2].path == "memory/2025-05-03.md" and ranked[2].superseded_by is None


def test_two_curated_facts_worded_alike_stay_apart_and_an_unchanged_fact_keeps_its_place(
        embed: Any) -> None:
    # "is a member at CoreClub" and "is on the infra team" are alike in form (0.46): as one
    # group, the newer gym line would answer the team question.
    curated = cited_hit("MEMORY.md", "- Nils Olsen is a member at CoreClub.\n"
                                     "- Nils Olsen is on the infra team.", 0.45)
    gym = cited_hit("memory/2025-02-23.md", "- Nils Olsen cancelled the old membership and "
                                            "signed up at PeakFit.", 0.5)
    ranked = newer_first([gym, curated], ask("Which team is Nils Olsen on now?"), embed)
    assert [h.path for h in ranked] == ["MEMORY.md", "memory/2025-02-23.md"]
    assert all(h.superseded_by is None for h in ranked)


def test_a_curated_line_fitting_best_is_never_set_aside_by_cue_words(embed: Any) -> None:
    # The curated line fits "Where does she work?" best; its cue words say only where she
    # lives ("nurse at the General Infirmary" holds none of work's). Set aside, the newer line
    # about her shifts would have answered; kept, it answers and nothing moves above it.
    curated = cited_hit("MEMORY.md", "- Ada Park: my cousin, lives in Leeds, nurse at the "
                                     "General Infirmary.\n- Ada Park is dating Sam.", 0.5)
    shifts = cited_hit("memory/2025-05-01.md", "- Ada Park's shifts are brutal this month, "
                                               "12-hour nights.", 0.45)
    ranked = newer_first([curated, shifts], ask("Where does Ada Park work?"), embed)
    assert [h.path for h in ranked] == ["MEMORY.md", "memory/2025-05-01.md"]
    assert all(h.superseded_by is None for h in ranked)


def test_a_possessive_cue_is_read_with_the_subject_named(embed: Any) -> None:
    # "Bruno Silva's place is in Cork" fits "Which company..." best by its words; read with its
    # "'s" kept it is where he lives, and gives way to the job he moved to.
    curated = cited_hit("MEMORY.md", "- Bruno Silva is on the payroll at Tailspin.\n"
                                     "- Bruno Silva has an apartment in Toronto.", 0.45)
    place = cited_hit("memory/2025-05-08.md", "- Bruno Silva's place is in Cork.", 0.5)
    job = cited_hit("memory/2025-03-16.md", "- Bruno Silva is with Fabrikam since Monday.", 0.4)
    ranked = newer_first([place, curated, job], ask("Which company is Bruno Silva at now?"), embed)
    assert [h.path for h in ranked][:2] == ["memory/2025-03-16.md", "MEMORY.md"]



@pytest.mark.parametrize(("question", "keywords"), [
    ("小周现在的领导是谁？", "小周的领导是谁？"),
    ("Where does Ada live now?", "Where does Ada live ?"),
    ("Who currently owns the billing service?", "Who owns the billing service?"),
])
def test_the_words_asking_for_now_are_not_searched_as_the_questions_words(
        question: str, keywords: str) -> None:
    # 现在 ("now") says when the question asks about, not what: as a keyword it matched no
    # note and held "小周现在的领导是谁" under the keyword coverage gate (nothing was found);
    # the time stage still reads it from the question.
    request = SearchRequest(question, 6, None, ("memory",), True, datetime(2026, 11, 29))
    read = read_question(request, SearchSettings(), [])
    assert read is not None
    assert read.request.query == question and read.request.keywords == keywords
    unchanged = read_question(replace(request, query="Where did Ada live in 2020?"),
                               SearchSettings(), [])
    assert unchanged is not None and unchanged.request.keywords == unchanged.request.query


def test_asked_now_the_subjects_newest_statements_follow_the_answers_newest_first(
        embed: Any) -> None:
    # The notes' last words on Omar that answer nothing still come right after the answers
    # (the newest first, then the older one it supersedes), before other hits: what the notes
    # said last is in front of the model. Without "now" they keep their places.
    curated = cited_hit("MEMORY.md", "- Omar's manager is Sarah Kim.", 0.7)
    budget = cited_hit("memory/2026-03-01.md", "- Team budget approved for SREcon.", 0.5)
    resign = cited_hit("memory/2026-06-02.md", "- Raj resigned. Omar is worried about the promo.", 0.4)
    dana = cited_hit("memory/2026-06-10.md", "- Omar's 1:1s are with Dana from now on.", 0.3)
    goals = cited_hit("memory/2026-09-03.md", "- Omar asked me to draft his quarterly goals.", 0.2)
    hits = [curated, budget, resign, dana, goals]
    ranked = newer_first(hits, ask("Who is Omar's manager now?"), embed)
    assert [h.path for h in ranked] == [dana.path, curated.path, goals.path, resign.path,
                                        budget.path]
    assert ranked[1].superseded_by == "memory/2026-06-10.md#L1"
    assert [h.path for h in newer_first(hits, ask("Who is Omar's manager?"), embed)] == [
        dana.path, curated.path, budget.path, resign.path, goals.path]


def test_notes_whose_lines_carry_labels_are_not_a_conversation(embed: Any) -> None:
    # "Spike: ...", "ledger: ..." label a note's lines, each with another label; a
    # conversation's speakers speak more than once. Read as a conversation, no newer line
    # could pass the curated passage without "now" (the hand-written dev set's en11).
    curated = cited_hit("MEMORY.md", "## ledger (accounting service)\n"
                        "- Decision (Jan): event bus will be Kafka (MSK).", 0.6)
    spike = cited_hit("memory/2026-02-05.md", "- Spike: NATS JetStream vs Kafka for ledger.", 0.4)
    review = cited_hit("memory/2026-02-12.md",
                       "- Architecture review: dropped Kafka for ledger, going with NATS.", 0.3)
    staging = cited_hit("memory/2026-03-19.md",
                        "- ledger: first events flowing through JetStream in staging.", 0.2)
    ranked = newer_first([curated, spike, review, staging], ask("Which event bus does ledger use?"),
                         embed)
    assert ranked[0].path != "MEMORY.md" and ranked[0].as_of is not None


def test_a_question_read_from_text_is_the_one_the_pipeline_reads() -> None:
    # The time stage takes the question as read once: its time, and the later value a
    # question about what came before names, split from the text it searches.
    asked = ask("Where did Ada Park live before moving to Berlin?")
    assert asked.anchor == "Berlin" and "Berlin" not in asked.text
    assert not asked.asked.present and ask("Where does Ada Park live now?").asked.now
    assert ask("What sport did Ada Park do?", anchor="judo").anchor == "judo"
    # The names it gives, read once for the relevance gates; a statement names no one asked.
    assert ask("Where does Ada Park live now?").names == ("ada", "park")
    assert ask("王芳现在住在哪里？").names == ("王芳",)
    assert ask("Ada Park moved to Berlin. She likes it there.").names == ()
    with pytest.raises(ContentError):
        ask("   ")
