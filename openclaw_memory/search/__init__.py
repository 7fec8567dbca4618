"""Where search happens: one query in, ranked line-cited hits out.

:mod:`.pipeline` runs a search (keyword and vector candidates, fusion, gates, MMR, decay);
:mod:`.textsearch` turns a query into safe FTS5 terms (CJK aware); :mod:`.querylimits` bounds
hostile queries; :mod:`.coverage` scores how much of a query a chunk covers; :mod:`.ranking` holds
the fusion, decay and MMR arithmetic; :mod:`.snippets` builds snippets and citations.
"""
