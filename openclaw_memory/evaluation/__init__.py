"""Measuring retrieval: recall and line-level metrics (:mod:`.metrics`) over a suite of questions
with known evidence (:mod:`.suite`), as run by ``openclaw-memory eval``."""
