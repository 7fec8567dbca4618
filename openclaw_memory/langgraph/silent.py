"""Internal work (the flush turn, a compaction summary) that no user-facing handler may see.

A graph node's model and tool calls normally inherit the run's callback handlers: that is
how ``astream_events``, ``stream_mode="messages"``, a UI's streaming handler or any handler
the user attached receive every token. Passing ``callbacks=[]`` is not enough: the run's
config lives in a context variable that LangChain merges back into nested calls (a
``bind_tools`` binding, a tool's own run). So internal work runs *detached*: the context
variable is cleared for its duration and the work gets a callback manager holding only the
run's tracers (LangSmith's ``LangChainTracer``, or a handler whose class sets
``openclaw_memory_traces_internal = True``), parented to the current run. A trace therefore
still shows the flush as a child run of the agent's trace, tagged ``openclaw_memory:internal``
and ``nostream``, while streams and user handlers see nothing of it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from langchain_core.callbacks import (
    BaseCallbackHandler,
    BaseCallbackManager,
    CallbackManager,
    StdOutCallbackHandler,
)
from langchain_core.language_models import BaseLanguageModel
from langchain_core.runnables import RunnableBinding, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers.langchain import LangChainTracer
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.stdout import ConsoleCallbackHandler
from langgraph.constants import TAG_NOSTREAM

__all__ = ["INTERNAL_TAG", "arun_silently", "is_trace_handler", "quiet", "run_silently"]

INTERNAL_TAG = "openclaw_memory:internal"
"""Tag on every run this package makes on its own (flush turn, compaction summary)."""

_T = TypeVar("_T")
_M = TypeVar("_M")
_V = TypeVar("_V")


def is_trace_handler(handler: BaseCallbackHandler) -> bool:
    """Handlers that record internal runs: tracers (LangSmith's, ``collect_runs()``'s), never
    streams, printers or UI handlers."""
    return isinstance(handler, LangChainTracer | RunCollectorCallbackHandler) or bool(
        getattr(handler, "openclaw_memory_traces_internal", False))


def quiet(model: _M) -> _M:
    """``model`` without the handlers attached to the model object itself (``ChatOpenAI(
    callbacks=[h])``), tracers apart: a model's own callbacks join every call it makes, the
    detached run's included, so internal work uses a copy without them."""
    if isinstance(model, RunnableBinding):
        return model.model_copy(update={"bound": quiet(model.bound)})  # type: ignore[return-value]
    if not isinstance(model, BaseLanguageModel) or not model.callbacks:
        return model
    kept = _tracers_only(model.callbacks)
    return model.model_copy(update={"callbacks": kept if kept.handlers else None})


def run_silently(fn: Callable[[_V, RunnableConfig], _T], value: _V, run_name: str) -> _T:
    """``fn(value, config)`` as a traced-only child run; ``config`` is for its nested calls."""
    with _detached() as config:
        result: _T = RunnableLambda(fn, name=run_name).invoke(value, _named(config, run_name))
        return result


async def arun_silently(fn: Callable[[_V, RunnableConfig], Awaitable[_T]], value: _V,
                        run_name: str) -> _T:
    with _detached() as config:
        runnable: RunnableLambda[_V, _T] = RunnableLambda(_never_sync, afunc=fn, name=run_name)
        return await runnable.ainvoke(value, _named(config, run_name))


def _never_sync(value: Any) -> Any:  # pragma: no cover - only the async entry point calls it
    raise RuntimeError("called synchronously")


def _named(config: RunnableConfig, run_name: str) -> RunnableConfig:
    metadata = dict(config.get("metadata") or {})
    metadata["openclaw_memory"] = run_name
    return {**config, "metadata": metadata, "run_name": run_name}


@contextlib.contextmanager
def _detached() -> Iterator[RunnableConfig]:
    parent = var_child_runnable_config.get() or {}
    config: RunnableConfig = {
        "callbacks": _tracers_only(parent.get("callbacks")),
        "tags": [TAG_NOSTREAM, INTERNAL_TAG],
        # The run's thread and checkpoint keys stay out: internal calls are not graph steps.
        "configurable": {},
        "metadata": {k: v for k, v in (parent.get("metadata") or {}).items()
                     if not k.startswith("langgraph_") and k != "checkpoint_ns"},
    }
    muted = _muted_globals(config)
    token = var_child_runnable_config.set(None)
    try:
        yield config
    finally:
        var_child_runnable_config.reset(token)
        for var, was in muted:
            var.reset(was)


def _muted_globals(config: RunnableConfig) -> list[tuple[Any, Any]]:
    """Global handlers out of the internal turn, tracers apart: a configure hook's handler
    (``register_configure_hook``) is unset in this context for its duration (context
    variables are per thread and task: other runs keep it), and the handlers ``set_debug`` /
    ``set_verbose`` would add are stood in for by silent ones of their classes (LangChain adds
    one only where none is)."""
    from langchain_core.tracers.context import _configure_hooks

    muted = []
    for var, _inheritable, _class, _env in list(_configure_hooks):
        handler = var.get()
        if handler is not None and not is_trace_handler(handler):
            muted.append((var, var.set(None)))
    manager = config["callbacks"]
    assert isinstance(manager, CallbackManager)
    for stand_in in (_SilentConsole(), _SilentStdOut()):
        manager.add_handler(stand_in, inherit=True)
    return muted


def _nothing(self: object, *args: Any, **kwargs: Any) -> None:
    return None


class _SilentConsole(ConsoleCallbackHandler):
    """Takes the place ``set_debug(True)`` would give a printing console handler (its
    printing hooks do nothing: set below)."""


class _SilentStdOut(StdOutCallbackHandler):
    """Takes the place a model's ``verbose`` (``set_verbose(True)``) would give a printer."""


for _hook in ("_persist_run", "_on_chain_start", "_on_chain_end", "_on_chain_error",
              "_on_llm_start", "_on_llm_end", "_on_llm_error", "_on_tool_start", "_on_tool_end",
              "_on_tool_error"):
    setattr(_SilentConsole, _hook, _nothing)
for _hook in ("on_chain_start", "on_chain_end", "on_agent_action", "on_tool_end", "on_text",
              "on_agent_finish"):
    setattr(_SilentStdOut, _hook, _nothing)


def _tracers_only(callbacks: Any) -> CallbackManager:
    if isinstance(callbacks, BaseCallbackManager):
        return CallbackManager(
            handlers=[h for h in callbacks.handlers if is_trace_handler(h)],
            inheritable_handlers=[h for h in callbacks.inheritable_handlers if is_trace_handler(h)],
            parent_run_id=callbacks.parent_run_id)
    if isinstance(callbacks, list):
        kept = [h for h in callbacks if isinstance(h, BaseCallbackHandler) and is_trace_handler(h)]
        return CallbackManager(handlers=kept, inheritable_handlers=kept)
    return CallbackManager(handlers=[])
