"""The ``openclaw-memory`` command: argument parsing and dispatch live in :mod:`.app`, and each
larger command has a module of its own (:mod:`.evaluate`, :mod:`.status`, :mod:`.watching`)."""

from openclaw_memory.cli.app import main

__all__ = ["main"]
