"""``openclaw-memory consolidate``: a chat model brings ``MEMORY.md`` up to date from the
recent daily logs (on demand, or from cron); ``--dry-run`` prints the proposal as a diff."""

from __future__ import annotations

import argparse
import json
import logging
import os
from typing import Any

from openclaw_memory.errors import OpenClawMemoryError, install_hint
from openclaw_memory.memory_base import Memory

__all__ = ["add_consolidate_parser", "cmd_consolidate"]


def add_consolidate_parser(sub: Any) -> None:
    c = sub.add_parser("consolidate", help="let a chat model update MEMORY.md from the recent "
                                           "daily logs (replaced lines go to memory-history/)")
    c.add_argument("--model", required=True, metavar="PROVIDER:MODEL",
                   help="the chat model, as LangChain's init_chat_model names it "
                        "(openai:gpt-4o-mini); needs the 'agents' extra and the provider's key")
    c.add_argument("--base-url", default=None, metavar="URL",
                   help="an OpenAI-compatible server's URL (a local model, a proxy)")
    c.add_argument("--days", type=int, default=None,
                   help="days of daily logs to read (default: consolidation.days, 7)")
    c.add_argument("--max-edits", type=int, default=None,
                   help="the most edits one run applies (default: consolidation.max_edits, 20)")
    c.add_argument("--max-input-tokens", type=int, default=None,
                   help="the most the model is shown; the oldest logs are left out first "
                        "(default: consolidation.max_input_tokens, 8000)")
    c.add_argument("--dry-run", action="store_true",
                   help="print the proposed edits as a diff; write nothing")
    c.add_argument("--json", action="store_true", help="print the report as JSON")


def _model(args: argparse.Namespace) -> Any:
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:
        raise OpenClawMemoryError("consolidate needs LangChain's chat models: "
                                  f"{install_hint('agents')}") from exc
    options: dict[str, Any] = {"base_url": args.base_url} if args.base_url else {}
    if args.base_url and args.model.startswith("openai:") and not os.environ.get("OPENAI_API_KEY"):
        # A local OpenAI-compatible server (vLLM, llama.cpp, Ollama) takes no key, but the
        # client refuses to start without one: any value does.
        options["api_key"] = "not-needed"
    try:
        return init_chat_model(args.model, **options)
    except Exception as exc:  # a missing key, an unknown provider: one line, what to do
        raise OpenClawMemoryError(f"cannot use the chat model {args.model!r}: "
                                  f"{_why(args, exc)}") from None


def _why(args: argparse.Namespace, exc: BaseException) -> str:
    text = str(exc).strip()
    lowered = text.lower()
    if "credential" in lowered or "api_key" in lowered or "api key" in lowered:
        return ("no API key: set the provider's (OPENAI_API_KEY for openai:...), or give a "
                "local OpenAI-compatible server's --base-url, which needs none")
    first = text.splitlines()[0] if text else type(exc).__name__
    if "provider" in lowered:
        return f"{first} Name it as provider:model, e.g. openai:gpt-4o-mini"
    return first


def _what_to_do(args: argparse.Namespace, error: str) -> str:
    lowered = error.lower()
    if "connection" in lowered or "connecterror" in lowered:
        where = args.base_url or f"the {args.model.partition(':')[0]} API"
        return f" (cannot reach {where}: check --base-url, that the server runs, the network)"
    if "authentication" in lowered or "401" in lowered:
        return " (the server refused the key: check it, or the key's variable)"
    return ""


def cmd_consolidate(memory: Memory, args: argparse.Namespace) -> None:
    from openclaw_memory.langgraph.consolidation import MemoryConsolidation

    consolidation = MemoryConsolidation(memory, _model(args), days=args.days,
                                        max_edits=args.max_edits,
                                        max_input_tokens=args.max_input_tokens)
    # A failure is reported once, as the error line below, not also as the library's warning.
    library_log = logging.getLogger("openclaw_memory.langgraph.consolidation")
    level = library_log.level
    library_log.setLevel(logging.ERROR)
    try:
        report = consolidation.run(dry_run=args.dry_run)
    finally:
        library_log.setLevel(level)
    if args.json:
        print(json.dumps({"dry_run": report.dry_run, "diff": report.diff,
                          "applied": list(report.applied), "skipped": list(report.skipped),
                          "history": list(report.history), "error": report.error},
                         ensure_ascii=False, indent=2))
    if report.error is not None:
        raise OpenClawMemoryError(f"consolidation failed, nothing was written: {report.error}"
                                  f"{_what_to_do(args, report.error)}")
    if args.json:
        return
    if report.diff:
        print(report.diff, end="")
    for line in report.applied:
        print(line)
    for line in report.skipped:
        print(f"skipped: {line}")
    if report.over_limit:
        print(f"{report.over_limit} more edit(s) proposed past --max-edits: run consolidate "
              "again to apply them")
    if not report.diff:
        print("MEMORY.md is current: nothing to change")
    elif report.dry_run:
        print("dry run: nothing was written")
