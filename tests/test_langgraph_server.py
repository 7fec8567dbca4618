"""The deployed graph and store served by a real ``langgraph dev`` (langgraph-cli[inmem]),
driven with the official ``langgraph_sdk`` client, as LangGraph Platform users run them:
every store operation with the user ids and labels users really have, TTLs, clean 4xx answers
for bad input, survival across a restart, two clients at once; on a workspace folder and on
PostgreSQL. The chat model is the real ``ChatOpenAI`` against the scripted server."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from chat_brain import Brain
from openai_server import CHAT_PATH, FakeOpenAIServer
from store_backends import nested_value

pytestmark = pytest.mark.slow

DEPLOYED = Path(__file__).resolve().parents[1] / "integrations" / "deployed"
ODD_IDS = ["auth0|66b2f0", "alice smith", "user:42", "x" * 300]
_START_S = 90.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``langgraph dev`` on a port of its own, restartable with the same environment."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        # A copy of the deployment: the server keeps its own state (.langgraph_api/) in its
        # folder, which must never land in the repository nor carry over between runs.
        self.folder = log.parent / "deployed"
        shutil.copytree(DEPLOYED, self.folder, ignore=shutil.ignore_patterns(".langgraph_api"))
        self.env = env
        self.port = _free_port()
        self.log = log
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        langgraph = str(Path(sys.executable).parent / "langgraph")
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [langgraph, "dev", "--no-browser", "--no-reload", "--allow-blocking",
                 "--port", str(self.port), "--config", str(self.folder / "langgraph.json")],
                cwd=self.folder, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + _START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"langgraph dev exited:\n{self.log.read_text()[-3000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/ok", timeout=2).status_code == 200:
                    return
            time.sleep(0.3)
        raise AssertionError(f"langgraph dev did not start:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@contextlib.contextmanager
def serving(tmp_path: Path, **extra: str) -> Iterator[tuple[Server, Brain]]:
    if shutil.which("langgraph", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("langgraph-cli[inmem] is not installed (pip install -e '.[test]')")
    workspace = tmp_path / "agent-memory"
    with FakeOpenAIServer(dims=16) as chat:
        brain = Brain(tmp_path / "unused.md")
        chat.route(CHAT_PATH, brain)
        env = {**os.environ, "OPENAI_BASE_URL": chat.base_url, "OPENAI_API_KEY": "sk-test",
               "OPENCLAW_MEMORY_WORKSPACE": str(workspace),
               "OPENCLAW_MEMORY_STATE_DIR": str(tmp_path / "state"),
               "OPENCLAW_MEMORY_EMBEDDING__PROVIDER": "none",
               "LANGGRAPH_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false", **extra}
        server = Server(env, tmp_path / "server.log")
        server.start()
        try:
            yield server, brain
        finally:
            server.stop()


def _client(server: Server) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url)


def _ask(client: Any, user: str, question: str = "What does Alice drink?",
         chat_type: str = "direct") -> str:
    result = client.runs.wait(None, "memory_agent",
                              input={"messages": [{"role": "user", "content": question}]},
                              config={"configurable": {"user_id": user, "chat_type": chat_type}})
    return str(result["messages"][-1]["content"])


def _status(call: Any) -> int:
    try:
        call()
    except httpx.HTTPStatusError as exc:
        return exc.response.status_code
    return 200


def _gone(client: Any, namespace: list[str], key: str) -> bool:
    """No such item: the server answers 404 or an empty body, as it does for its own store."""
    try:
        return client.store.get_item(namespace, key) is None
    except httpx.HTTPStatusError as exc:
        return exc.response.status_code == 404


def _put_raw(server: Server, namespace: list[str], key: str, value: Any,
             **extra: Any) -> httpx.Response:
    """The API's own PUT, without the SDK's client-side checks (other clients have none)."""
    body = json.dumps({"namespace": namespace, "key": key, "value": value, **extra})  # ASCII:
    # a lone surrogate travels as its JSON escape, as any client may send it
    return httpx.put(f"{server.url}/store/items", content=body.encode(),
                     headers={"Content-Type": "application/json"}, timeout=30)


def _store_operations(server: Server, client: Any) -> None:
    """Every store operation with the ids users have, a TTL, and bad input."""
    for user in ODD_IDS:
        client.store.put_item(["users", user], "tea", {"content": f"- {user[:20]} drinks green tea."})
    # A TTL is accepted (it answered 500 before), and the next request still works.
    client.store.put_item(["users", "alice"], "otp", {"content": "- The code is 4471."}, ttl=5)
    assert client.store.get_item(["users", "alice"], "otp")["value"]["content"].endswith("4471.")
    for user in ODD_IDS:
        assert client.store.get_item(["users", user], "tea")["value"]["content"].endswith("tea.")
        found = client.store.search_items(["users", user], query="green tea")["items"]
        assert [i["key"] for i in found] == ["tea"] and found[0]["namespace"] == ["users", user]
    listed = {tuple(ns) for ns in client.store.list_namespaces(prefix=["users"])["namespaces"]}
    assert {("users", u) for u in ODD_IDS} <= listed
    client.store.delete_item(["users", "user:42"], "tea")
    assert _gone(client, ["users", "user:42"], "tea")
    # Bad input answers 4xx, and the server goes on answering.
    for namespace, value in ((["users", "a.b"], {"v": 1}), (["users", "deep"], nested_value(150)),
                             (["users", "bad"], {"v": "lone \udcff surrogate"})):
        answer = _put_raw(server, namespace, "k", value)
        assert 400 <= answer.status_code < 500, (namespace, answer.status_code, answer.text)
    assert client.store.get_item(["users", "alice"], "otp") is not None



def test_the_store_through_the_server_takes_any_id_ttls_and_survives_a_restart(
        tmp_path: Path) -> None:
    with serving(tmp_path) as (server, _brain):
        client = _client(server)
        _store_operations(server, client)
        # The deployed graph's memory tools find what was stored for each of these users.
        for user in ODD_IDS[:2]:
            answer = _ask(client, user, f"What does {user} drink?")
            assert "green tea" in answer, answer
        assert "green tea" not in _ask(client, "user:42", "What does user:42 drink?")  # deleted
        assert "green tea" not in _ask(client, "nobody-else", "What does anyone drink?")
        server.stop()
        index_files = list((tmp_path / "state").rglob("*.sqlite"))
        for path in index_files:  # the index is a cache: the files are the memory
            path.unlink()
        server.start()
        client = _client(server)
        for user in ODD_IDS[:2]:
            assert client.store.get_item(["users", user], "tea") is not None
            assert client.store.search_items(["users", user], query="green tea")["items"]


def test_ttl_expiry_and_group_chat_streams_through_the_server(tmp_path: Path) -> None:
    with serving(tmp_path, OPENCLAW_TTL_SWEEP_MINUTES="0.01") as (server, _brain):
        client = _client(server)
        client.store.put_item(["users", "alice"], "tea", {"content": "- Alice drinks green tea."})
        # ttl in minutes, as the API takes it; a fraction keeps the test short.
        response = _put_raw(server, ["users", "alice"], "otp", {"content": "- The code is 4471."},
                            ttl=0.02)
        assert response.status_code < 300, response.text
        assert client.store.get_item(["users", "alice"], "otp") is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _gone(client, ["users", "alice"], "otp"):
            time.sleep(0.3)
        assert _gone(client, ["users", "alice"], "otp")
        workspace = tmp_path / "agent-memory" / "memory" / "users" / "alice"
        deadline = time.monotonic() + 30  # the sweeper removes the expired item's file
        while time.monotonic() < deadline and any("otp" in p.name for p in workspace.iterdir()):
            time.sleep(0.3)
        assert not any("otp" in p.name for p in workspace.iterdir())
        # A group chat's streamed tokens and events carry no citation.
        streamed = []
        for part in client.runs.stream(
                None, "memory_agent",
                input={"messages": [{"role": "user", "content": "What does Alice drink?"}]},
                config={"configurable": {"user_id": "alice", "chat_type": "group"}},
                stream_mode=["messages", "events", "values"]):
            streamed.append(repr(part.data))
        text = "".join(streamed)
        assert "green tea" in text and ".md#L" not in text


def test_two_clients_at_once_keep_their_users_apart(tmp_path: Path) -> None:
    with serving(tmp_path) as (server, _brain):
        errors: list[BaseException] = []

        def client_for(user: str) -> None:
            try:
                client = _client(server)
                for n in range(15):
                    client.store.put_item(["users", user], f"note{n}",
                                          {"content": f"- {user} note number {n} about kestrels."})
                    assert client.store.search_items(["users", user], query="kestrels")["items"]
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=client_for, args=(u,)) for u in ("auth0|a", "auth0|b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not errors, errors
        client = _client(server)
        for user in ("auth0|a", "auth0|b"):
            items = client.store.search_items(["users", user], limit=50)["items"]
            assert len(items) == 15 and all(i["namespace"] == ["users", user] for i in items)


def test_the_postgres_backed_store_through_the_server(tmp_path: Path, pg_dsn: str) -> None:
    with serving(tmp_path, OPENCLAW_MEMORY_STORE__BACKEND="postgres",
                 OPENCLAW_MEMORY_STORE__DSN=pg_dsn,
                 OPENCLAW_MEMORY_STORE__WORKSPACE_NAME="deployed") as (server, _brain):
        client = _client(server)
        _store_operations(server, client)
        assert "green tea" in _ask(client, "alice smith", "What does alice smith drink?")
        server.stop()
        server.start()
        client = _client(server)
        assert client.store.get_item(["users", "auth0|66b2f0"], "tea") is not None
