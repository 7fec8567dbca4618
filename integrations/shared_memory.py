"""Two agent replicas, two processes, one memory: the postgres backend end to end.

    python integrations/shared_memory.py                       # a scratch PostgreSQL (test extra)
    python integrations/shared_memory.py --dsn postgresql://agent@db/memory   # your server

What it shows, each step printed: the team's notes are published from a folder (the bundled
sample workspace) into the database workspace ``team``; replica A (a process of its own, as on
another machine) writes a note and replica B finds it at once, with a citation it reads back;
B writes, A finds; a second workspace (``guest``) sees none of it; the workspace is exported
back to a folder, byte for byte what was published plus the two new notes.
"""

from __future__ import annotations

import argparse
import contextlib
import filecmp
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from openclaw_memory import MemoryIndex
from openclaw_memory.postgres import PostgresMemory

SAMPLE = Path(__file__).resolve().parent.parent / "openclaw_memory" / "sample_workspace"
SETTINGS = {"timezone": "UTC"}


def replica(dsn: str, name: str, note: str, question: str) -> None:
    """One replica's turn (run in its own process): write a note, answer a question."""
    with MemoryIndex.open("team", backend="postgres", dsn=dsn, **SETTINGS) as memory:
        written = memory.write(note)
        hits = memory.search(question).results
        top = hits[0] if hits else None
        cited = memory.get(top.citation).text if top and top.citation else ""
        print(json.dumps({"replica": name, "wrote": f"{written.path}#L{written.start_line}",
                          "asked": question, "top": top.citation if top else None,
                          "cited_text": cited}), flush=True)


def _run_replica(dsn: str, *args: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, __file__, "--dsn", dsn, "--replica", *args],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


@contextlib.contextmanager
def _database(dsn: str | None) -> Iterator[str]:
    if dsn:
        yield dsn
        return
    from openclaw_memory.postgres.scratch import running_postgres

    with running_postgres() as server:
        yield server.dsn


def demo(dsn: str) -> dict[str, object]:
    with PostgresMemory.open(dsn, workspace="team", **SETTINGS) as team:
        published = team.publish(SAMPLE)
        print(f"published {SAMPLE.name}: {published.written} documents, {published.chunks} chunks")
    a = _run_replica(dsn, "A", "The offsite is in Lisbon, 12-14 May.",
                     "where does the offsite take place?")
    print(f"replica A wrote {a['wrote']}")
    b = _run_replica(dsn, "B", "Budget for the offsite: 40k EUR, approved by Priya.",
                     "where is the offsite?")
    print(f"replica B asked {b['asked']!r}: top hit {b['top']} -> {b['cited_text']!r}")
    a2 = _run_replica(dsn, "A", "Flights for the offsite are booked.",
                      "who approved the offsite budget?")
    print(f"replica A asked {a2['asked']!r}: top hit {a2['top']} -> {a2['cited_text']!r}")
    with PostgresMemory.open(dsn, workspace="guest", **SETTINGS) as guest:
        leaked = guest.search("offsite Lisbon budget").results
        print(f"workspace 'guest' finds {len(leaked)} hits about the offsite")
    with tempfile.TemporaryDirectory() as out, \
            PostgresMemory.open(dsn, workspace="team", **SETTINGS) as team:
        exported = team.export(out)
        same = all(filecmp.cmp(p, Path(out) / p.relative_to(SAMPLE), shallow=False)
                   for p in SAMPLE.rglob("*.md"))
        print(f"exported {exported} documents; the published files byte for byte: {same}")
    return {"b": b, "a2": a2, "leaked": len(leaked), "exported": exported, "same": same}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn", default=None, help="a database to use (default: a scratch server)")
    ap.add_argument("--replica", nargs=3, metavar=("NAME", "NOTE", "QUESTION"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.replica:
        replica(args.dsn, *args.replica)
        return
    with _database(args.dsn) as dsn:
        demo(dsn)


if __name__ == "__main__":
    main()
