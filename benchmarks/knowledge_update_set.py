"""Facts that change, on hand-written workspaces: is the current value first, shown, and the
older one still findable?

    python benchmarks/knowledge_update_set.py SET_DIR [--configs default,keyword-only,score-order]

SET_DIR holds one folder per workspace (``MEMORY.md``, ``memory/YYYY-MM-DD.md``) with a
``queries.jsonl`` of questions, each with its ``kind`` (``current``: the value now;
``history``: the one before; ``unchanged``: a fact of the same subject that never changed), its
``lang`` and the lines that answer it (``gold``; for ``current``, also the lines stating an
earlier value, ``stale``). Unlike ``knowledge_update.py``, which generates its workspaces from
templates, this reads notes written by people; it copies nothing into the index folder's
workspace (each is indexed from where it lies, the index in a temporary folder).

Per language and overall: ``current@1`` (a hit covering a current-value line is first),
``shown`` (that line's text stands in the snippet of one of the six hits: what the model reads),
``stale>cur`` (an earlier value's line ranks above the first current one, or is found when the
current one is not), ``history@6``, ``unchanged@1``; ``unnamed`` and ``named`` repeat
current@1 over the questions naming someone or something (or asking in the first person: "I",
"my", 我) that no current-value line names (the user's own notes: "Cancelled the gym", "IT 把
我的电脑换了") and over those a current-value line names. Configs: ``default``, ``keyword-only``
(no vectors), ``score-order`` (diagnostic: without newer-first ordering), ``consolidated``:
the same questions after one consolidation pass (``MemoryConsolidation``) over a copy of each
workspace, by a scripted chat model that knows the set's annotations (what a model that gets
the judgment right proposes: each curated line stating an earlier value updated to the newest
line stating the current one); it measures the consolidation path on hand-written layouts,
not a model's judgment. It prints, per workspace set, ``stale left`` (curated lines still
stating an earlier value), ``lost`` (a replaced line missing from memory-history/) and
``second run`` (edits a second pass made); the current value's curated line then answers too.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_report
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from openclaw_memory import MemoryIndex
from openclaw_memory.consolidation import PROPOSAL_TOOL
from openclaw_memory.langgraph import MemoryConsolidation

CONFIGS: dict[str, dict[str, Any]] = {
    "default": {}, "keyword-only": {"embedding": {"provider": "none"}},
    "score-order": {"search": {"newer_first": False}}, "consolidated": {}}
FIRST_PERSON = re.compile(r"\b(?:I|my|me|we|our)\b|我")
_HAN_LEAD = re.compile(r"^[\u3400-\u9fff]{2}")
Row = dict[str, Any]


def _covers(hit: Row, loc: Row) -> bool:
    return bool(hit["path"] == loc["path"] and hit["start"] <= loc["line"] <= hit["end"])


def first_rank(hits: Sequence[Row], locs: Sequence[Row]) -> int | None:
    return next((rank for rank, hit in enumerate(hits, 1)
                 if any(_covers(hit, loc) for loc in locs)), None)


def named(workspace: Path, query: Row) -> bool | None:
    """Whether a current-value line says a name the question asks about (its capitalised
    words, a Chinese question's first two characters; none for the asker); None when the
    question names nothing (a project in lower case: "ledger")."""
    words = re.findall(r"[A-Z][\w-]+", query["question"])[1:]
    names = [w for w in words if w != "I"] or _HAN_LEAD.findall(query["question"])
    if names and names[0][0] in "我你他她":
        names = []
    if not names:
        return False if FIRST_PERSON.search(query["question"]) else None
    return any(name in _line(workspace, loc) for loc in query["gold"] for name in names)


def shown(workspace: Path, hits: Sequence[Row], locs: Sequence[Row]) -> bool:
    """A gold line's text (list marker stripped, first 60 characters) is in a hit's snippet."""
    for loc in locs:
        text = _line(workspace, loc)[:60]
        if text and any(text in hit["snippet"] for hit in hits):
            return True
    return False


_CURATED = re.compile(r"^L(\d+): (.*)$", re.MULTILINE)


class AnnotatedConsolidator(BaseChatModel):
    """Answers a consolidation turn as the set's annotations say: every curated line shown
    that states an earlier value (``stale`` in ``MEMORY.md``) updated to the newest line
    stating the current one, dated with its day; nothing for a line already current."""

    updates: dict[int, tuple[str, str]]  # curated line -> (newest current line, its day)

    @property
    def _llm_type(self) -> str:
        return "annotated-consolidator"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        prompt = messages[-1].content if isinstance(messages[-1].content, str) else ""
        edits = []
        for number, text in _CURATED.findall(prompt):
            update = self.updates.get(int(number))
            if update is not None and update[0] not in text:
                edits.append({"action": "update", "lines": f"L{number}",
                              "text": f"- {update[0]} (as of {update[1]})",
                              "reason": "a newer note states the current value"})
        call = {"name": PROPOSAL_TOOL, "args": {"edits": edits}, "id": "call_1",
                "type": "tool_call"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="",
                                                                         tool_calls=[call]))])


def _line(workspace: Path, loc: Row) -> str:
    text = (workspace / loc["path"]).read_text(encoding="utf-8").splitlines()[loc["line"] - 1]
    return str(text.strip().lstrip("-*").strip())


def consolidated(workspace: Path, queries: list[Row], copy: Path, index: Path) -> dict[str, int]:
    """One consolidation pass over ``copy`` (a copy of ``workspace``), then a second; the
    questions' annotations moved to the updated curated lines."""
    shutil.copytree(workspace, copy)
    updates: dict[int, tuple[str, str]] = {}
    for query in queries:
        logs = sorted((loc for loc in query["gold"] if loc["path"] != "MEMORY.md"),
                      key=lambda loc: loc["path"])
        if query["kind"] != "current" or not logs:
            continue
        day = Path(logs[-1]["path"]).stem
        for loc in query.get("stale", []):
            if loc["path"] == "MEMORY.md":
                updates[loc["line"]] = (_line(workspace, logs[-1]), day)
                query["gold"] = [*query["gold"], loc]  # it states the current value now
        query["stale"] = [loc for loc in query.get("stale", []) if loc["path"] != "MEMORY.md"]
    for query in queries:  # an updated curated line no longer states the earlier value
        if query["kind"] == "history":
            query["gold"] = [loc for loc in query["gold"]
                             if not (loc["path"] == "MEMORY.md" and loc["line"] in updates)]
    model = AnnotatedConsolidator(updates=updates)
    moment = datetime.now(UTC)
    with MemoryIndex.open(copy, index_path=index) as memory:
        memory.sync()
        for _ in range(2):
            first = MemoryConsolidation(memory, model, days=3650, max_input_tokens=200_000,
                                        clock=lambda: moment).run()
            if not first.over_limit:
                break
        again = MemoryConsolidation(memory, model, days=3650, max_input_tokens=200_000,
                                    clock=lambda: moment).run()
        memory.sync()
    curated = (copy / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    history = "".join(p.read_text(encoding="utf-8") for p in (copy / "memory-history").rglob("*.md"))
    old = {n: _line(workspace, {"path": "MEMORY.md", "line": n}) for n in updates}
    return {"changed": len(updates),
            "stale_left": sum(any(text in line for line in curated) for text in old.values()),
            "lost": sum(text not in history for text in old.values()),
            "second_run": len(again.applied) + len(again.skipped)}


def run_config(set_dir: Path, config: str, tmp: Path,
               tally: dict[str, int] | None = None) -> list[Row]:
    rows: list[Row] = []
    for workspace in sorted(p for p in set_dir.iterdir() if (p / "queries.jsonl").is_file()):
        queries = [json.loads(line) for line in
                   (workspace / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
        index = tmp / f"{workspace.name}-{config}.sqlite"
        if config == "consolidated":
            copy = tmp / f"{workspace.name}-consolidated"
            figures = consolidated(workspace, queries, copy, index)
            if tally is not None:
                for key, value in figures.items():
                    tally[key] = tally.get(key, 0) + value
            workspace = copy
        with MemoryIndex.open(workspace, index_path=index, **CONFIGS[config]) as memory:
            memory.sync()
            for query in queries:
                hits = [{"path": h.path, "start": h.start_line, "end": h.end_line,
                         "snippet": h.snippet} for h in memory.search(query["question"]).results]
                rows.append({**query, "config": config, "rank": first_rank(hits, query["gold"]),
                             "stale_rank": first_rank(hits, query.get("stale", [])),
                             "shown": shown(workspace, hits, query["gold"]),
                             "named": named(workspace, query) if query["kind"] == "current"
                             else None})
    return rows


def _pct(count: int, total: int) -> str:
    return f"{100.0 * count / total:.1f}" if total else "n/a"


def figures(rows: Sequence[Row]) -> dict[str, str]:
    current = [r for r in rows if r["kind"] == "current"]
    stale_above = [r for r in current if r["stale_rank"] is not None
                   and (r["rank"] is None or r["stale_rank"] < r["rank"])]
    by_name = {said: [r for r in current if r["named"] is said] for said in (False, True)}
    kinds = {kind: [r for r in rows if r["kind"] == kind] for kind in ("history", "unchanged")}
    return {
        "questions": str(len(rows)),
        "current@1": _pct(sum(r["rank"] == 1 for r in current), len(current)),
        "shown": _pct(sum(r["shown"] for r in current), len(current)),
        "stale>cur": _pct(len(stale_above), len(current)),
        "history@6": _pct(sum(r["rank"] is not None for r in kinds["history"]), len(kinds["history"])),
        "unchanged@1": _pct(sum(r["rank"] == 1 for r in kinds["unchanged"]), len(kinds["unchanged"])),
        **{column: (f"{_pct(sum(r['rank'] == 1 for r in chosen), len(chosen))} of {len(chosen)}"
                    if chosen else "n/a")
           for column, chosen in (("unnamed", by_name[False]), ("named", by_name[True]))},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("set_dir", type=Path)
    parser.add_argument("--configs", default="default,keyword-only,score-order,consolidated")
    args = parser.parse_args()
    configs = args.configs.split(",")
    if unknown := [c for c in configs if c not in CONFIGS]:
        parser.error(f"unknown config {unknown[0]!r}; one of {', '.join(CONFIGS)}")
    print(machine_report())
    tally: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        rows = [row for config in configs
                for row in run_config(args.set_dir, config, Path(tmp), tally)]
    columns = list(figures(rows))
    print(f"{'config':<13} {'lang':<4} " + " ".join(f"{c:>12}" for c in columns))
    for config in configs:
        for lang in ("en", "zh", "all"):
            chosen = [r for r in rows if r["config"] == config and lang in ("all", r["lang"])]
            if chosen:
                values = figures(chosen)
                print(f"{config:<13} {lang:<4} " + " ".join(f"{values[c]:>12}" for c in columns))
    if tally:
        print(f"consolidated: {tally['changed']} curated lines stating an earlier value; "
              f"stale left {tally['stale_left']}, lost {tally['lost']}, "
              f"second run {tally['second_run']}")


if __name__ == "__main__":
    main()
