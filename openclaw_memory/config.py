"""Settings for every part of the engine, as pydantic models with the documented defaults.

Defaults follow OpenClaw's (SPEC.md) except where a measured improvement is documented next to
the field. Everything that shapes the index content is part of the fingerprint (see
:func:`index_fingerprint` in ``sync.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    SecretStr,
    field_serializer,
    field_validator,
    model_validator,
)

from openclaw_memory.errors import ConfigError
from openclaw_memory.redact import redact_dsn, redact_headers, redact_url
from openclaw_memory.settings.agents import (
    CaptureSettings,
    CompactionSettings,
    ConsolidationSettings,
    FlushSettings,
    ScopeMatch,
    ScopeRule,
    ScopeSettings,
)
from openclaw_memory.settings.base import FrozenSettings as _Frozen
from openclaw_memory.settings.search import FusionMode, SearchSettings

__all__ = [
    "BatchSettings",
    "CaptureSettings",
    "ChunkingSettings",
    "CompactionSettings",
    "ConsolidationSettings",
    "EmbeddingSettings",
    "FlushSettings",
    "FusionMode",
    "MemorySettings",
    "ProviderName",
    "ScopeMatch",
    "ScopeRule",
    "ScopeSettings",
    "SearchSettings",
    "SessionSettings",
    "StoreSettings",
    "SyncSettings",
    "WriteSettings",
]

ProviderName = Literal["auto", "local", "openai", "ollama", "mistral", "voyage", "gemini", "none"]


class ChunkingSettings(_Frozen):
    """Token-budget chunking on line boundaries."""

    tokens: int = Field(400, ge=1, description="Target chunk size in tokens.")
    overlap: int = Field(80, ge=0, description="Tokens (whole lines) carried into the next chunk.")
    encoding: Literal["o200k_base", "cl100k_base"] = Field(
        "o200k_base", description="tiktoken encoding used to count tokens (shipped offline)."
    )

    @model_validator(mode="after")
    def _clamp_overlap(self) -> ChunkingSettings:
        if self.overlap >= self.tokens:
            object.__setattr__(self, "overlap", self.tokens - 1)
        return self


class BatchSettings(_Frozen):
    """Batch jobs for large backfills (OpenClaw's remote.batch): the OpenAI Batch API, or
    Gemini's async batch embeddings."""

    enabled: bool = Field(False, description="Embed large backfills through batch jobs: the "
                                             "OpenAI Batch API (provider openai) or Gemini's "
                                             "async batch (provider gemini); half the price, "
                                             "minutes to hours.")
    min_inputs: int = Field(1_000, ge=1, description="Texts one embedding call must have to go "
                                                     "through a batch job (fewer: online).")
    wait: bool = Field(True, description="Wait for a job (up to timeout_minutes). False: "
                       "submit it and go on keyword-only for those chunks; a later sync "
                       "collects the finished job's vectors.")
    poll_interval_seconds: float = Field(10.0, gt=0, description="How often a job is polled.")
    timeout_minutes: float = Field(60.0, gt=0, description="How long a sync waits for a job; "
                                   "past it the sync fails retryably and the next one resumes "
                                   "the same job.")
    concurrency: int = Field(2, ge=1, le=64, description="Jobs in flight at once: a backfill "
                             "larger than one job takes (OpenAI: 50 000 inputs) is split into "
                             "several.")


class EmbeddingSettings(_Frozen):
    """Which embedding provider to use and how to talk to it."""

    provider: ProviderName = Field(
        "auto",
        description="auto: a configured OpenAI endpoint or named service model, else the "
                    "bundled local model, else (it cannot load) the first service whose key is "
                    "set (openai, gemini, voyage, mistral: OpenClaw's order); ollama: an Ollama "
                    "server's own API (base_url, else OLLAMA_HOST; the 'ollama' extra); mistral, "
                    "voyage, gemini: the service through its official client (its extra; key "
                    "from api_key, else MISTRAL_API_KEY, VOYAGE_API_KEY, GEMINI_API_KEY); none: "
                    "keyword-only.",
    )
    model: str | None = Field(
        None, description="Provider model; None picks the provider default (`local`: "
        "`use-multilingual-v3`; `all-MiniLM-L6-v2` selects MiniLM, the `minilm` extra).")
    fallback: Literal["none", "local", "openai", "ollama", "mistral", "voyage", "gemini"] = Field(
        "none", description="Provider to switch to (with the reason recorded) if the primary fails."
    )
    fallback_model: str | None = Field(
        None, description="The fallback provider's model; None: that provider's default (it "
        "never inherits `model`, which names the primary's).")
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (e.g. a local server).")
    fallback_base_url: str | None = Field(
        None, description="The fallback provider's server; None: its default (the primary's "
        "base_url is the primary's, unless the primary is local).")
    api_key: SecretStr | None = Field(None, description="API key; else OPENAI_API_KEY is read.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra HTTP headers.")
    dimensions: int | None = Field(None, ge=1, description="Requested output dimensions (OpenAI v3).")
    batch_max_tokens: int = Field(8000, ge=1, description="Token budget of one embeddings request.")
    concurrency: int = Field(2, ge=1, le=16, description="Embedding requests in flight at once.")
    max_retries: int = Field(6, ge=0, description="Retries of a retryable failure (429, 5xx, timeout).")
    retry_base_seconds: float = Field(0.5, ge=0, description="First backoff; doubles each retry.")
    retry_max_seconds: float = Field(60.0, ge=0, description="Cap of one wait (Retry-After included).")
    timeout_seconds: float = Field(60.0, gt=0, description="Timeout of one HTTP request.")
    query_max_retries: int = Field(
        1, ge=0, description="Retries of a search's query embedding (an agent waits for it; "
        "past them the search answers keyword-only).")
    query_timeout_seconds: float = Field(
        10.0, gt=0, description="Timeout of a search's query embedding request.")
    probe_interval_seconds: float = Field(
        30.0, gt=0, description="After an outage-like failure (refused, timeout, 5xx, 429) the "
        "endpoint is not called by searches again until a background probe, this often, finds "
        "it answering; they answer keyword-only at once meanwhile (a sync tries it once, "
        "without retries).")
    local_model_path: Path | None = Field(None, description="An ONNX export of a BERT-style "
        "encoder to use instead of the bundled models (the default model, Universal Sentence "
        "Encoder multilingual, is plain numpy; all-MiniLM-L6-v2 is ONNX, from the `minilm` "
        "extra, which any ONNX model needs).")
    local_threads: int = Field(2, ge=1, description="CPU threads for the local models: "
        "onnxruntime intra-op threads for the ONNX models (all-MiniLM-L6-v2, "
        "local_model_path); for USE, the workers a large batch is split across, one BLAS "
        "thread each.")
    local_model_cache: bool = Field(
        True, description="Keep a ready copy of the local model in the cache directory "
        "(`$OPENCLAW_MEMORY_CACHE_DIR`, else `$XDG_CACHE_HOME/openclaw-memory`, else "
        "`~/.cache/openclaw-memory`; about 85 MB, private to the user): cold starts map it in "
        "a few milliseconds instead of building the model (~0.8 s).")
    local_max_windows: int = Field(
        1, ge=1, le=32,
        description="256-wordpiece windows embedded per text and mean-pooled (1 = truncate: "
        "measured best for hybrid search on LoCoMo-dev, at half the cost).")
    batch: BatchSettings = Field(default_factory=BatchSettings)
    cache: bool = Field(True, description="Cache embeddings by content hash in the index.")
    cache_max_entries: int | None = Field(
        10_000, ge=1,
        description="Vectors of text no longer indexed (an edit undone, a file moved back, the "
                    "index before a rebuild) kept for reuse; the oldest past this are dropped at "
                    "each sync. Indexed text's vectors live with their chunks and are never "
                    "dropped. None: keep all.")

    def __repr_args__(self) -> Any:
        # Credentials in headers or in the URL never show in a repr (logs, tracebacks).
        for name, value in super().__repr_args__():
            if name == "headers" and isinstance(value, dict):
                value = redact_headers(value)
            elif name == "base_url" and isinstance(value, str):
                value = redact_url(value)
            yield name, value

    @field_serializer("headers")
    def _dump_headers(self, headers: dict[str, str]) -> dict[str, str]:
        return redact_headers(headers)

    @field_serializer("base_url")
    def _dump_base_url(self, base_url: str | None) -> str | None:
        return None if base_url is None else redact_url(base_url)


class StoreSettings(_Frozen):
    """Where the index lives and which vector path answers queries."""

    path: Path | None = Field(None, description="Index file; None = per-workspace file in "
                              "state dir. `{agent_id}` (or OpenClaw's `{agentId}`) in it is "
                              "replaced by sessions.agent_id: one index per agent.")
    vector_backend: Literal["auto", "vec0", "numpy", "binary"] = Field(
        "auto",
        description="auto: queries are answered from an in-memory matrix of the vectors while "
                    "it fits in `max_matrix_mb`; past it from compressed vectors in memory (a bit "
                    "and a byte per dimension, under a third of the matrix: the closest by bits "
                    "are scored by bytes, the best 64 of those by exact cosine); past even that "
                    "by sqlite-vec's vec0 table, built from the stored vectors by the sync that "
                    "needs it. numpy and vec0 rank identically; binary gives exact scores, and "
                    "the exact ranking whenever the true top hits survive its cuts "
                    "(benchmarks/scale.py measures how often).",
    )
    max_matrix_mb: int = Field(
        1024, ge=0, description="auto: the most memory (MB) the index may hold in memory. The "
                                "vectors first: the float32 matrix while it fits, else compressed "
                                "vectors; past both, vec0 (0: always vec0 when it loads). Then "
                                "keyword postings (`keyword_backend`), in what the vectors leave.")
    keyword_backend: Literal["auto", "fts5"] = Field(
        "auto", description="auto: an index of 2 000 chunks or more answers keyword queries from "
                            "FTS5's postings read into memory in the background (the same "
                            "rankings and scores, several times faster), while they fit in what "
                            "`max_matrix_mb` leaves beside the vectors; FTS5 answers until they "
                            "are read. fts5: always FTS5.")
    fts_tokenizer: Literal["unicode61", "porter"] = Field(
        "porter", description="FTS5 tokenizer; CJK is split into characters before indexing."
    )
    busy_timeout_ms: int = Field(10_000, ge=0, description="Wait this long for another writer.")
    backend: Literal["sqlite", "postgres"] = Field(
        "sqlite", description="sqlite: Markdown files in the workspace folder and an SQLite "
        "index; postgres: documents and index in a shared PostgreSQL with pgvector (dsn).")
    dsn: str | None = Field(
        None, description="postgres: the connection string (postgresql://user@host/db); "
        "its password is never shown by status.")
    workspace_name: str = Field(
        "default", min_length=1, max_length=200,
        description="postgres: this workspace's name in the shared database (one per agent "
        "or user); every query is scoped to it.")
    hnsw_ef_search: int = Field(
        100, ge=10, le=1000, description="postgres: the HNSW candidate list of a vector search "
        "(pgvector's hnsw.ef_search; at least twice the candidates wanted). Measured at 1M "
        "real passages: recall@6 against exact search 0.968 at 100, 0.983 at 200 (the walk "
        "takes about twice as long).")
    connect_timeout_s: float = Field(
        10.0, ge=1, le=3600, description="postgres: the longest wait for a connection (a server "
        "that is down, stopped or unreachable fails with a clear error after this).")
    statement_timeout_s: float = Field(
        60.0, gt=0, le=86_400, description="postgres: the longest any statement may run or wait "
        "(the server's statement_timeout, and a watchdog on this side for a server that has "
        "stopped answering: the connection is then closed and the next call reconnects).")
    idle_in_transaction_timeout_s: float = Field(
        120.0, gt=0, le=86_400, description="postgres: the server ends a session whose "
        "transaction stays idle this long (a client that died holding it).")
    keepalive_idle_s: int = Field(
        30, ge=1, le=7200, description="postgres: TCP keepalives after this many idle seconds "
        "(a peer gone without a reset is noticed within about twice this).")
    maintenance_timeout_s: float = Field(
        3600.0, gt=0, le=86_400, description="postgres: the bound of each maintenance "
        "statement instead (building the HNSW graph, refreshing statistics): minutes at 1M chunks.")
    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():  # the DSN's password never in a repr
            yield name, redact_dsn(value) if name == "dsn" and isinstance(value, str) else value

    @field_serializer("dsn")
    def _dump_dsn(self, dsn: str | None) -> str | None:
        return None if dsn is None else redact_dsn(dsn)

    index_build_mb: int = Field(
        1024, ge=64, description="postgres: the most memory (MB) the server may use to build "
        "the HNSW index (maintenance_work_mem, only while it builds, never more than the "
        "graph needs). A graph that does not fit is built several times slower: 1M chunks "
        "of 512 dims need about 2 600 MB.")



    def resolved_path(self, agent_id: str | None) -> Path | None:
        """``path`` with ``{agent_id}`` filled in (None when no path is set)."""
        if self.path is None:
            return None
        text = str(self.path)
        for token in ("{agent_id}", "{agentId}"):
            if token in text:
                if agent_id is None:
                    raise ConfigError(f"store.path uses {token} but sessions.agent_id is unset "
                                      "(--agent ID on the command line)")
                text = text.replace(token, agent_id)
        return Path(text)


class SyncSettings(_Frozen):
    max_file_bytes: int = Field(20 * 1024 * 1024, ge=1, description="Larger files are skipped.")
    on_search: bool = Field(
        True, description="A search while the index is dirty starts a background sync; the "
        "search answers from the current index, marked `stale`.")
    on_session_start: bool = Field(
        True, description="`on_session_start(key)` starts a background sync once per session key.")
    watch: bool = Field(
        False, description="Watch the memory files while the index is open and sync after "
        "each burst of changes (OpenClaw's watcher: turn it on for a long-running agent, a "
        "deployed graph or a notebook session; a one-shot script or CLI call does not need it).")
    watch_debounce_ms: int = Field(
        1500, ge=0, description="Watcher: sync once changes have been quiet this long (at the "
        "latest 10x this after the first change).")
    interval_minutes: float = Field(
        0, ge=0, description="Background sync every N minutes while the index is open (0: off).")


class WriteSettings(_Frozen):
    """How notes are written."""

    restatement_similarity: float | None = Field(
        0.65, ge=0.0, le=1.0, description="A note is refused only when a line already says it "
        "word for word (case, punctuation, list marker and date stamp aside): the answer cites "
        "that line. Every other note is written, and the answer names the lines at least this "
        "close in meaning (cosine of the query embedder; at most three, with citations and "
        "dates) so that a stale one can be corrected with memory_edit. A note for MEMORY.md is "
        "compared with MEMORY.md only; outside a direct chat only the daily logs are compared. "
        "None: no related lines are looked for.")


class SessionSettings(_Frozen):
    """Session transcripts as a source: where they are, whose they are, when to re-index."""

    enabled: bool = Field(False, description="Index session transcripts (source 'sessions').")
    directory: Path | None = Field(
        None, description="Folder of *.jsonl; `{agent_id}` in it is replaced; relative = below "
        "the workspace; default <workspace>/sessions, or <workspace>/sessions/<agent_id> when "
        "agent_id is set.")
    agent_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
        description="Agent whose transcripts are indexed (`[A-Za-z0-9][A-Za-z0-9_-]{0,63}`); also "
        "gives the agent its own default index file.")
    delta_bytes: int = Field(
        100_000, ge=0, description="Re-index an indexed transcript once it grew this many bytes (0: any "
        "change).")
    delta_lines: int = Field(
        50, ge=0, description="...or this many JSONL lines since it was indexed (0: any change).")

    def resolved_directory(self, workspace: Path) -> Path:
        """The transcripts folder of this agent (absolute, ``~`` expanded)."""
        if self.directory is None:
            base = workspace / "sessions"
            return base / self.agent_id if self.agent_id else base
        text = str(self.directory)
        if "{agent_id}" in text:
            if self.agent_id is None:
                raise ConfigError("sessions.directory uses {agent_id} but sessions.agent_id is unset")
            text = text.replace("{agent_id}", self.agent_id)
        path = Path(text).expanduser()
        return path if path.is_absolute() else workspace / path


class MemorySettings(_Frozen):
    """All settings of one memory workspace."""

    workspace: Path = Field(default_factory=Path.cwd, description="Folder holding MEMORY.md and memory/.")
    extra_paths: tuple[Path, ...] = Field((), description="Extra .md files or folders (recursive).")
    timezone: str | None = Field(None, description="IANA zone for daily file names; else local.")
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    sync: SyncSettings = Field(default_factory=SyncSettings)
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    write: WriteSettings = Field(default_factory=WriteSettings)
    scope: ScopeSettings = Field(default_factory=ScopeSettings)
    flush: FlushSettings = Field(default_factory=FlushSettings)
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    capture: CaptureSettings = Field(default_factory=CaptureSettings)

    @field_validator("workspace", mode="after")
    @classmethod
    def _absolute_workspace(cls, value: Path) -> Path:
        return value.expanduser().absolute()
