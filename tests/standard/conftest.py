"""A small workspace shared by the standard LangChain suites (retriever and tools)."""

from __future__ import annotations

from pathlib import Path

import pytest

INVOICE_DAYS = {
    "2026-01-10": "- Deployed the invoice renderer to Frankfurt.\n- Invoice totals now round half-even.",
    "2026-01-11": "- Ticket BILL-482: zero-amount invoice crashes the PDF job.",
    "2026-01-12": "- Priya reviewed the invoice email template; ship it Monday.",
    "2026-01-13": "- The invoice archive moves to cold storage after 90 days.",
}


@pytest.fixture()
def memory_workspace(tmp_path: Path) -> Path:
    """MEMORY.md plus four daily logs that all mention invoices (>= 3 hits for any k <= 4)."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n- We chose PostgreSQL for the billing service.\n", encoding="utf-8")
    for day, body in INVOICE_DAYS.items():
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n{body}\n", encoding="utf-8")
    return ws
