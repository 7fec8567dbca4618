"""Turning files into index rows: token counting, chunking with line ranges, incremental sync.

:mod:`.sync` decides what changed (size, mtime, hash), chunks it (:mod:`.chunking`, counted with
:mod:`.tokens`), embeds what the cache lacks and writes the rows; a full rebuild writes a new
database beside the old one (:mod:`.rebuild_files`) and swaps it in.
"""
