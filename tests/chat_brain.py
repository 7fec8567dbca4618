"""A rule-based stand-in for an LLM behind the scripted OpenAI-compatible server.

It answers the wire-format chat requests the real ``ChatOpenAI`` sends, whichever agent
shape sent them (``create_agent`` with LangChain's ``SummarizationMiddleware``, or a
hand-built ``StateGraph`` with our ``Compaction``), and logs in order every flush turn and
every compaction, with a snapshot of today's daily log taken when the compaction arrives:

* a flush turn (our flush system prompt first) writes each "remember that X." of the user
  messages with ``memory_write``, then answers ``NO_REPLY``;
* a summary request (ours or LangChain's) answers a one-line summary;
* a consolidation turn answers the proposal of ``consolidation_brain.propose``;
* an agent turn searches memory for a question, answers from the top hit (always citing it:
  the citation policy, not the model, must strip it), and says "Noted." otherwise.

``fail_flush`` makes flush requests fail with an HTTP status (500 or a context-length 400).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from consolidation_brain import propose
from openai_server import RecordedRequest, Reply, chat_reply, json_reply, wire_tool_call

from openclaw_memory.langgraph import FLUSH_SYSTEM_PROMPT, SUMMARY_PROMPT
from openclaw_memory.langgraph.consolidation import CONSOLIDATION_SYSTEM_PROMPT

FACT = re.compile(r"(?i)remember that (.+?)\.(?:\s|$)")


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def is_flush(request: RecordedRequest) -> bool:
    messages = (request.json or {}).get("messages") or []
    return bool(messages) and text_of(messages[0]).startswith(FLUSH_SYSTEM_PROMPT[:60])


def is_summary(request: RecordedRequest) -> bool:
    messages = (request.json or {}).get("messages") or []
    if not messages:
        return False
    return text_of(messages[0]) == SUMMARY_PROMPT or "Messages to summarize:" in text_of(messages[-1])


@dataclass
class Brain:
    daily_file: Path
    events: list[tuple[str, str]] = field(default_factory=list)
    fail_flush: int | None = None
    """HTTP status every flush request fails with (None: flush requests work)."""
    rephrase: bool = False
    """Write each fact in other words on every flush attempt (as a model may on a retry)."""
    flush_requests: int = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = request.json["messages"]
        if is_summary(request):
            snapshot = self.daily_file.read_text() if self.daily_file.exists() else ""
            self.events.append(("compaction", snapshot))
            return chat_reply(request, "- The user sent routine status updates.")
        if is_flush(request):
            self.flush_requests += 1
            return self._flush(request, messages)
        if text_of(messages[0]).startswith(CONSOLIDATION_SYSTEM_PROMPT[:40]):
            self.events.append(("consolidation", ""))
            return chat_reply(request, None, [wire_tool_call(
                "propose_memory_edits", {"edits": propose(text_of(messages[-1]))})])
        return self._agent(request, messages)

    def _flush(self, request: RecordedRequest, messages: list[dict[str, Any]]) -> Reply:
        if self.fail_flush == 400:
            return json_reply({"error": {"message": "This model's maximum context length is 8192 "
                                         "tokens.", "code": "context_length_exceeded",
                                         "type": "invalid_request_error"}}, 400)
        if self.fail_flush is not None:
            return json_reply({"error": {"message": "upstream failed", "type": "server_error"}},
                              self.fail_flush)
        if messages[-1]["role"] == "tool":
            return chat_reply(request, "  NO_REPLY\n")
        self.events.append(("flush", ""))
        facts = [m.group(1) for msg in messages if msg["role"] == "user"
                 for m in FACT.finditer(text_of(msg))]
        if not facts:
            return chat_reply(request, "NO_REPLY")
        prefix = f"Noted (attempt {self.flush_requests}): " if self.rephrase else ""
        calls = [wire_tool_call("memory_write", {"content": f"- {prefix}{f[0].upper()}{f[1:]}."})
                 for f in facts]
        return chat_reply(request, None, calls)

    def _agent(self, request: RecordedRequest, messages: list[dict[str, Any]]) -> Reply:
        last = messages[-1]
        if last["role"] == "tool":
            return chat_reply(request, answer_from(text_of(last)))
        text = text_of(last)
        if text.endswith("?"):
            return chat_reply(request, None, [wire_tool_call("memory_search", {"query": text})])
        return chat_reply(request, f"Noted. {text[:60]}")

    def kinds(self) -> str:
        """The events as a string: ``F`` a flush turn, ``C`` a compaction."""
        return "".join("F" if kind == "flush" else "C" for kind, _ in self.events)


def answer_from(tool_result: str) -> str:
    """Answer from the top hit and cite it when the result lets the model build a citation."""
    try:
        hits = json.loads(tool_result)["results"]
    except (ValueError, KeyError, TypeError):
        return "I checked memory and found nothing about that."
    top = hits[0]
    line = next((ln for ln in top["snippet"].splitlines() if ln.startswith("- ")), top["snippet"])
    cite = top.get("citation")
    if cite is None and "start_line" in top:
        cite = f"{top['path']}#L{top['start_line']}-L{top['end_line']}"
    if cite is None:
        return f"According to my notes: {line[2:]}"
    return f"As noted in {cite}, {line[2:]}\n\nSource: {cite}"
