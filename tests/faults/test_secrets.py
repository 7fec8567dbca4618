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


# Every header but a short list of safe ones may carry a credential, whatever its name.
CUSTOM_HEADERS = {"X-Goog-Api-Key": "goog-key-4411aa", "Ocp-Apim-Subscription-Key": "apim-key-9921",
                  "X-Auth-Token": "auth-token-5532", "X-Whatever-We-Did-Not-Think-Of": "odd-key-7781"}
DSN_PASSWORD = "S3cr3tPassw0rd"
DSN_FORMS = [
    f"postgres:{DSN_PASSWORD}@127.0.0.1:1/postgres",  # malformed: libpq quotes it back
    f"postgresql://bot:{DSN_PASSWORD}@127.0.0.1:1/db",
    f"postgresql://127.0.0.1:1/db?password={DSN_PASSWORD}",
    f"host=127.0.0.1 port=1 password={DSN_PASSWORD}",
    f"host=127.0.0.1 port=1 password='{DSN_PASSWORD} with spaces'",
]


def test_every_header_outside_the_safe_list_is_hidden_in_reprs_dumps_and_status(
        workspace: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    headers = {**CUSTOM_HEADERS, "Content-Type": "application/json"}
    embedding = {**_embedding(server), "headers": headers}
    settings = MemorySettings(embedding=EmbeddingSettings(**embedding))  # type: ignore[arg-type]
    texts = [repr(settings), str(settings), str(settings.model_dump()), settings.model_dump_json()]
    with MemoryIndex.open(workspace, index_path=tmp_path / "h.sqlite", embedding=embedding) as memory:
        texts += [str(memory.status()), str(memory.search("billing").as_dict())]
    for text in texts:
        for value in CUSTOM_HEADERS.values():
            assert value not in text, text
    assert "application/json" in texts[0]  # a safe header is still shown


@pytest.mark.parametrize("dsn", DSN_FORMS)
def test_no_form_of_a_dsn_shows_its_password_in_errors_dumps_or_cli_output(
        dsn: str, tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    from openclaw_memory.errors import StoreError
    from openclaw_memory.postgres import PostgresMemory

    settings = MemorySettings(store={"dsn": dsn})  # type: ignore[arg-type]
    texts = [repr(settings), str(settings.model_dump()), settings.model_dump_json()]
    with pytest.raises(StoreError) as raised:
        PostgresMemory.open(dsn, embedding={"provider": "none"}, store={"connect_timeout_s": 2})
    texts += [str(raised.value), repr(raised.value)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--backend", "postgres", "--dsn", dsn, "--provider", "none",
                     "--workspace", str(tmp_path), "search", "billing"])
    assert code != 0
    texts += [out.getvalue(), err.getvalue()]
    secret = DSN_PASSWORD
    for text in texts:
        assert secret not in text, text
