"""Which of a subject's lines say the same thing about it: groups of lines, one per attribute.

The lines naming one person or project ("Ada lives in Paris", "Ada moved to Berlin", "Ada
adopted a beagle") are compared with each other, the subject's name taken out: two lines about
one attribute are far closer to each other than either is to a question about it, and closer
still when their words are matched one by one as well as their sentences (:func:`line_alike`:
"member" / "membership", "Spanish" / "Japanese"). The groups form around the **curated
lines**: ``MEMORY.md`` states each fact once, so its lines are the attributes the notes keep.
Curated lines that say one thing (a fact and its restatement) are one group and two such
groups never merge; every other line joins the group, or the other lines, it is closest to on
average while that closeness is at least :data:`SEPARATE` ("Ada moved to Berlin" joins "Ada
lives in Paris"; "Ada bought a Honda" stays apart). Without curated lines, lines group by
average linkage alone.

Why groups rather than a threshold from the question's closest line: a changed fact is often
worded far from its first statement ("is on the payroll at" / "accepted an offer from"), and
still nearer to it than to any other attribute's line. Measured on
benchmarks/knowledge_update.py with the cue words of search/attributes.py switched off (the
ranking on its own), current-value recall@1 on template families a-d: 85.5 / 83.7 / 69.6 /
76.8 with the threshold rule it replaced, 90.3 / 85.9 / 78.3 / 91.3 with these groups.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from openclaw_memory.language.textsearch import STOP_WORDS

__all__ = ["SAME_ATTRIBUTE", "SEPARATE", "WORD_SHARE", "attribute_groups", "average_linkage",
           "content_words", "line_alike"]

#: Average similarity at which curated lines are one fact said twice. ``MEMORY.md`` states each
#: fact once, so its lines of one subject are different attributes unless nearly one sentence:
#: on benchmarks/knowledge_update.py's curated files no two such lines came above 0.51 ("reports
#: to Rafael" / "is a team lead"), and at 0.4 "is a member at CoreClub" merged with "is on the
#: infra team" (family f: unchanged facts answered 51.4 -> 62.9 %, current values 85.0 -> 87.2
#: at 0.55; family b lost 2.3 points of current values: its "product manager" title had been
#: answering "Who is her manager?" through the merged group).
SAME_ATTRIBUTE = 0.55
#: Average similarity at which lines with no curated line to join are one attribute.
SEPARATE = 0.25
#: Share of two lines' similarity that comes from their words matched one by one (each word
#: to the closest word of the other line) rather than from the sentences: "member" and
#: "membership", "Spanish" and "Japanese" match however the sentences around them differ.
#: Without cue words (search/attributes.py), on benchmarks/knowledge_update.py's families
#: a-e, the line of the attribute asked came out newest for 78-91 % of questions against
#: 68-89 % with sentences alone; 0.5 was no better.
WORD_SHARE = 0.3
#: A similarity no group of lines reaches on average (finite: summed through matrix products).
_NEVER = -1e6
_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
_WORD = re.compile(rf"[{_CJK}]{{1,2}}|[^\W\d_{_CJK}](?:[^\W{_CJK}]|['\u2019-])*")


def content_words(text: str) -> list[str]:
    """The words of ``text`` beyond function words (CJK: runs of two characters)."""
    return [w for w in _WORD.findall(text) if len(w) > 1 and w.lower() not in STOP_WORDS]


def line_alike(sentences: np.ndarray, words: Sequence[Sequence[str]],
               word_rows: dict[str, np.ndarray]) -> np.ndarray:
    """Lines' similarity: their sentence vectors' cosine (``sentences``: unit rows) blended
    with their words' (:data:`WORD_SHARE`): the mean over both lines' words of each word's
    best cosine with the other line's words (``word_rows``: each word's unit vector). A line
    without words (or none embedded) compares by its sentence alone."""
    cosine = sentences @ sentences.T
    matched = cosine.copy()
    worded = [i for i, line in enumerate(words)
              if line and all(w in word_rows for w in line)]
    if worded:
        # All words against all at once; then, per pair of lines, each word's best match
        # in the other line (a maximum over that line's columns) averaged over its own.
        counts = np.array([len(words[i]) for i in worded])
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        vectors = np.array([word_rows[w] for i in worded for w in words[i]])
        best = np.maximum.reduceat(vectors @ vectors.T, starts, axis=1)
        mean = np.add.reduceat(best, starts, axis=0) / counts[:, None]
        matched[np.ix_(worded, worded)] = 0.5 * (mean + mean.T)
    return np.asarray((1 - WORD_SHARE) * cosine + WORD_SHARE * matched)


def average_linkage(alike: np.ndarray, threshold: float,
                    start: Sequence[Sequence[int]] | None = None,
                    apart: Sequence[bool] | None = None) -> list[list[int]]:
    """Groups of ``alike``'s rows, merged while two groups' mean pairwise similarity is at
    least ``threshold`` (closest pair first), from ``start`` (default: each row alone);
    two groups marked ``apart`` never merge."""
    groups: list[list[int]] = [list(g) for g in (start or [[i] for i in range(len(alike))])]
    member = np.zeros((len(groups), len(alike)))
    for g, rows in enumerate(groups):
        member[g, rows] = 1.0
    total = member @ np.asarray(alike, dtype=float) @ member.T  # summed similarity
    sizes = member.sum(axis=1)
    fixed = np.array(apart if apart is not None else [False] * len(groups), dtype=bool)
    alive = np.ones(len(groups), dtype=bool)
    while alive.sum() > 1:
        mean = total / np.outer(sizes, sizes)
        mean[~alive, :] = -np.inf
        mean[:, ~alive] = -np.inf
        mean[np.ix_(fixed, fixed)] = -np.inf
        np.fill_diagonal(mean, -np.inf)
        a, b = np.unravel_index(int(np.argmax(mean)), mean.shape)
        if mean[a, b] < threshold:
            break
        keep, gone = int(min(a, b)), int(max(a, b))
        total[keep, :] += total[gone, :]
        total[:, keep] += total[:, gone]
        sizes[keep] += sizes[gone]
        fixed[keep] |= fixed[gone]
        alive[gone] = False
        groups[keep].extend(groups[gone])
    return [sorted(groups[g]) for g in np.flatnonzero(alive)]


def attribute_groups(alike: np.ndarray, curated: Sequence[bool],
                     labels: Sequence[str] | None = None) -> list[list[int]]:
    """The lines grouped by attribute: curated lines saying one thing are one group, and no
    two such groups merge; the other lines join them, or each other, by
    :func:`average_linkage`. ``labels``: the label each line begins with ("work laptop" of
    "Work laptop: ThinkPad X1"; "" for none): two curated lines labelled differently are two
    attributes, however alike their sentences ("Personal laptop: MacBook Air M1", 0.56). Two
    unlabelled ones that differ in their value still join ("lives in Paris" beside a later
    "lives in Berlin" is one attribute, its newer value)."""
    seeds = [i for i, kept in enumerate(curated) if kept]
    core_alike = np.array(alike[np.ix_(seeds, seeds)], dtype=float)
    if labels is not None:
        for a, i in enumerate(seeds):
            for b, j in enumerate(seeds):
                if labels[i] and labels[j] and labels[i] != labels[j]:
                    core_alike[a, b] = _NEVER
    cores = [[seeds[i] for i in group]
             for group in average_linkage(core_alike, SAME_ATTRIBUTE)]
    rest = [[i] for i, kept in enumerate(curated) if not kept]
    return average_linkage(alike, SEPARATE, [*cores, *rest],
                           [True] * len(cores) + [False] * len(rest))
