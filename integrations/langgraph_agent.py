"""A LangGraph agent with OpenClaw-style memory: tools, pre-compaction flush, compaction,
citation policy, scope, the Memory Recall prompt section and session-start context.

    python integrations/langgraph_agent.py --workspace ~/agent --scripted      # offline demo
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_API_KEY=... \\
        python integrations/langgraph_agent.py --workspace ~/agent --model my-model

Any OpenAI-compatible chat endpoint works (``ChatOpenAI``); ``--scripted`` swaps in a small
rule-based model so the whole loop (tool calls, flush, compaction, recall) runs offline.
Messages come from ``-m`` (repeatable) or, with ``--stdin``, from standard input one per
line; with neither, the scripted mode plays a built-in conversation and a real model reads
standard input. The conversation is printed whether or not the output is a terminal. The graph::

    START -> flush -> compact -> agent --(tool calls)--> tools -> flush ...
                                       \\--(answer)--> END
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from openclaw_memory import MemoryIndex
from openclaw_memory.index import ChatType
from openclaw_memory.langchain import memory_tools
from openclaw_memory.langgraph import (
    CitationMode,
    CitationPolicy,
    Compaction,
    DemoChatModel,
    MemoryFlush,
    MemoryGraphState,
    build_system_prompt,
    current_context,
    resolve_chat_type,
    session_start_context,
)

BASE_PROMPT = ("You are a helpful assistant. You keep a long-term memory in Markdown files "
               "and use it to stay consistent across conversations.")


# ---------------------------------------------------------------------- the graph


def build_agent(index: MemoryIndex, model: BaseChatModel, *, flush_model: BaseChatModel | None = None,
                summary_model: BaseChatModel | None = None, context_window: int | None = None,
                reserve_tokens_floor: int = 20_000, soft_threshold_tokens: int = 4_000,
                keep_messages: int = 6, citations: CitationMode = "auto",
                session_context_chars: int = 4_000,
                checkpointer: BaseCheckpointSaver[Any] | None = None) -> CompiledStateGraph[Any]:
    """Compile the agent graph. The chat type comes from each run (context or config)."""
    tools = memory_tools(index, citations=citations)
    policy = CitationPolicy(citations)
    compaction = Compaction(summary_model or model, context_window=context_window,
                            reserve_tokens_floor=reserve_tokens_floor, keep_messages=keep_messages)
    flush = MemoryFlush(index, flush_model or model, context_window=context_window,
                        reserve_tokens_floor=reserve_tokens_floor,
                        soft_threshold_tokens=soft_threshold_tokens,
                        token_counter=compaction.token_counter, compaction_due=compaction.due)
    compaction.flush = flush  # no compaction in a cycle whose flush has not run

    def agent(state: MemoryGraphState, config: RunnableConfig) -> dict[str, Any]:
        chat_type = resolve_chat_type(config, current_context())
        system = _system_prompt(index, tools, citations, chat_type, session_context_chars)
        # Bound per run: the tool schemas offered depend on the chat (no MEMORY.md in groups).
        bound = model.bind_tools(policy.scope_tools(tools, chat_type))
        reply = policy.call_model(bound, [SystemMessage(content=system), *state["messages"]],
                                  chat_type=chat_type, config=config)
        return {"messages": [reply]}

    graph = StateGraph(MemoryGraphState)
    graph.add_node("flush", flush.as_node())
    graph.add_node("compact", compaction.as_node())
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools, wrap_tool_call=policy.wrap_tool_call,
                                     awrap_tool_call=policy.awrap_tool_call))
    graph.add_edge(START, "flush")
    graph.add_edge("flush", "compact")
    graph.add_edge("compact", "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "flush")
    return graph.compile(checkpointer=checkpointer)


def _system_prompt(index: MemoryIndex, tools: Sequence[Any], citations: CitationMode,
                   chat_type: ChatType, budget: int) -> str:
    context = session_start_context(index, chat_type=chat_type, max_chars=budget).text
    base = f"{BASE_PROMPT}\n\n{context}" if context else BASE_PROMPT
    return build_system_prompt(base, tools, citations=citations, chat_type=chat_type)


DEMO_CONVERSATION = (
    "Hi! Please remember that the staging deploy region is eu-central-1 (Frankfurt).",
    *(f"Status update {i}: the migration dry run went fine; nothing else to report for now, "
      "we are only chatting to fill the context window so that compaction kicks in." for i in range(1, 11)),
    "Which region is staging deployed to?",
)


# ---------------------------------------------------------------------- command line


def _openai_model(name: str) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    base_url = os.environ.get("OPENAI_BASE_URL")
    # Local OpenAI-compatible servers often need no key; the client still wants one.
    api_key = os.environ.get("OPENAI_API_KEY") or ("sk-local" if base_url else None)
    return ChatOpenAI(model=name, base_url=base_url, api_key=api_key)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--workspace", required=True, type=Path, help="memory workspace folder")
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--scripted", action="store_true", help="offline rule-based model")
    parser.add_argument("--chat-type", choices=["direct", "group", "channel"], default="direct")
    parser.add_argument("--citations", choices=["auto", "on", "off"], default="auto")
    parser.add_argument("--thread", default="cli", help="conversation (checkpointer thread) id")
    parser.add_argument("--context-window", type=int, default=None,
                        help="tokens; default: the model profile, else 200000 (scripted: 1200)")
    parser.add_argument("--reserve-tokens", type=int, default=None, help="default 20000 (scripted: 400)")
    parser.add_argument("--soft-threshold", type=int, default=None, help="default 4000 (scripted: 200)")
    parser.add_argument("--timezone", default=None, help="IANA zone of the daily log names")
    parser.add_argument("-m", "--message", action="append", help="a user message (repeatable)")
    parser.add_argument("--stdin", action="store_true",
                        help="read the user's messages from standard input, one per line")
    return parser.parse_args(argv)


def _messages(args: argparse.Namespace) -> Iterator[str]:
    if args.message:
        yield from args.message
    elif args.scripted and not args.stdin:
        # Not tied to a terminal: run from an IDE, CI or a pipe, the demo still plays.
        yield from DEMO_CONVERSATION
    else:
        yield from (line.strip() for line in sys.stdin if line.strip())


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    args.workspace.mkdir(parents=True, exist_ok=True)
    scripted = bool(args.scripted)
    model: BaseChatModel = DemoChatModel() if scripted else _openai_model(args.model)
    chat_type: ChatType = args.chat_type
    citations: Literal["auto", "on", "off"] = args.citations
    with MemoryIndex.open(args.workspace, timezone=args.timezone) as index:
        agent = build_agent(
            index, model, citations=citations, checkpointer=InMemorySaver(),
            context_window=args.context_window or (1_200 if scripted else None),
            reserve_tokens_floor=_pick(args.reserve_tokens, 400, 20_000, scripted),
            soft_threshold_tokens=_pick(args.soft_threshold, 200, 4_000, scripted))
        config: RunnableConfig = {"configurable": {"thread_id": args.thread, "chat_type": chat_type}}
        for text in _messages(args):
            before = agent.get_state(config).values
            result = agent.invoke({"messages": [HumanMessage(content=text)]}, config)
            print(f"you> {text}\nagent> {result['messages'][-1].text}", flush=True)
            for event in _memory_events(before, result):
                print(f"  [{event}]", flush=True)
    return 0


def _pick(value: int | None, scripted_default: int, default: int, scripted: bool) -> int:
    if value is not None:
        return value
    return scripted_default if scripted else default


def _memory_events(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    events = []
    if after.get("memory_flush_at") != before.get("memory_flush_at"):
        events.append("memory flush ran (silently) before compaction")
    if after.get("compaction_count", 0) != before.get("compaction_count", 0):
        events.append(f"conversation compacted (compaction #{after.get('compaction_count')})")
    return events


if __name__ == "__main__":
    raise SystemExit(main())
