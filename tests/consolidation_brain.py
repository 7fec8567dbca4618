"""A rule-based stand-in for the chat model of a consolidation turn (and of auto-capture).

It reads the snapshot the way a model would (the numbered curated lines, the daily logs
under their ``### memory/<date>.md`` headings) and proposes: an update for each curated
"<Name> lives in <City>" line that a newer log contradicts ("<Name> moved to <City>"), a
removal for a curated line repeating an earlier one word for word, and an addition for each
"<Name> prefers <thing>." the file lacks. Over files that are already current it proposes
nothing, as a model told to leave current lines alone would.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from openclaw_memory.consolidation import PROPOSAL_TOOL

CURATED = re.compile(r"^L(\d+): (.*)$", re.MULTILINE)
LOG = re.compile(r"^### (\S+?(\d{4}-\d{2}-\d{2})\.md)\n(.*?)(?=^### |\Z)", re.MULTILINE | re.DOTALL)
LIVES = re.compile(r"(?:The user|[A-Z][a-z]+) lives in ([A-Z][a-z]+)")
MOVED = re.compile(r"(?:(?:The user|[A-Z][a-z]+) (?:told me (?:they|she|he) )?)moved to ([A-Z][a-z]+)")
PREFERS = re.compile(r"([A-Z][a-z]+|The user) prefers ([^.\n]+)\.")
STAMP = re.compile(r"\s*\(as of (\d{4}-\d{2}-\d{2})\)\s*$")


def propose(prompt: str) -> list[dict[str, Any]]:
    curated = [(int(n), text) for n, text in CURATED.findall(prompt)]
    logs = [(day, body) for _path, day, body in LOG.findall(prompt)]
    edits: list[dict[str, Any]] = []
    seen: set[str] = set()
    copies: set[int] = set()
    for number, text in curated:
        bare = STAMP.sub("", text).strip()
        if bare and bare in seen:
            copies.add(number)
            edits.append({"action": "remove", "lines": f"L{number}", "reason": "a duplicate"})
        seen.add(bare)
    for number, text in curated:
        lived = LIVES.search(text)
        if lived is None or number in copies:
            continue
        stamp = STAMP.search(text)
        since = stamp.group(1) if stamp else "0000-00-00"
        moves = [(day, m.group(1)) for day, body in logs if day > since
                 for m in MOVED.finditer(body)]
        if moves and moves[-1][1] != lived.group(1):
            day, city = moves[-1]
            fact = STAMP.sub("", text).replace(f"lives in {lived.group(1)}", f"lives in {city}")
            edits.append({"action": "update", "lines": f"L{number}", "text": f"{fact} (as of {day})",
                          "reason": f"moved to {city} (memory/{day}.md)"})
    have = "\n".join(text for _n, text in curated)
    for day, body in logs:
        for who, what in PREFERS.findall(body):
            fact = f"{who} prefers {what}."
            if fact not in have:
                edits.append({"action": "add", "text": f"- {fact} (as of {day})",
                              "reason": f"memory/{day}.md"})
                have += "\n" + fact
    return edits


def message_text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def consolidating_model_step(messages: list[BaseMessage]) -> AIMessage:
    """A ``ScriptedChatModel`` step answering a consolidation turn."""
    edits = propose(message_text(messages[-1]))
    return AIMessage(content="", tool_calls=[{"name": PROPOSAL_TOOL, "args": {"edits": edits},
                                              "id": "call_consolidate", "type": "tool_call"}])
