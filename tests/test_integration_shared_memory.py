"""integrations/shared_memory.py: replicas in separate processes share one database workspace."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_replicas_in_other_processes_find_each_others_notes_and_nothing_leaks(
        pg_dsn: str) -> None:
    spec = importlib.util.spec_from_file_location("shared_memory_demo",
                                                  ROOT / "integrations" / "shared_memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.demo(pg_dsn)
    assert "Lisbon" in result["b"]["cited_text"]          # B found what A wrote
    assert "Priya" in result["a2"]["cited_text"]          # A found what B wrote
    assert result["leaked"] == 0 and result["same"] and result["exported"] == 6
