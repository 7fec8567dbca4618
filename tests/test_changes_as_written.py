"""Changes written the ways the knowledge-update misses were (a change told as an event, a
change without the attribute's word, the user's own switch, a dropped plan in Chinese) and a
fact that never changed beside busier newer notes: the line stating the current value is the
first hit. Written for these tests, in the failure patterns issue 46 sorted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_memory import MemoryIndex

_CASES = {
    "a change told as an event": (
        "# Memory\n\n- Main repo: quarry (Rust).\n",
        {"2026-01-05": "- quarry CI takes 40 minutes on Jenkins, painful.\n",
         "2026-03-02": "- Ripped out the Jenkins box; quarry pipelines live on GitLab CI runners now.\n"},
        "What CI does quarry use now?", "GitLab"),
    "a change without the attribute's word": (
        "# Memory\n\n- Billing service uses RabbitMQ for events.\n- Billing is owned by Marta.\n",
        {"2026-05-11": "- Architecture review: dropped RabbitMQ for billing, going with Redis Streams.\n"},
        "Which event bus does billing use?", "Redis Streams"),
    "the user's own switch, unnamed": (
        "# Memory\n\n## User (Jonas)\n- Runs with Strava, pays for premium.\n- Lives in Hamburg.\n",
        {"2026-03-14": "- Cancelled Strava premium; logging runs in Garmin Connect instead.\n"},
        "Which app does Jonas log his runs in now?", "Garmin"),
    "an unchanged fact beside busier newer notes": (
        "# Memory\n\n- Priya works at Northwind as a data engineer.\n- Priya lives in Leeds.\n",
        {"2026-02-01": "- Priya's team at Northwind shipped the new ingestion pipeline.\n",
         "2026-03-01": "- Priya presented at the Northwind all-hands, went well.\n"},
        "Where does Priya work?", "Northwind as a data engineer"),
    "a plan dropped, in Chinese": (
        "# 记忆\n\n- 小陈打算年底换特斯拉。\n- 小陈住在杭州。\n",
        {"2026-06-01": "- 小陈放弃了换特斯拉的计划，买了一辆比亚迪。\n"},
        "小陈现在开什么车？", "比亚迪"),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_the_current_value_is_the_first_hit(tmp_path: Path, case: str) -> None:
    curated, logs, question, current = _CASES[case]
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(curated, encoding="utf-8")
    for day, text in logs.items():
        (ws / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite") as memory:
        memory.sync()
        hits = memory.search(question).results
    assert hits and any(current in line for line in hits[0].snippet.splitlines())
