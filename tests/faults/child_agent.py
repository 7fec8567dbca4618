"""An agent process: writes notes, rewrites a versioned file, and searches, all through one index.

Usage: ``python child_agent.py '<json spec>'`` with ``workspace``, ``index``, ``rounds`` and
``pause_s`` (between rounds).
Each round appends a note with a unique word (``MemoryIndex.write``: daily log, every fourth
to ``MEMORY.md``), rewrites ``memory/versioned.md`` in place (truncate + write, as an editor
does) to the next version, and searches for the versioned file's lines. It prints one line,
``DONE <json>``: the notes written, the versions each search saw in ``memory/versioned.md``,
and every exception a call raised (type and message), which the test expects to be none.
"""

from __future__ import annotations

import json
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from faults.workspaces import write_note
from openclaw_memory import MemoryIndex

VERSION = re.compile(r"\bversioned v(\d+)")
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _round(memory: MemoryIndex, ws: Path, i: int, out: dict[str, Any]) -> None:
    word = f"zqnote{i:03d}"
    memory.write(f"agent note {i}: remember {word}", target="memory" if i % 4 == 3 else "daily",
                 now=NOW)
    out["notes"].append(word)
    write_note(ws, "memory/versioned.md", i + 2, lines=10 + i % 5)
    for _ in range(3):
        hits = memory.search("versioned line", max_results=40).results
        seen = {int(v) for h in hits if h.path == "memory/versioned.md"
                for v in VERSION.findall(h.snippet)}
        out["searches"].append(sorted(seen))


def main() -> None:
    spec = json.loads(sys.argv[1])
    ws = Path(spec["workspace"])
    out: dict[str, Any] = {"notes": [], "searches": [], "errors": []}
    with MemoryIndex.open(ws, index_path=spec["index"], embedding={"provider": "none"},
                          **spec.get("settings", {})) as memory:
        for i in range(spec["rounds"]):
            try:
                _round(memory, ws, i, out)
            except Exception as exc:  # recorded: the test asserts there were none
                out["errors"].append(f"{type(exc).__name__}: {exc}")
            time.sleep(spec.get("pause_s", 0))  # lets the watcher's debounce fire in between
    print("DONE " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
