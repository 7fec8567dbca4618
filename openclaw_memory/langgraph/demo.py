"""An offline chat model for examples and notebooks: no API key, no network, no weights.

Every agent example in this library's documentation runs on :class:`DemoChatModel` as written
and says how to switch to a real model. It is a handful of rules, not a language model: it
searches memory for a question, answers with the best matching line of the top hit (and its
citation when the tool gives one), saves "remember ..." sentences in the flush turn, and
summarises a compaction request as the user's lines.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable

from openclaw_memory.consolidation.proposal import PROPOSAL_TOOL
from openclaw_memory.langgraph.compaction import SUMMARY_PROMPT
from openclaw_memory.langgraph.consolidation import CONSOLIDATION_SYSTEM_PROMPT
from openclaw_memory.langgraph.flush import FLUSH_SYSTEM_PROMPT
from openclaw_memory.langgraph.write_review import REVIEW_SYSTEM_PROMPT, REVIEW_TOOL

__all__ = ["DemoChatModel", "demo_proposal", "demo_reply", "demo_review"]


class DemoChatModel(BaseChatModel):
    """A rule-based stand-in for a chat model, so examples run offline with no API key.

    Swap in a real model for real answers: ``ChatOpenAI(model=...)`` from ``langchain-openai``,
    or any LangChain chat model with tool calling (``init_chat_model("provider:model")``).
    It follows the conversation by rules:

    * compaction request: bullet summary of the user's lines;
    * consolidation turn: a ``propose_memory_edits`` call (see :func:`demo_proposal`);
    * write review turn: a ``decide_related_lines`` call (see :func:`demo_review`);
    * flush turn: one ``memory_write`` per "remember ..." sentence of the user, then NO_REPLY;
    * a question: ``memory_search``, then an answer from the best line of the top snippet,
      citing it when the tool gave a citation;
    * "remember ..." from the user: one ``memory_write`` per fact, then a confirmation;
    * anything else: a short acknowledgement.
    """

    @property
    def _llm_type(self) -> str:
        return "openclaw-memory-demo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        return self  # the rules know the tool names

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=demo_reply(messages))])


def demo_reply(messages: Sequence[BaseMessage]) -> AIMessage:
    first = _text(messages[0]) if messages else ""
    if first == SUMMARY_PROMPT:
        return _summary(_text(messages[-1]))
    if first == FLUSH_SYSTEM_PROMPT:
        return _flush_step(messages)
    if first == CONSOLIDATION_SYSTEM_PROMPT:
        return _tool_call(PROPOSAL_TOOL, edits=demo_proposal(_text(messages[-1])))
    if first == REVIEW_SYSTEM_PROMPT:
        return _tool_call(REVIEW_TOOL, decisions=demo_review(_text(messages[-1])))
    last = messages[-1]
    if isinstance(last, ToolMessage):
        if last.name == "memory_write":
            return AIMessage(content="Got it: saved to memory.")
        return AIMessage(content=_answer_from(last, _last_user_text(messages)))
    text = _text(last).strip()
    if text.endswith("?"):
        return _tool_call("memory_search", query=text)
    facts = _facts([text])
    if facts:  # as a real model does when asked to remember: memory_write, now
        return AIMessage(content="", tool_calls=[
            {"name": "memory_write", "args": {"content": f"- {fact}"}, "id": _call_id(),
             "type": "tool_call"} for fact in facts])
    return AIMessage(content=f"Noted: {text[:80]}")


def _summary(transcript: str) -> AIMessage:
    lines = [line[len("User: "):][:100] for line in transcript.splitlines() if line.startswith("User: ")]
    return AIMessage(content="\n".join(f"- The user said: {line}" for line in lines[-6:]) or "- (nothing)")


def _flush_step(messages: Sequence[BaseMessage]) -> AIMessage:
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(content="NO_REPLY")
    facts = _facts(_text(m) for m in messages if isinstance(m, HumanMessage))
    if not facts:
        return AIMessage(content="NO_REPLY")
    calls = [{"name": "memory_write", "args": {"content": f"- {fact}"}, "id": _call_id(),
              "type": "tool_call"} for fact in facts]
    return AIMessage(content="", tool_calls=calls)


_REMEMBER = re.compile(r"\bremember(?: that)?[:,]?\s+(.+?)(?:$|(?<=[.!])\s)", re.IGNORECASE)


def _facts(texts: Any) -> list[str]:
    found: list[str] = []
    for text in texts:
        for match in _REMEMBER.finditer(text):
            fact = match.group(1).strip()
            fact = fact[0].upper() + fact[1:] if fact else fact
            if fact and fact not in found:
                found.append(fact if fact.endswith(".") else fact + ".")
    return found


def _answer_from(result: ToolMessage, question: str) -> str:
    try:
        data = json.loads(_text(result))
    except ValueError:
        return "I checked my memory and found nothing about that."
    hits = data.get("results") if isinstance(data, dict) else None
    if not hits:
        return "I checked my memory and found nothing about that."
    top = hits[0]
    answer = f"From my notes: {_best_line(top.get('snippet', ''), question)}"
    return f"{answer}\n\nSource: {top['citation']}" if top.get("citation") else answer


def _best_line(snippet: str, question: str) -> str:
    words = set(re.findall(r"\w+", question.lower()))
    lines = [ln.strip(" -") for ln in snippet.splitlines()
             if ln.strip() and not ln.startswith(("#", "Source:"))]
    return max(lines, key=lambda ln: len(words & set(re.findall(r"\w+", ln.lower()))), default="")


def _last_user_text(messages: Sequence[BaseMessage]) -> str:
    return next((_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")


def _tool_call(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": _call_id(),
                                              "type": "tool_call"}])


def _text(message: BaseMessage) -> str:
    return str(message.text)


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:10]}"


_SHOWN = re.compile(r"^L(\d+): (.*)$")
_LOG = re.compile(r"^### (?:.+/)?(\d{4}-\d{2}-\d{2})\.md$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_STAMP = re.compile(r"\s*\(as of \d{4}-\d{2}-\d{2}\)\s*$")
_NAME = re.compile(r"(?<![\w'])[A-Z][\w'-]+")
_DECIDED = re.compile(r"(?i)^(?:decided|decision|we (?:chose|decided)|remember)\b|^决定")
_COMMON = frozenset("The A An This That We I It Our My Decided Decision Remember".split())


def demo_proposal(snapshot: str) -> list[dict[str, str]]:
    """Edits by rule from a rendered consolidation snapshot: each curated list item that a newer
    log line is about too (both name the same person or thing first: a capitalised name, or a
    Chinese line's first two characters) and shares a word with (four letters or more, or two
    Chinese characters; the subject aside) is updated to the newest such line, dated; a log line
    recording a decision ("Decided ...", "决定...") that the file lacks is added. No edits when
    nothing matches: an empty proposal."""
    curated, logs = _read_snapshot(snapshot)
    edits: list[dict[str, str]] = []
    for number, line in curated:
        newer = [(day, text) for day, text in logs if _restates_subject(line, text)]
        if newer:
            day, text = newer[-1]
            edits.append({"action": "update", "lines": f"L{number}",
                          "text": f"{text} (as of {day})",
                          "reason": f"memory/{day}.md is newer and says otherwise"})
    have = {_plain(line) for _, line in curated}
    for day, text in logs:
        if _DECIDED.search(text) and _plain(text) not in have:
            have.add(_plain(text))
            edits.append({"action": "add", "text": f"- {text} (as of {day})",
                          "reason": f"a decision recorded in memory/{day}.md"})
    return edits


_NOTE = re.compile(r"^New note \((\d{4}-\d{2}-\d{2})\): (.+)$")
_RELATED = re.compile(r"^(R\d+): \S+ \(learned [^)]*\): (.+)$")


def demo_review(prompt: str) -> list[dict[str, str]]:
    """Decisions by rule from a rendered write-review prompt: a related line that the new
    note is about too (same rule as :func:`demo_proposal`: the same subject named first, a
    word shared besides it) is updated to the note, dated; every other line is kept."""
    note, day = "", ""
    decisions: list[dict[str, str]] = []
    for raw in prompt.splitlines():
        if (found := _NOTE.match(raw)) is not None:
            day, note = found[1], _ITEM.sub("", found[2]).strip()
        elif (related := _RELATED.match(raw)) is not None and note:
            label, line = related[1], related[2]
            if _restates_subject(line, note):
                decisions.append({"line": label, "action": "update",
                                  "text": f"- {note} (as of {day})",
                                  "reason": f"a newer note ({day}) says otherwise"})
            else:
                decisions.append({"line": label, "action": "keep"})
    return decisions


def _read_snapshot(snapshot: str) -> tuple[list[tuple[int, str]], list[tuple[str, str]]]:
    curated: list[tuple[int, str]] = []
    logs: list[tuple[str, str]] = []
    day: str | None = None
    for raw in snapshot.splitlines():
        if (shown := _SHOWN.match(raw)) is not None and day is None:
            if _ITEM.match(shown[2]):
                curated.append((int(shown[1]), shown[2]))
        elif (log := _LOG.match(raw)) is not None:
            day = log[1]
        elif day is not None and raw.strip() and not raw.startswith(("#", "[")):
            logs.append((day, _ITEM.sub("", raw).strip()))
    return curated, logs


def _subject(line: str) -> set[str]:
    body = _ITEM.sub("", line).strip()
    if re.match(r"[\u4e00-\u9fff]{2}", body):
        return {body[:2]}
    # Whom or what a line is about is named first ("Tomás is the on-call SRE ...").
    return {n for n in _NAME.findall(body) if n not in _COMMON}.intersection(
        [next((n for n in _NAME.findall(body) if n not in _COMMON), "")])


def _restates_subject(line: str, text: str) -> bool:
    subject = _subject(line)
    if not subject or subject != _subject(text):  # the newer line is about it: names it first
        return False
    if _plain(text) == _plain(line):
        return False
    shared = _words(_STAMP.sub("", line)) & _words(text)
    return bool(shared - {n.lower() for n in subject})


def _words(text: str) -> set[str]:
    """Words of four letters or more, and pairs of adjacent Chinese characters."""
    runs = re.findall(r"[\u4e00-\u9fff]+", text)
    return ({w for w in re.findall(r"[^\W\d_\u4e00-\u9fff]{4,}", text.lower())}
            | {run[k:k + 2] for run in runs for k in range(len(run) - 1)})


def _plain(line: str) -> str:
    return " ".join(_STAMP.sub("", _ITEM.sub("", line)).split()).casefold()
