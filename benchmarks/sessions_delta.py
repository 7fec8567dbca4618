"""What the session delta thresholds save: sync time after small appends, deferred vs re-indexed.

    python benchmarks/sessions_delta.py                       # 50 transcripts x 2 000 messages
    python benchmarks/sessions_delta.py --transcripts 10 --messages 500

Keyword-only (``embedding.provider = "none"``), so the figures are the cost of reading,
flattening, chunking and writing rows; with an embedding provider a re-index also embeds the
chunks that are not in the cache, which the thresholds save as well. Each round appends one
user/assistant exchange (``append_messages``) to every transcript, then syncs:

* ``default``: the OpenClaw thresholds (100 000 bytes / 50 lines): below them the sync only
  checks each transcript (two 4 KiB reads and a newline count of the new bytes);
* ``force_sessions=True``: every grown transcript is re-read, flattened and re-chunked;
* ``delta 0``: thresholds off (every change re-indexes), the behaviour before thresholds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from openclaw_memory import MemoryIndex
from openclaw_memory.sessions.writer import append_messages


def build(root: Path, transcripts: int, messages: int) -> Path:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Memory\n\n- placeholder\n")
    for t in range(transcripts):
        batch = []
        for m in range(messages // 2):
            batch += [HumanMessage(f"t{t} question {m}: what about the {m % 97} widgets?"),
                      AIMessage(f"Answer {m}: the widgets ship on day {m % 31} via route {t}.")]
        append_messages(ws / "sessions" / f"s{t:04d}.jsonl", batch)
    return ws


def rounds(memory: MemoryIndex, ws: Path, count: int, **kwargs: bool) -> list[float]:
    times = []
    for r in range(count):
        for path in sorted((ws / "sessions").glob("*.jsonl")):
            append_messages(path, [HumanMessage(f"round {r} ping"), AIMessage("pong")])
        started = time.perf_counter()
        memory.sync(**kwargs)
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transcripts", type=int, default=50)
    parser.add_argument("--messages", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = build(root, args.transcripts, args.messages)
        size = sum(p.stat().st_size for p in (ws / "sessions").glob("*.jsonl"))
        print(f"{args.transcripts} transcripts x {args.messages} messages, "
              f"{size / 1e6:.1f} MB of JSONL")
        for label, sessions, kwargs in (
            ("default thresholds", {}, {}),
            ("force_sessions=True", {}, {"force_sessions": True}),
            ("delta 0 (every change)", {"delta_bytes": 0}, {}),
        ):
            with MemoryIndex.open(ws, index_path=root / f"{label[:5]}.sqlite",
                                  embedding={"provider": "none"},
                                  sessions={"enabled": True, **sessions}) as memory:
                started = time.perf_counter()
                memory.sync()
                backfill = (time.perf_counter() - started) * 1000
                times = rounds(memory, ws, args.rounds, **kwargs)
                print(f"{label:24s} backfill {backfill:8.0f} ms   sync after one exchange "
                      f"per transcript: median {statistics.median(times):7.1f} ms "
                      f"(max {max(times):7.1f})")


if __name__ == "__main__":
    main()
