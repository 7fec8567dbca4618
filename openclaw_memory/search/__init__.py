"""Where search happens: one query in, ranked line-cited hits out, in stages.

:mod:`.pipeline` runs them: the question read once (:mod:`.question`), candidates from both
sides (:mod:`.keywords`, :mod:`.querylines`), fusion into one ranking (:mod:`.ranking`,
:mod:`.coverage`), the relevance gates (:mod:`.gates`), the time stage (:mod:`.recency` over a
subject's lines: :mod:`.subject_lines`, :mod:`.present_value`) and presentation (:mod:`.hits`,
:mod:`.snippets`, :mod:`.citelines`). :mod:`.restatements` is the write path's
look at what memory already holds. The text forms, dates and translation they read are in
``openclaw_memory/language/``.
"""
