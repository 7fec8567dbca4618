"""The engine package stands on its own: importing it and indexing never load LangChain."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_indexing_and_searching_never_import_langchain(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-01-01.md").write_text("- chose PostgreSQL\n", encoding="utf-8")
    script = (
        "import sys\n"
        "from openclaw_memory import MemoryIndex\n"
        f"with MemoryIndex.open({str(tmp_path)!r}, index_path={str(tmp_path / 'i.sqlite')!r},\n"
        "                      embedding={'provider': 'none'}) as m:\n"
        "    m.sync()\n"
        "    assert m.search('PostgreSQL').results\n"
        "top = {n.split('.')[0] for n in sys.modules}\n"
        "loaded = sorted(top & {'langchain_core', 'langchain', 'langgraph'})\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env={"OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state"),
                                          "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"
