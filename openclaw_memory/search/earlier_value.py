"""A question about what came before a value ("Where did Ada live before Berlin?",
"王芳搬到西安之前住在哪里"): the hit holding the value just before it first.

The question is searched without its anchor, the later value (search/before.py); the hits
then hold the subject's lines about many attributes, and the encoder alone ranks "Ada Park
trains for judo" no higher for "What sport did Ada do?" than her flat or her car. The anchor
tells more than the question does: a line naming the subject and the anchor ("Ada Park took
up cycling") is about the attribute asked, and its date is when the later value began. So:

* the subject's lines (cited by the hits, and the curated lines naming the subject that no hit
  cites) are grouped by attribute as for a present-value question
  (search/present_value.py: :func:`compare_lines`);
* the group of the anchor's line (of those holding the anchor, the one fitting the question
  best) is the attribute asked;
* the anchor's latest stretch begins at its first line after the group's last other value;
  the group's lines dated before that (an undated curated line counts as the oldest) are the
  earlier values, and the hits holding them come first, the newest first: the value just
  before the anchor leads, older ones follow (a question asks for the one before, and a
  person who moved twice may mean either); lines of the group neither alike to the anchor's
  nor fitting the question (:data:`NEAR_ANCHOR`) come after the others. The other hits keep
  their order;
* a curated line of the anchor that says what it replaced ("dating Casey. (before: Robin)",
  as consolidation writes it) comes first of all: after consolidation the replaced line is
  in memory-history/ (not indexed) and the value before may have no other line;
* a line holding an earlier value that no hit cites (the search's passage of ``MEMORY.md`` is
  about her flat, not her sport; or a line of hers the search did not reach:
  search/subject_lines.py) becomes a hit of its own, citing that line (at most
  :data:`MOST_SURFACED`).

Measured by benchmarks/knowledge_update.py: history recall@6 on its first nine template
families went from 69-85 % (the subject's lines in the encoder's order) to 90-98 % with the
cited and curated lines, 90-100 % with the subject's lines anywhere (family j, run blind:
100).

Nothing moves when no line names the subject and the anchor, when no line of the anchor's
group is older than it, when the lines are a conversation's logs alone (a speaker's lines are
one group), or when the embedder fails.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from openclaw_memory.language.textsearch import keyword_terms
from openclaw_memory.search.present_value import (
    DateOf,
    Embed,
    compare_lines,
    conversation_only,
)
from openclaw_memory.search.subject_lines import (
    HAN,
    CuratedText,
    SubjectText,
    find_subject,
    lines_and_curated,
    names_someone,
    placed_day,
    placed_hit,
    uncited_lines,
)
from openclaw_memory.types import SearchHit

__all__ = ["MOST_SURFACED", "earlier_value_first", "holds_value"]

#: The most lines no hit cites that become hits of their own (values before the anchor that
#: the search's passages of ``MEMORY.md`` left out, or the subject's lines it did not reach).
MOST_SURFACED = 2
#: A line of the anchor's group is taken for one of its values when it is at least this alike
#: to an anchor line, or fits the question at least :data:`FIT_FLOOR`; the group's other
#: lines come after those. With few lines the groups are loose ("Ada bought a Honda" joins
#: her homes when nothing else is about cars); on benchmarks/knowledge_update.py's families
#: the value just before the anchor came first for 91.0 / 94.1 / 94.9 / 89.9 / 79.4 / 89.5 /
#: 85.9 / 76.2 / 77.9 % of history questions (a-i) against 91.0 / 94.1 / 93.5 / 89.9 / 79.4 /
#: 88.7 / 86.7 / 77.9 / 75.2 % with every line of the group alike (when this was chosen,
#: before the subject's lines anywhere were read).
NEAR_ANCHOR = 0.45
FIT_FLOOR = 0.1
#: What a curated line says it replaced: "(before: Paris)" (the format langgraph/consolidation.py asks for).
_BEFORE_NOTE = re.compile(r"\s*[(\uff08]before[:\uff1a]\s*[^)\uff09]*[)\uff09]", re.IGNORECASE)
#: The shortest end of a CJK anchor looked for in a line ("到西安" is found as "西安").
_CJK_VALUE = 2


def holds_value(line: str, anchor: str) -> bool:
    """Whether ``line`` states the value ``anchor``: each of its terms as a word; a CJK
    anchor, or its end of two characters or more, as written (the verb before a Chinese value
    is not always where search/before.py cut it)."""
    if HAN.search(anchor):
        shortest = min(_CJK_VALUE, len(anchor))
        return any(anchor[start:] in line for start in range(len(anchor) - shortest + 1))
    terms = keyword_terms(anchor)
    return bool(terms) and all(
        re.search(rf"(?i)(?<!\w){re.escape(term)}(?!\w)", line) for term in terms)


def earlier_value_first(hits: Sequence[SearchHit], question: str, anchor: str,
                        cited: Sequence[list[str]], embed: Embed, date_of: DateOf, *,
                        curated_text: CuratedText | None = None,
                        subject_text: SubjectText | None = None) -> tuple[SearchHit, ...]:
    """``hits`` with those holding the subject's values before ``anchor`` first, the newest
    first (``question``: as searched, without the anchor; ``cited``: each hit's cited lines;
    ``date_of``: the ISO day a hit's line was learned, or None)."""
    subject, pool = find_subject(question, cited, subject_text)
    if (not subject or not hits or not names_someone(question)
            or conversation_only(question, cited, hits)):
        return tuple(hits)
    extra = uncited_lines(pool, hits, subject, curated_text, subject_text)
    lines, kept = lines_and_curated(pool, hits, extra)
    holding = [holds_value(_BEFORE_NOTE.sub("", line), anchor) for line in lines]
    if not any(holding) or all(holding):
        return tuple(hits)
    compared = compare_lines(question, subject, lines, kept, embed)
    if compared is None:
        return tuple(hits)
    anchor_line = max((i for i, held in enumerate(holding) if held),
                      key=lambda i: float(compared.fit[i]))
    group = next(g for g in compared.groups if anchor_line in g)
    days = [date_of(hits[k], line) or "" for k, line in pool]
    days += [placed_day(line) for line in extra]
    anchors = [i for i in group if holding[i]]
    earlier = _before_anchor(group, holding, days)
    near = {i for i in earlier if float(compared.alike[i, anchors].max()) >= NEAR_ANCHOR
            or float(compared.fit[i]) >= FIT_FLOOR}
    # A line of the anchor saying what it replaced ("dating Casey (before: Robin)", as
    # consolidation writes them) answers first: the value before may be in no other line.
    said_before = [i for i in anchors if _BEFORE_NOTE.search(lines[i])]
    first: list[SearchHit] = []
    moved: set[int] = set()
    for i in [*said_before, *(i for i in earlier if i in near),
              *(i for i in earlier if i not in near)]:
        if i < len(pool) and pool[i][0] not in moved:
            moved.add(pool[i][0])
            first.append(replace(hits[pool[i][0]], as_of=days[i] or hits[pool[i][0]].as_of))
        elif i >= len(pool) and len(first) - len(moved) < MOST_SURFACED:
            place = extra[i - len(pool)]
            # Scored as the passage of its file the search found, else as the last hit.
            like = next((hit for hit in hits if hit.path == place.path), hits[-1])
            first.append(placed_hit(place, like.score, days[i], cited=like.citation is not None))
    return (*first, *(hit for k, hit in enumerate(hits) if k not in moved))


def _before_anchor(group: Sequence[int], holding: Sequence[bool],
                   days: Sequence[str]) -> list[int]:
    """The group's lines older than the anchor's latest stretch, the newest first."""
    ordered = sorted(group, key=lambda i: days[i], reverse=True)
    latest = next((n for n, i in enumerate(ordered) if holding[i]), None)
    if latest is None:
        return []
    start = latest
    while start + 1 < len(ordered) and holding[ordered[start + 1]]:
        start += 1
    since = days[ordered[start]]
    return [i for i in ordered[start + 1:] if not holding[i] and days[i] < since]
