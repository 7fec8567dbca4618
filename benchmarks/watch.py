"""Watcher cost and freshness: descriptors and inotify watches for 5 000 files, and the latency
from writing a note to finding it with ``search``.

Builds a workspace with ``--files`` Markdown notes spread over nested folders under ``memory/``
(plus a ``node_modules`` tree at the root, as an agent's workspace often has, which must not be
watched), indexes it, starts ``MemoryIndex.watch()`` and reports:

* open file descriptors of this process (``/proc/self/fd``) before and after the watcher starts,
  and the inotify watches it holds (``inotify wd:`` lines in ``/proc/self/fdinfo``), next to
  what a naive recursive watch of the whole workspace root would hold;
* for ``--writes`` new notes written one after another: the time from the write returning to
  the first search (``sync.on_search`` off, so only the watcher indexes) that finds it; median
  and p95, for the default 1 500 ms debounce and for ``--debounce-ms`` (default 0) to show the
  cost without the debounce. Searches poll every 10 ms, so figures carry up to 10 ms of slack.

    python benchmarks/watch.py                 # 5000 files, 20 writes, keyword-only index
    python benchmarks/watch.py --provider local  # also embed each note (offline MiniLM)
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_report, percentile
from watchfiles import watch

from openclaw_memory import MemoryIndex

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey yankee").split()


def build_workspace(root: Path, files: int, node_modules_dirs: int) -> int:
    """``files`` notes under memory/<topic>/<sub>/, 20 per folder; returns the folder count."""
    per_folder = 20
    folders = 0
    for i in range(files):
        folder = root / "memory" / f"topic-{i // (per_folder * 10):03d}" / f"sub-{(i // per_folder) % 10}"
        if i % per_folder == 0:
            folder.mkdir(parents=True, exist_ok=True)
            folders += 1
        words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(12))
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\n- {words} number{i}\n")
    (root / "MEMORY.md").write_text("# Memory\n\n- Curated facts live here.\n")
    for j in range(node_modules_dirs):
        (root / "node_modules" / f"pkg-{j // 10}" / f"lib-{j % 10}").mkdir(parents=True,
                                                                           exist_ok=True)
    return folders


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def inotify_watches() -> int:
    total = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            total += Path(f"/proc/self/fdinfo/{fd}").read_text().count("inotify wd:")
        except OSError:
            continue
    return total


def naive_recursive_watches(root: Path) -> tuple[int, int]:
    """(descriptors, inotify watches) of one recursive ``watchfiles.watch`` on the root."""
    gc.collect()  # a stopped notifier's descriptors go when its object is collected
    fds, watches = fd_count(), inotify_watches()
    batches = watch(root, watch_filter=None, rust_timeout=1, yield_on_timeout=True)
    try:
        next(batches)  # the notifier exists (and watches everything) from the first tick
        return fd_count() - fds, inotify_watches() - watches
    finally:
        batches.close()


def measure_latency(memory: MemoryIndex, root: Path, writes: int, debounce_ms: int,
                    tag: str) -> list[float]:
    watcher = memory.watch(debounce_ms=debounce_ms)
    latencies: list[float] = []
    try:
        for i in range(writes):
            token = f"fresh{tag}x{i}"
            path = root / "memory" / "bench" / f"{tag}-{i:03d}.md"
            path.parent.mkdir(exist_ok=True)
            start = time.perf_counter()
            path.write_text(f"- A brand new note mentioning {token}.\n")
            while not memory.search(token).results:
                if time.perf_counter() - start > 60:
                    raise SystemExit(f"note {i} not searchable after 60 s")
                time.sleep(0.01)
            latencies.append(time.perf_counter() - start)
            memory.wait_for_sync(60)
    finally:
        watcher.stop()
    return latencies


def report(label: str, values: list[float]) -> None:
    print(f"{label}: median {statistics.median(values) * 1000:.0f} ms, p95 "
          f"{percentile(values, 95) * 1000:.0f} ms, min {min(values) * 1000:.0f} ms, max "
          f"{max(values) * 1000:.0f} ms over {len(values)} writes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--node-modules-dirs", type=int, default=2000)
    parser.add_argument("--debounce-ms", type=int, default=0,
                        help="second latency run with this debounce (the first uses 1500)")
    parser.add_argument("--provider", choices=["none", "local"], default="none")
    args = parser.parse_args()

    print(machine_report())
    tmp = Path(tempfile.mkdtemp(prefix="ocm-watch-bench-"))
    try:
        root = tmp / "ws"
        folders = build_workspace(root, args.files, args.node_modules_dirs)
        print(f"workspace: {args.files} notes in {folders} folders under memory/ "
              f"({args.node_modules_dirs} folders in node_modules/); provider {args.provider}")
        with MemoryIndex.open(root, index_path=tmp / "index.sqlite",
                              embedding={"provider": args.provider},
                              sync={"on_search": False}) as memory:
            started = time.perf_counter()
            sync = memory.sync()
            print(f"initial sync: {sync.indexed} files, {sync.chunks_added} chunks in "
                  f"{time.perf_counter() - started:.1f}s")

            fds_before, watches_before = fd_count(), inotify_watches()
            started = time.perf_counter()
            watcher = memory.watch()
            start_s = time.perf_counter() - started
            fds_after, watches_after = fd_count(), inotify_watches()
            plan_dirs = len(watcher.plan.directories) if watcher.plan else 0
            print(f"watcher: {plan_dirs} folders watched, started in {start_s * 1000:.0f} ms")
            print(f"file descriptors: {fds_before} before, {fds_after} after "
                  f"(+{fds_after - fds_before} for {args.files} files)")
            print(f"inotify watches: +{watches_after - watches_before} "
                  f"(limit fs.inotify.max_user_watches = "
                  f"{Path('/proc/sys/fs/inotify/max_user_watches').read_text().strip()})")
            watcher.stop()
            naive_fds, naive_watches = naive_recursive_watches(root)
            print(f"naive recursive watch of the workspace root, for comparison: "
                  f"+{naive_fds} descriptors, +{naive_watches} inotify watches")

            report("write -> searchable, debounce 1500 ms (default)",
                   measure_latency(memory, root, args.writes, 1500, "d"))
            report(f"write -> searchable, debounce {args.debounce_ms} ms",
                   measure_latency(memory, root, args.writes, args.debounce_ms, "z"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
