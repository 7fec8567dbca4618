"""Secrets never surface: a server echoing the API key into an error, keys in headers or in the
base URL stay out of error text, tool messages, CLI stderr, reprs and dumps."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_server import FakeOpenAIServer, RecordedRequest, Reply, json_reply

from openclaw_memory import MemoryIndex
from openclaw_memory.cli.app import main
from openclaw_memory.config import EmbeddingSettings, MemorySettings
from openclaw_memory.langchain import memory_tools

KEY = "sk-live-4f9Qz8Lk2Wm7Xp1Rv6Tn"
HEADER_KEY = "azure-key-77c3d1e9b2"
URL_KEY = "urlsecret5521"


def _echo_key(request: RecordedRequest) -> Reply:
    sent = request.headers.get("authorization", "") + " " + request.headers.get("api-key", "")
    return json_reply({"error": {"message": f"Incorrect API key provided: {sent}",
                                 "type": "invalid_request_error", "code": "invalid_api_key"}}, 401)


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.route("/v1/embeddings", _echo_key)
        yield running


def _embedding(server: FakeOpenAIServer) -> dict[str, object]:
    return {"provider": "openai", "api_key": KEY, "max_retries": 0,
            "base_url": server.base_url.replace("http://", f"http://bot:{URL_KEY}@"),
            "headers": {"api-key": HEADER_KEY},
            "model": "text-embedding-3-small"}


def _assert_clean(text: str) -> None:
    for secret in (KEY, HEADER_KEY, URL_KEY):
        assert secret not in text, text


def test_an_echoed_key_reaches_no_error_tool_message_or_status(workspace: Path, tmp_path: Path,
                                                               server: FakeOpenAIServer) -> None:
    with MemoryIndex.open(workspace, index_path=tmp_path / "i.sqlite",
                          embedding=_embedding(server)) as memory:
        report = memory.sync()
        response = memory.search("PostgreSQL billing")
        tool = memory_tools(memory)[0].invoke({"type": "tool_call", "id": "c",
                                               "name": "memory_search", "args": {"query": "x"}})
        texts = [*report.warnings, *(response.notes), str(response.error), str(response.as_dict()),
                 str(tool.content), str(memory.status())]
    assert any("401" in t for t in texts)  # the failure itself is reported
    for text in texts:
        _assert_clean(text)


def test_settings_repr_and_dump_show_no_credentials(server: FakeOpenAIServer) -> None:
    settings = MemorySettings(embedding=EmbeddingSettings(**_embedding(server)))  # type: ignore[arg-type]
    for text in (repr(settings), str(settings), str(settings.model_dump()),
                 settings.model_dump_json()):
        _assert_clean(text)
    # The real values are still there for the client.
    assert settings.embedding.headers["api-key"] == HEADER_KEY
    assert URL_KEY in (settings.embedding.base_url or "")


def test_cli_stderr_shows_no_echoed_key(workspace: Path, tmp_path: Path,
                                        server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(["--workspace", str(workspace), "--index", str(tmp_path / "c.sqlite"),
              "--provider", "openai", "search", "billing", "--json"])
    _assert_clean(out.getvalue() + err.getvalue())
