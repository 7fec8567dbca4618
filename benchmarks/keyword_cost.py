"""What the keyword side of a search costs at scale, for the questions people actually ask.

    python benchmarks/keyword_cost.py --chunks 100000 --index-dir /tmp/kw-bench

A synthetic workspace of daily logs (``_common.make_corpus``: a Zipf vocabulary with topics)
is indexed keyword-only once (kept in ``--index-dir``). Four kinds of query, 200 each:

* ``rare``: three content words of a random chunk (README's original latency queries);
* ``mixed``: two words of a chunk plus a very common word (a name on every line, "meeting");
* ``common3`` / ``common8``: three or eight of the 60 most common words only.

For each kind it prints p50/p95 in ms of the keyword candidate step (FTS5 query for the
candidate pool) and of the coverage step (the term statistics and per-term lookups on 24
candidates), with the full OR of every term (before) next to the bounded query (now), in the
same run, on the same index. Overlap@24 says how many of the full query's candidates the
bounded one keeps.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import _Words, machine_report, make_corpus, write_workspace  # noqa: E402

from openclaw_memory import MemoryIndex  # noqa: E402
from openclaw_memory.language.textsearch import keyword_terms, match_expression  # noqa: E402
from openclaw_memory.search.coverage import idf, keyword_coverage  # noqa: E402
from openclaw_memory.search.keywords import keyword_candidates  # noqa: E402

LIMIT = 24  # the pool for max_results 6 (6 x candidate_multiplier 4)
_BEFORE_SQL = ("select f.rowid, bm25(chunks_fts) as r from chunks_fts f join chunks c on "
               "c.rowid = f.rowid where chunks_fts match ? and c.source in (?) order by r limit ?")


def _queries(texts: Sequence[str], rng: np.random.Generator, n: int,
             ) -> tuple[dict[str, list[str]], list[int]]:
    common = _Words(np.random.default_rng(7)).vocab[:60]
    kinds: dict[str, list[str]] = {"rare": [], "mixed": [], "common3": [], "common8": []}
    sources: list[int] = []
    for _ in range(n):
        source = int(rng.integers(0, len(texts)))
        sources.append(source)
        words = sorted(set(texts[source].replace("-", " ").replace(".", " ")
                           .split()) - set(common) - {"#", "##"})
        words = [w for w in words if w.isalpha()] or ["x"]
        kinds["rare"].append(" ".join(rng.choice(words, size=min(3, len(words)), replace=False)))
        kinds["mixed"].append(" ".join([*rng.choice(words, size=min(2, len(words)), replace=False),
                                        common[int(rng.integers(0, 5))]]))
        kinds["common3"].append(" ".join(rng.choice(common, size=3, replace=False)))
        kinds["common8"].append(" ".join(rng.choice(common, size=8, replace=False)))
    return kinds, sources


def _time(run: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    times = []
    for q in queries:
        started = time.perf_counter()
        run(q)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--index-dir", type=Path, default=Path("/tmp/openclaw-memory-kw-bench"))
    args = parser.parse_args()
    print(machine_report())
    corpus = make_corpus(args.chunks, n_queries=1)
    ws = args.index_dir / f"ws-{args.chunks}"
    index = args.index_dir / f"kw-{args.chunks}.sqlite"
    if not index.exists():
        write_workspace(ws, corpus)
    with MemoryIndex.open(ws, index_path=index, embedding={"provider": "none"}) as memory:
        started = time.perf_counter()
        report = memory.sync()
        if report.indexed:
            print(f"indexed {report.chunks_added} chunks in {time.perf_counter() - started:.0f} s")
        store, sources = memory.store, ("memory",)
        total = store.counts()["chunks"]
        print(f"{total} chunks; pool {LIMIT}; p50 / p95 ms\n")
        kinds, sources_of = _queries(corpus.texts, np.random.default_rng(11), args.queries)
        rowid_of = {text: int(rowid) for rowid, text in store.query("select rowid, text from chunks")}
        targets = [rowid_of.get(corpus.texts[i]) for i in sources_of]
        print(f"{'query kind':10} {'before: full OR':>16} {'now: bounded':>14} {'overlap@24':>11} "
              f"{'source chunk in pool':>21} {'coverage before':>16} {'coverage now':>13}")
        for kind, queries in kinds.items():
            store.term_statistics([])  # warm the counts cache as a serving process has it
            for q in queries:
                store.term_statistics(keyword_terms(q))

            def full(q: str) -> list[tuple[int, float]]:
                """The query as it was: every term OR-ed, joined on chunks for the source."""
                match = match_expression(q)
                if match is None:
                    return []
                rows = store.query(_BEFORE_SQL, (match, *sources, LIMIT))
                return [(int(a), float(b)) for a, b in rows]

            def bounded(q: str) -> list[tuple[int, float]]:
                return keyword_candidates(store, q, LIMIT, sources, [])

            before, now = _time(full, queries), _time(bounded, queries)
            overlap = statistics.fmean(
                len({k for k, _ in full(q)} & {k for k, _ in bounded(q)}) / max(1, len(full(q)))
                for q in queries[:50])
            keys = {q: [k for k, _ in full(q)] for q in queries}
            if kind in ("rare", "mixed"):
                pairs = list(zip(queries, targets, strict=True))
                hit_before = statistics.fmean(t in {k for k, _ in full(q)} for q, t in pairs)
                hit_now = statistics.fmean(t in {k for k, _ in bounded(q)} for q, t in pairs)
                found = f"{100 * hit_before:9.0f}% -> {100 * hit_now:3.0f}%"
            else:
                found = f"{'-':>16}"
            cover_before = _time(lambda q, keys=keys: _coverage_by_doclist(store, q, keys[q]),
                                 queries)
            cover_now = _time(lambda q, keys=keys: keyword_coverage(store, q, keys[q]), queries)
            print(f"{kind:10} {before[0]:7.1f} / {before[1]:6.1f} {now[0]:6.1f} / {now[1]:5.1f} "
                  f"{100 * overlap:10.0f}% {found:>21} {cover_before[0]:7.1f} / {cover_before[1]:6.1f} "
                  f"{cover_now[0]:5.1f} / {cover_now[1]:5.1f}")


def _coverage_by_doclist(store: Any, query: str, keys: list[int]) -> dict[int, float]:
    """Coverage as it was computed before: one FTS5 query per term over the candidates'
    rowid range of the index table (the term's doclist walked), for the "before" column."""
    terms = keyword_terms(query)
    if not terms or not keys:
        return {}
    total, containing = store.term_statistics(terms)
    weights = {t: idf(total, containing[t]) for t in terms}
    mass = sum(weights.values())
    covered = dict.fromkeys(keys, 0.0)
    low, high = min(keys), max(keys)
    for term, weight in weights.items():
        quoted = '"' + term.replace('"', "") + '"'
        for (rowid,) in store.query("select rowid from chunks_fts where chunks_fts match ? and "
                                    "rowid between ? and ?", (quoted, low, high)):
            if rowid in covered:
                covered[rowid] += weight
    return {k: min(1.0, v / mass) for k, v in covered.items()} if mass > 0 else {}


if __name__ == "__main__":
    main()
