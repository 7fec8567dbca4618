"""The scripted chat model of the knowledge-update benchmark's consolidation runs.

A stand-in for an LLM that follows the consolidation prompt on this benchmark's notes: it
reads the snapshot (numbered curated lines, daily logs under their dated headings), recognises
each line's subject and value by the benchmark's own templates, and for every curated line a
newer log contradicts proposes an update to the newest value, worded like the curated line,
naming the value it replaces ("(before: Paris)") and dated with the log's day. Over files
that are current it proposes nothing. It never sees the questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from openclaw_memory.consolidation import PROPOSAL_TOOL

_CURATED = re.compile(r"^L(\d+): (.*)$", re.MULTILINE)
_LOG = re.compile(r"^### \S*?(\d{4}-\d{2}-\d{2})\.md\n(.*?)(?=^### |\Z)", re.MULTILINE | re.DOTALL)
_STAMP = re.compile(r"\s*\(as of (\d{4}-\d{2}-\d{2})\)\s*$")
_BEFORE = re.compile(r"\s*(?:\(before: [^)]*\)|（之前：[^）]*）)")


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{s\}|\{v\})", template)
    body = "".join("(?P<s>.+?)" if p == "{s}" else "(?P<v>.+?)" if p == "{v}" else re.escape(p)
                   for p in parts)
    return re.compile(f"^(?:- )?{body}$")


class Templates:
    """Which attribute of which subject a line states, by the benchmark's templates."""

    def __init__(self, tables: Sequence[dict[str, tuple[Any, ...]]]) -> None:
        self.first: dict[str, str] = {}
        self.patterns: list[tuple[str, re.Pattern[str]]] = []
        for n, table in enumerate(tables):
            for attribute, (_values, first, changes, _cq, _hq, restate) in table.items():
                key = f"{n}:{attribute}"
                self.first[key] = first
                self.patterns += [(key, _pattern(t)) for t in [first, *changes, restate]]
        # The most specific first: "{s} is now {v}." before "{s} is {v}.".
        self.patterns.sort(key=lambda kp: -len(re.sub(r"\(\?P<[sv]>\.\+\?\)", "", kp[1].pattern)))

    def read(self, line: str) -> tuple[str, str, str] | None:
        text = _BEFORE.sub("", _STAMP.sub("", line)).strip()
        for key, pattern in self.patterns:
            match = pattern.match(text)
            if match:
                return key, match["s"], match["v"]
        return None


def propose(prompt: str, templates: Templates) -> list[dict[str, Any]]:
    latest: dict[tuple[str, str], tuple[str, str]] = {}
    for day, body in _LOG.findall(prompt):
        for line in body.splitlines():
            read = templates.read(line.strip())
            if read is not None:
                key, subject, value = read
                if (key, subject) not in latest or latest[key, subject][0] <= day:
                    latest[key, subject] = (day, value)
    edits = []
    for number, line in _CURATED.findall(prompt):
        read = templates.read(line)
        if read is None:
            continue
        key, subject, value = read
        stamp = _STAMP.search(line)
        newer = latest.get((key, subject))
        if newer is None or newer[1] == value or (stamp and newer[0] <= stamp.group(1)):
            continue
        day, current = newer
        chinese = any("\u4e00" <= ch <= "\u9fff" for ch in line)
        before = f"（之前：{value}）" if chinese else f" (before: {value})"
        fact = templates.first[key].format(s=subject, v=current)
        edits.append({"action": "update", "lines": f"L{number}",
                      "text": f"- {fact}{before} (as of {day})", "reason": f"memory/{day}.md"})
    return edits


class ScriptedConsolidator(BaseChatModel):
    """A LangChain chat model answering consolidation turns with :func:`propose`."""

    templates: Any
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted-consolidator"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.calls += 1
        prompt = messages[-1].content if isinstance(messages[-1].content, str) else ""
        call = {"name": PROPOSAL_TOOL, "args": {"edits": propose(prompt, self.templates)},
                "id": f"call_{self.calls}", "type": "tool_call"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="",
                                                                         tool_calls=[call]))])

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        raise NotImplementedError
