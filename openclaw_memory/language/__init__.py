"""How people write, as the index and the search both read it: the keyword side's text form
(:mod:`.textsearch`: CJK-aware FTS5 bodies and safe MATCH expressions), days as written
(:mod:`.dateforms`), the periods a question names (:mod:`.dates`), and a question's words in the
other language (:mod:`.translation` over the bilingual dictionary file, :mod:`.dictionary_file`).

Below both the store and the search pipeline: the store writes chunk bodies with
:mod:`.textsearch` and names daily files with :mod:`.dates`, so none of these modules imports
from ``search/`` or ``store/``.
"""
