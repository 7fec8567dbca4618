"""No credential reaches an error a person or a model reads: a chat model's failure in the
consolidation, capture and flush reports (the real ChatOpenAI against a server echoing the
key), an embedding endpoint's non-JSON error body with the key and a custom header (search
warning, status), and a PostgreSQL connection string's password (message, chained error, the
open object's attributes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from openai_server import FakeOpenAIServer, RecordedRequest, Reply, json_reply

from openclaw_memory import MemoryIndex
from openclaw_memory.errors import StoreError
from openclaw_memory.langgraph import MemoryConsolidation
from openclaw_memory.langgraph.capture import MemoryCapture

KEY = "key-9f8e7d6c5b4a"  # not shaped like "sk-...": only knowing the key finds it
HEADER = "tenant-secret-31337"


@pytest.fixture()
def server(local_openai: FakeOpenAIServer) -> FakeOpenAIServer:
    return local_openai


def _echo(status: int, content_type: str) -> Any:
    def reply(request: RecordedRequest) -> Reply:
        echoed = f"bad request from {request.headers.get('authorization')} " \
                 f"x-tenant={request.headers.get('x-tenant')} " + "padding " * 60
        return Reply(status, echoed.encode(), {"Content-Type": content_type})
    return reply


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("- Ada lives in Paris.\n")
    (root / "memory" / "2026-11-27.md").write_text("- Ada moved to Lyon.\n")
    return root


def test_a_chat_models_echoed_key_is_cut_from_consolidation_and_capture_reports(
        server: FakeOpenAIServer, ws: Path, tmp_path: Path) -> None:
    server.route("/v1/chat/completions", lambda request: json_reply({"error": {
        "message": f"Incorrect API key provided: {request.headers.get('authorization')} "
                   f"(tenant {request.headers.get('x-tenant')})", "type": "invalid_request_error"}},
        status=401))
    model = ChatOpenAI(model="scripted", base_url=server.base_url, api_key=KEY,  # type: ignore[arg-type]
                       default_headers={"X-Tenant": HEADER}, max_retries=0)
    with MemoryIndex.open(ws, index_path=tmp_path / "i.sqlite", embedding={"provider": "none"},
                          timezone="UTC") as memory:
        report = MemoryConsolidation(memory, model).run(dry_run=True)
        assert report.error is not None and "Incorrect API key" in report.error
        assert KEY not in report.error and HEADER not in report.error
        capture = MemoryCapture(memory, model)
        captured = capture.run([HumanMessage("I moved to Lyon.")])
        assert captured.error is not None and KEY not in captured.error
        assert HEADER not in captured.error


@pytest.mark.parametrize("status", [400, 200])
def test_an_embedding_endpoints_non_json_body_never_shows_the_key_or_a_header(
        server: FakeOpenAIServer, ws: Path, tmp_path: Path, status: int) -> None:
    settings = {"provider": "openai", "base_url": server.base_url, "api_key": KEY,
                "headers": {"X-Tenant": HEADER}, "timeout_seconds": 5.0, "max_retries": 0}
    with MemoryIndex.open(ws, index_path=tmp_path / "e.sqlite", embedding=settings,
                          timezone="UTC") as memory:
        memory.sync()
        server.route("/v1/embeddings", _echo(status, "text/html"))
        response = memory.search("where does Ada live?")
        shown = " ".join([str(response.warning), *response.notes, str(memory.status())])
        if status == 200:  # a body that is not embeddings is shown, redacted, then cut short
            assert "bad request from" in shown
        assert KEY not in shown and HEADER not in shown


def test_a_dsn_password_is_in_no_message_no_chained_error_and_no_attribute(pg_dsn: str) -> None:
    from openclaw_memory.postgres.connection import Database

    for broken in ("user=me password=hunter2hunter2 host=[::1 dbname=x port=notaport",
                   "postgresql://me:hunter2hunter2@[::1/db"):
        with pytest.raises(StoreError) as caught:
            Database(broken)
        assert "hunter2hunter2" not in str(caught.value) and caught.value.__cause__ is None
    db = Database(pg_dsn)
    try:
        assert pg_dsn not in repr(vars(db)) and db.dsn == pg_dsn
    finally:
        db.close()
