"""Whose memory a call reads and writes, decided per call from the run, not at construction.

One compiled graph serves many users when its memory tools (and the flush) are given a
:class:`MemoryScope` instead of a fixed index. Each call then resolves, from the LangGraph
runtime ``context`` and ``config["configurable"]``:

* **a namespace** inside one shared workspace, ``MemoryScope(index, namespace=("memories",
  "{user_id}"))``: the user's memory is the folder ``memory/memories/<user_id>/`` (the same
  folder the LangGraph store and langmem use for that namespace). Search sees only that
  folder, daily notes go to ``memory/memories/<user_id>/YYYY-MM-DD.md``, curated notes to its
  own ``MEMORY.md``, and ``memory_get`` refuses any path outside it;
* or **a workspace** per user, ``MemoryScope(workspace="/srv/memory/{user_id}")``: each user
  gets a whole workspace and index of their own (opened on first use, kept open, closed by
  :meth:`MemoryScope.close`).

A placeholder the run does not supply is an error, never a default: guessing whose memory a
call is for is how one user reads another's notes. Any id is accepted (``auth0|66b2f0``,
``alice smith``, ``user:42``, ``../x``): each becomes one folder name by the same reversible
encoding as the LangGraph store's namespace labels, which can never leave its folder.

The chat type is per call too: the run's (``context.chat_type``, ``configurable.chat_type``,
a ``session_key`` naming a group or channel), and the stricter of the run's and the tool's own
when both are given, so a tool built for a group never acts as a private chat.
"""

from __future__ import annotations

import _thread
import os
import string
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from langchain_core.runnables import RunnableConfig

from openclaw_memory.errors import ConfigError, OpenClawMemoryError
from openclaw_memory.files.curation import HISTORY_DIR, EditResult
from openclaw_memory.files.namespaces import encode_label, folder_of
from openclaw_memory.files.notes import NoteText, WriteResult
from openclaw_memory.index import MemoryIndex
from openclaw_memory.memory_base import ChatType, Memory
from openclaw_memory.types import SearchResponse

__all__ = ["MemoryScope", "ScopeError", "ScopedMemory", "current_context", "resolve_chat_type",
           "run_values", "stricter"]

_CHAT_TYPES: frozenset[str] = frozenset(get_args(ChatType))
_MAX_VALUE = 1024
_CURATED = frozenset({"MEMORY.md", "memory.md"})


class ScopeError(ConfigError):
    """The run does not say whose memory a call is for (or says it unsafely)."""


# -- reading the run ---------------------------------------------------------------------------
def current_context() -> Any:
    """The LangGraph runtime context of the running graph, or None outside a graph run."""
    try:
        from langgraph.runtime import get_runtime

        return get_runtime().context
    except (ImportError, RuntimeError, KeyError, AttributeError):
        return None


def run_values(config: RunnableConfig | Mapping[str, Any] | None, context: Any) -> dict[str, Any]:
    """Everything the run says: ``config["configurable"]`` overlaid by the runtime context
    (a mapping, a dataclass or any object with attributes)."""
    values: dict[str, Any] = dict((config or {}).get("configurable") or {})
    if isinstance(context, Mapping):
        values.update(context)
    elif context is not None:
        names = getattr(context, "__dataclass_fields__", None) or getattr(context, "__dict__", {})
        values.update({name: getattr(context, name) for name in names
                       if not name.startswith("_") and hasattr(context, name)})
    return values


def resolve_chat_type(config: RunnableConfig | Mapping[str, Any] | None = None,
                      context: Any = None, *, default: ChatType = "direct") -> ChatType:
    """The chat type of a run: context, then ``configurable.chat_type``, then a
    ``session_key`` with a ``group`` or ``channel`` token (OpenClaw's convention), else
    ``default``. An unknown value raises ``ValueError`` (a misspelt "grup" must not be taken
    for a private chat)."""
    value = _context_chat_type(context)
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    if value is None:
        value = configurable.get("chat_type")
    if value is None:
        value = _from_session_key(configurable.get("session_key"))
    if value is None:
        return default
    return _validated(value)


def _context_chat_type(context: Any) -> Any:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get("chat_type")
    return getattr(context, "chat_type", None)


def _from_session_key(key: Any) -> ChatType | None:
    if not isinstance(key, str) or not key:
        return None
    tokens = set(key.lower().split(":"))
    if "channel" in tokens:
        return "channel"
    if "group" in tokens:
        return "group"
    return None


def _validated(value: Any) -> ChatType:
    text = str(value).strip().lower()
    if text not in _CHAT_TYPES:
        raise ValueError(f"unknown chat_type {value!r}: use 'direct', 'group' or 'channel'")
    return cast(ChatType, text)


def stricter(a: ChatType, b: ChatType) -> ChatType:
    """The more private-preserving of two chat types (anything shared beats direct)."""
    return a if a != "direct" else b


# -- the resolved target -----------------------------------------------------------------------
@dataclass(frozen=True)
class ScopedMemory:
    """One call's memory: an index, and optionally the area (a folder) that is this user's."""

    index: Memory
    area: str | None = None

    @property
    def settings(self) -> Any:
        return self.index.settings

    def search(self, query: str, *, max_results: int | None, min_score: float | None,
               chat_type: ChatType) -> SearchResponse:
        return self.index.search(query, max_results=max_results, min_score=min_score,
                                 chat_type=chat_type, path_filter=self._visible(chat_type),
                                 path_prefix=None if self.area is None else self.area + "/")

    def get(self, path: str, from_line: int | None, lines: int | None, *,
            chat_type: ChatType) -> NoteText:
        if self.area is not None:
            rel = path.split("#", 1)[0].strip().removeprefix("./")
            visible = self._visible(chat_type)
            if visible is not None and not visible(rel):
                raise OpenClawMemoryError(f"{rel} is not in this conversation's memory; read a "
                                          "path exactly as memory_search returned it")
        return self.index.get(path, from_line, lines, chat_type=chat_type)

    def write(self, content: str, *, target: Literal["daily", "memory"],
              chat_type: ChatType = "direct") -> WriteResult:
        return self.index.write(content, target=target, area=self.area, chat_type=chat_type)

    def edit(self, citation: str, expected: str, replacement: str | None, *,
             reason: str | None, chat_type: ChatType) -> EditResult:
        if self.area is not None:
            rel = citation.split("#", 1)[0].strip().removeprefix("./")
            if not rel.startswith(self.area + "/"):
                raise OpenClawMemoryError(f"{rel} is not in this conversation's memory; edit a "
                                          "path exactly as memory_search returned it")
        return self.index.edit(citation, expected, replacement, reason=reason,
                               chat_type=chat_type)

    def _visible(self, chat_type: ChatType) -> Callable[[str], bool] | None:
        area = self.area
        if area is None:
            return None
        prefix = area + "/"
        if chat_type == "direct":  # the area's files, and the history of their edits
            history = f"{HISTORY_DIR}/{prefix}"
            return lambda path: path.startswith((prefix, history))
        # The area's own MEMORY.md is as private as the workspace's.
        return lambda path: path.startswith(prefix) and path[len(prefix):] not in _CURATED


@dataclass
class MemoryScope:
    """Where memory calls go, resolved per call (see the module docstring).

    Exactly one of ``namespace`` (in the shared ``index``; without one, in the index of the
    running graph's :class:`~openclaw_memory.langgraph.OpenClawMemoryStore`) or ``workspace`` (a
    path template: one workspace per user, opened with ``settings``) is given. Templates use
    ``{name}`` placeholders filled from the run.
    """

    index: Memory | None = None
    namespace: tuple[str, ...] | None = None
    workspace: str | os.PathLike[str] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    _pool: dict[Path, MemoryIndex] = field(default_factory=dict, init=False, repr=False)
    # Annotated with the lock's class: pydantic (the tools' schemas) reads this dataclass's
    # fields, and threading.Lock is a factory function it warns about on every import.
    _lock: _thread.LockType = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if (self.namespace is None) == (self.workspace is None):
            raise ConfigError("MemoryScope takes namespace= (with index=) or workspace=, one of them")
        if self.namespace is not None and not self.namespace:
            raise ConfigError("a scope namespace needs at least one part")

    def placeholders(self) -> set[str]:
        parts = [str(self.workspace)] if self.workspace is not None else list(self.namespace or ())
        return {name for part in parts for _, name, _, _ in string.Formatter().parse(part) if name}

    def resolve(self, config: RunnableConfig | Mapping[str, Any] | None = None,
                context: Any = None) -> ScopedMemory:
        values = run_values(config, context if context is not None else current_context())
        filled = {name: _run_value(name, values) for name in self.placeholders()}
        if self.namespace is not None:
            # Each part becomes one folder through the same encoding as the LangGraph store's
            # namespaces: the memory tools and langmem's items meet in one folder per user.
            parts = tuple(part.format(**filled) for part in self.namespace)
            return ScopedMemory(self.index or _graph_store_index(), folder_of(parts))
        # In a path template each value is one encoded segment: never a separator, a dot
        # folder or ".."; two ids never share a workspace.
        encoded = {name: encode_label(value) for name, value in filled.items()}
        root = Path(str(self.workspace).format(**encoded)).expanduser().absolute()
        return ScopedMemory(self._open(root))

    def _open(self, root: Path) -> MemoryIndex:
        with self._lock:
            memory = self._pool.get(root)
            if memory is None or memory.closed:
                root.mkdir(parents=True, exist_ok=True)
                memory = MemoryIndex.open(root, **self.settings)
                self._pool[root] = memory
            return memory

    def close(self) -> None:
        """Close the per-user indexes this scope opened (a shared ``index`` stays open)."""
        with self._lock:
            for memory in self._pool.values():
                memory.close()
            self._pool.clear()


def _graph_store_index() -> Memory:
    """The index of the running graph's store, for a scope built without one (a deployed graph
    gets its store from the server, after the module defining it was imported)."""
    try:
        from langgraph.config import get_store

        store = get_store()
    except (ImportError, RuntimeError):
        store = None
    memory = getattr(store, "memory", None)
    if not isinstance(memory, Memory):
        raise ScopeError("MemoryScope(namespace=...) without index= needs the graph to run with "
                         "an OpenClawMemoryStore (create_agent(..., store=...), compile(store=...) "
                         "or the server's custom store)")
    return memory


def _run_value(name: str, values: Mapping[str, Any]) -> str:
    """The run's value for ``name``: any text (``auth0|66b2f0``, ``alice smith``,
    ``user:42``: ids are not ours to choose), mapped to a folder by the caller."""
    if name not in values or values[name] is None or values[name] == "":
        raise ScopeError(
            f"the run does not say {name!r} (config['configurable'][{name!r}] or the runtime "
            "context): refusing to guess whose memory this call is for")
    value = str(values[name])
    if "\x00" in value or len(value) > _MAX_VALUE:
        raise ScopeError(f"{name} is not usable as an id (NUL bytes, or longer than "
                         f"{_MAX_VALUE} characters)")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ScopeError(f"{name} holds invalid text (lone surrogates)") from None
    return value

