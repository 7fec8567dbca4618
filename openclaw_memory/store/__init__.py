"""SQLite storage: connection factory, schema, FTS rows and the two vector paths."""

from .connection import DISABLE_VEC_ENV, DriverInfo, probe_driver
from .db import ChunkRow, FileRow, StaleReadError, Store, chunk_id
from .schema import SCHEMA_VERSION

__all__ = ["DISABLE_VEC_ENV", "SCHEMA_VERSION", "ChunkRow", "DriverInfo", "FileRow",
           "StaleReadError", "Store", "chunk_id", "probe_driver"]
