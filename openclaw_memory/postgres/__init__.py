"""The PostgreSQL + pgvector backend: many workspaces' documents and indexes in one database,
for agents on many machines. Needs ``pip install 'langchain-openclaw-memory[postgres]'``."""

from openclaw_memory.postgres.memory import PostgresMemory, PublishReport
from openclaw_memory.postgres.schema import SCHEMA_VERSION
from openclaw_memory.postgres.search_side import PostgresIndex

__all__ = ["SCHEMA_VERSION", "PostgresIndex", "PostgresMemory", "PublishReport"]
