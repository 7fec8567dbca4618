"""What the parts of :class:`~openclaw_memory.store.db.Store` (its keyword and vector mixins)
may use of it: the connection, its lock, the driver and three plumbing methods. Declared once
here so each mixin type-checks on its own."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openclaw_memory.store.connection import DriverInfo

__all__ = ["StorePart"]


class StorePart:
    """Base of the Store's mixins; :class:`Store` provides every attribute declared here."""

    _conn: Any
    _lock: threading.RLock
    driver: DriverInfo

    if TYPE_CHECKING:
        def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

        def generation(self) -> int: ...

        def write(self) -> contextlib.AbstractContextManager[Any]: ...
