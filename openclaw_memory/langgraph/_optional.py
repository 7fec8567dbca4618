"""``langchain`` (the ``agents`` extra) is optional: stand-ins when it is not installed.

The middleware classes subclass ``AgentMiddleware``. Importing this package must work with
only ``langchain-core`` and ``langgraph``, so without ``langchain`` the base class is a
stand-in whose constructor explains what to install; the graph nodes need none of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Generic, TypedDict, TypeVar

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from openclaw_memory.errors import install_hint

__all__ = ["LANGCHAIN_AGENTS", "AgentMiddleware", "AgentState"]

INSTALL_HINT = f"the agent middleware needs the 'agents' extra (LangChain v1): {install_hint('agents')}"

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware, AgentState

    LANGCHAIN_AGENTS = True
else:
    try:
        from langchain.agents.middleware import AgentMiddleware, AgentState

        LANGCHAIN_AGENTS = True
    except ImportError:
        LANGCHAIN_AGENTS = False
        _R = TypeVar("_R")
        _S = TypeVar("_S")
        _C = TypeVar("_C")

        class AgentState(TypedDict, Generic[_R]):
            messages: Annotated[list[AnyMessage], add_messages]

        class AgentMiddleware(Generic[_S, _C, _R]):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                raise ImportError(INSTALL_HINT)
