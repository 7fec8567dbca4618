"""Session transcripts (JSONL) as a second, opt-in memory source.

:mod:`.transcripts` reads them into text with line numbers, :mod:`.delta` decides when an
appended transcript is worth re-indexing, :mod:`.writer` appends turns from an agent.
"""
