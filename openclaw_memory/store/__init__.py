"""SQLite storage: connection factory, schema, FTS rows and the two vector paths."""

from openclaw_memory.store.connection import DISABLE_VEC_ENV, DriverInfo, probe_driver
from openclaw_memory.store.db import StaleReadError, Store
from openclaw_memory.store.rows import ChunkRow, FileRow, chunk_id
from openclaw_memory.store.schema import SCHEMA_VERSION

__all__ = ["DISABLE_VEC_ENV", "SCHEMA_VERSION", "ChunkRow", "DriverInfo", "FileRow",
           "StaleReadError", "Store", "chunk_id", "probe_driver"]
