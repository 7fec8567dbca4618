"""Settings of the agent layers: where memory is available (scope rules), the pre-compaction
flush, compaction, consolidation and auto-capture. ``MemorySettings`` (config.py) holds one of
each; they are imported from there."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from openclaw_memory.settings.base import FrozenSettings as _Frozen

__all__ = [
    "CaptureSettings",
    "CompactionSettings",
    "ConsolidationSettings",
    "FlushSettings",
    "ScopeMatch",
    "ScopeRule",
    "ScopeSettings",
]


class ScopeMatch(_Frozen):
    """What a scope rule matches (every field given must match)."""

    chat_type: Literal["direct", "group", "channel"] | None = Field(
        None, validation_alias=AliasChoices("chat_type", "chatType"))
    channel: str | None = Field(None, description="The session key's channel (discord, "
                                                  "telegram, ...), its first part once "
                                                  "normalised.")
    key_prefix: str | None = Field(
        None, validation_alias=AliasChoices("key_prefix", "keyPrefix"),
        description="Prefix of the normalised session key (lower-cased, a leading "
                    "'agent:<id>:' stripped); one starting 'agent:' is read as a raw prefix.")
    raw_key_prefix: str | None = Field(
        None, validation_alias=AliasChoices("raw_key_prefix", "rawKeyPrefix"),
        description="Prefix of the raw session key (lower-cased).")


class ScopeRule(_Frozen):
    action: Literal["allow", "deny"]
    match: ScopeMatch = Field(default_factory=ScopeMatch)


class ScopeSettings(_Frozen):
    """Where memory search and reads are available at all (OpenClaw's scope / sendPolicy):
    the first rule whose match fits the chat decides, else ``default``. Separate from the
    privacy rules, which always hold (MEMORY.md and citations never in group chats)."""

    default: Literal["allow", "deny"] = Field("allow", description="What no rule matches gets.")
    rules: tuple[ScopeRule, ...] = Field(
        (), description="Tried in order; the first that matches decides. Each rule: `action` "
        "(`allow`/`deny`) and `match` with any of `chatType`, `channel`, `keyPrefix` (the "
        "normalised session key: lower-cased, a leading `agent:<id>:` stripped; one starting "
        "`agent:` is read raw), `rawKeyPrefix`; every field given must match. A denial is "
        "logged with the channel and chat type and counted in `status` (`scope_denied`, and "
        "`paths_refused` for the path gate). Applied by `memory_search`/`memory_get` (the "
        "run's `configurable.session_key`), the retriever (`session_key=`), the LangGraph "
        "store (the run's config) and the CLI's `search`/`get` (`--chat-type`, "
        "`--session-key`).")


class FlushSettings(_Frozen):
    """The pre-compaction memory flush (MemoryFlush / MemoryFlushMiddleware); a constructor
    argument given in code wins over these."""

    enabled: bool = Field(True, description="Run the silent flush turn before compaction.")
    context_window: int | None = Field(
        None, ge=1, description="Tokens of the model's context; None: the model profile's "
        "max_input_tokens, else 200 000.")
    reserve_tokens_floor: int = Field(
        20_000, ge=0, description="Tokens kept free for the reply: the flush runs at "
        "context_window - reserve_tokens_floor - soft_threshold_tokens.")
    soft_threshold_tokens: int = Field(4_000, ge=0, description="How early before that floor "
                                                                "the flush runs.")
    allow_edit: bool = Field(False, description="Also offer memory_edit (correct MEMORY.md) in "
                                                "the flush turn, direct chats only.")
    max_tool_rounds: int = Field(4, ge=1, le=50, description="Model calls with tool use in one "
                                                            "flush turn.")
    max_attempts: int = Field(3, ge=1, le=20, description="Attempts of a failing flush per "
                                                         "compaction cycle (5xx, 429, network).")
    retry_base_seconds: float = Field(2.0, ge=0, description="Wait before the first retry; "
                                                            "doubles each time.")
    retry_max_seconds: float = Field(60.0, ge=0, description="Longest wait between retries.")


class CompactionSettings(_Frozen):
    """Compaction (Compaction / compaction_node); a constructor argument given in code wins."""

    reserve_tokens_floor: int = Field(
        20_000, ge=0, description="Compaction runs at context_window - reserve_tokens_floor "
        "(the context window as the flush reads it).")
    trigger_tokens: int | None = Field(None, ge=1, description="Compact at this many tokens "
                                       "instead (None: from the window and the floor).")
    keep_messages: int = Field(6, ge=0, le=1000, description="Latest messages kept verbatim "
                                                             "after a compaction.")
    summary_role: Literal["human", "system"] = Field(
        "human", description="Role of the summary request (human works with every provider).")


class ConsolidationSettings(_Frozen):
    """Consolidation (MemoryConsolidation, its node and middleware, `consolidate`)."""

    days: int = Field(7, ge=1, le=3650, description="Days of daily logs one run reads, today's "
                                                    "included.")
    max_input_tokens: int = Field(8_000, ge=500, le=1_000_000, description="The most one run "
                                  "shows the model; the oldest logs are left out first.")
    max_edits: int = Field(20, ge=1, le=1000, description="The most edits one run applies (the "
                                                          "rest wait for the next run).")


class CaptureSettings(_Frozen):
    """Auto-capture (MemoryCaptureMiddleware / memory_capture_node), off unless added."""

    last_turns: int = Field(3, ge=1, le=100, description="The most user turns one capture "
                                                         "reads (those since the last capture).")
    max_notes: int = Field(5, ge=1, le=100, description="The most notes one capture writes.")
    chat_types: tuple[Literal["direct", "group", "channel"], ...] = Field(
        ("direct",), description="Chats where capture runs (what people say in a group is "
                                 "theirs).")
