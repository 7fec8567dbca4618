"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests, with scripted misbehaviour.

The client under test talks real HTTP to a ``ThreadingHTTPServer`` on an ephemeral port;
only the server's answers are scripted. Each path has a default behaviour and a FIFO queue
of one-shot behaviours consumed by the next requests::

    with FakeOpenAIServer(dims=8) as server:
        server.script(rate_limited(retry_after="2"), server_error(500))  # then normal replies
        ...use server.base_url ("http://127.0.0.1:<port>/v1")...
        server.requests[0].json["input"]

A behaviour is any ``Callable[[RecordedRequest], Reply]``. To serve another endpoint (e.g.
chat completions) register a default with ``server.route("/v1/chat/completions", fn)`` and
queue one-shot replies with ``server.script(..., path="/v1/chat/completions")``;
:func:`json_reply` builds a JSON answer. For chat completions, :func:`chat_reply` answers one
assistant message (text and/or :func:`wire_tool_call` tool calls) in the wire format, as
Server-Sent Events when the request asked to stream; :func:`chat_completion` is the same
as a one-shot behaviour.

Use it in a test module with::

    @pytest.fixture
    def server() -> Iterator[FakeOpenAIServer]:
        with FakeOpenAIServer() as running:
            yield running
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "CHAT_PATH",
    "Behaviour",
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "chat_completion",
    "chat_reply",
    "drip",
    "embeddings",
    "fake_vector",
    "insufficient_quota",
    "json_reply",
    "malformed_json",
    "missing_data",
    "mixed_dims",
    "non_numeric",
    "rate_limited",
    "refuses_packed",
    "reported_usage",
    "server_error",
    "slow",
    "wire_tool_call",
    "wrong_count",
    "wrong_dims",
]

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it. Header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass(frozen=True)
class Reply:
    """What to send back; ``delay`` seconds pass before anything is written."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drip: float = 0.0
    """Seconds between body bytes (a server that answers one byte at a time); 0: at once."""


Behaviour = Callable[[RecordedRequest], Reply]


def json_reply(payload: object, status: int = 200, **headers: str) -> Reply:
    return Reply(status, json.dumps(payload).encode(), {"Content-Type": "application/json", **headers})


def fake_vector(text: str, dims: int) -> list[float]:
    """Deterministic pseudo-embedding of ``text`` (unit length), seeded by its sha256."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _inputs(request: RecordedRequest) -> list[str]:
    raw = (request.json or {}).get("input", [])
    return [raw] if isinstance(raw, str) else list(raw)


def _embedding_body(request: RecordedRequest, vectors: list[Any]) -> dict[str, Any]:
    """The response body; vectors as base64 little-endian float32 when the request asks for
    ``encoding_format: base64`` (as OpenAI answers), else as lists of numbers."""
    packed = (request.json or {}).get("encoding_format") == "base64"
    return {
        "object": "list",
        "model": (request.json or {}).get("model", "fake"),
        "data": [{"object": "embedding", "index": i,
                  "embedding": _packed(v) if packed else v} for i, v in enumerate(vectors)],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


def _packed(vector: list[Any]) -> Any:
    if not all(isinstance(x, (int, float)) for x in vector):
        return vector  # (a malformed vector stays malformed)
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()


def embeddings(
    *, dims: int | None = None, shuffle: bool = False, delay: float = 0.0, default_dims: int = 8
) -> Behaviour:
    """Normal answer: ``fake_vector`` per input, each with its ``index``.

    Width: ``dims``, else the request's ``dimensions``, else ``default_dims``. ``shuffle``
    returns the items in reverse order (clients must re-order by ``index``).
    """

    def behave(request: RecordedRequest) -> Reply:
        width = dims or (request.json or {}).get("dimensions") or default_dims
        body = _embedding_body(request, [fake_vector(t, width) for t in _inputs(request)])
        if shuffle:
            body["data"].reverse()
        return (
            json_reply(body)
            if not delay
            else Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"}, delay)
        )

    return behave


def _error(status: int, message: str, code: str | None, kind: str, **headers: str) -> Reply:
    payload = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json_reply(payload, status, **headers)


def rate_limited(*, retry_after: str | None = None, retry_after_ms: str | None = None) -> Behaviour:
    """429 rate limit, optionally with ``Retry-After`` / ``retry-after-ms``."""
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    if retry_after_ms is not None:
        headers["retry-after-ms"] = retry_after_ms
    reply = _error(429, "Rate limit reached for requests", "rate_limit_exceeded", "requests", **headers)
    return lambda request: reply


def insufficient_quota() -> Behaviour:
    reply = _error(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        "insufficient_quota",
    )
    return lambda request: reply


def server_error(status: int = 500) -> Behaviour:
    reply = _error(status, "The server had an error while processing your request.", None, "server_error")
    return lambda request: reply


def drip(seconds_per_byte: float) -> Behaviour:
    """A normal answer whose body arrives one byte every ``seconds_per_byte``."""
    normal = embeddings()

    def behave(request: RecordedRequest) -> Reply:
        reply = normal(request)
        return Reply(reply.status, reply.body, reply.headers, drip=seconds_per_byte)

    return behave


def refuses_packed(status: int = 400) -> Behaviour:
    """A server that cannot send base64 (vLLM before 0.6, some gateways): a request asking
    for it gets HTTP ``status``; one asking for floats a normal answer."""
    normal = embeddings()

    def behave(request: RecordedRequest) -> Reply:
        if (request.json or {}).get("encoding_format") == "base64":
            return _error(status, "base64 encoding is not currently supported", None,
                          "BadRequestError")
        return normal(request)

    return behave


def slow(seconds: float) -> Behaviour:
    """A normal answer, but only after ``seconds`` (longer than the client timeout)."""
    return embeddings(delay=seconds)


def malformed_json() -> Behaviour:
    return lambda request: Reply(200, b'{"object": "list", "data": [', {"Content-Type": "application/json"})


def missing_data() -> Behaviour:
    return lambda request: json_reply({"object": "list", "model": "fake", "usage": {}})


def wrong_dims(dims: int) -> Behaviour:
    return embeddings(dims=dims)


def mixed_dims() -> Behaviour:
    """Vectors of two different widths in one response."""

    def behave(request: RecordedRequest) -> Reply:
        texts = _inputs(request)
        vectors = [fake_vector(t, 8 if i == 0 else 9) for i, t in enumerate(texts)]
        return json_reply(_embedding_body(request, vectors))

    return behave


def wrong_count() -> Behaviour:
    """One embedding fewer than inputs."""

    def behave(request: RecordedRequest) -> Reply:
        vectors = [fake_vector(t, 8) for t in _inputs(request)][:-1]
        return json_reply(_embedding_body(request, vectors))

    return behave


def non_numeric() -> Behaviour:
    def behave(request: RecordedRequest) -> Reply:
        vectors = [["0.1", "x"] for _ in _inputs(request)]
        return json_reply(_embedding_body(request, vectors))

    return behave


def wire_tool_call(name: str, arguments: Mapping[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """A tool call as an assistant message carries it in the chat-completions wire format."""
    return {
        "id": call_id or f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
    }


def chat_reply(
    request: RecordedRequest, content: str | None = None, tool_calls: list[dict[str, Any]] | None = None
) -> Reply:
    """One assistant message; streamed as SSE chunks when the request has ``stream: true``."""
    body = request.json or {}
    model = body.get("model", "fake-chat")
    finish = "tool_calls" if tool_calls else "stop"
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return json_reply({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": reported_usage(request, content, tool_calls),
        })
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in _pieces(content or "")]
    for i, call in enumerate(tool_calls or []):
        head = {"index": i, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}
        deltas += [{"tool_calls": [head]},
                   {"tool_calls": [{"index": i, "function": {"arguments": call["function"]["arguments"]}}]}]
    events = [_chunk(model, delta, None) for delta in deltas] + [_chunk(model, {}, finish)]
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = reported_usage(request, content, tool_calls)
        events.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                       "model": model, "choices": [], "usage": usage})
    payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return Reply(200, payload.encode(), {"Content-Type": "text/event-stream"})


def reported_usage(request: RecordedRequest, content: str | None,
                   tool_calls: list[dict[str, Any]] | None) -> dict[str, int]:
    """Token usage as a real server reports it: the whole request (system prompt and tool
    schemas included) at about 4 bytes a token, plus the answer."""
    prompt = max(1, len(request.body) // 4)
    completion = max(1, (len(content or "") + len(json.dumps(tool_calls or []))) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _pieces(text: str) -> list[str]:
    """Word-sized pieces (whitespace kept), like a model streaming tokens."""
    pieces: list[str] = []
    for word in text.split(" "):
        pieces.append(word if not pieces else " " + word)
    return [p for p in pieces if p]


def _chunk(model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def chat_completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> Behaviour:
    """A one-shot behaviour answering with this assistant message."""
    return lambda request: chat_reply(request, content, tool_calls)


class FakeOpenAIServer:
    """The server: scriptable replies, recorded requests, and a count of requests in flight."""

    def __init__(self, *, dims: int = 8) -> None:
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._routes: dict[str, Behaviour] = {"/v1/embeddings": embeddings(default_dims=dims)}
        self.dripped = 0
        """Body bytes sent by ``drip`` replies so far."""
        self.trace_runs: dict[str, dict[str, Any]] = {}
        """Runs a LangSmith client posted here (``Client(api_url=server.url)``), by id."""
        self._queues: dict[str, deque[Behaviour]] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a handler sleeping out a timeout must not block
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting --------------------------------------------------------------------------
    def route(self, path: str, behaviour: Behaviour) -> None:
        """Set the default behaviour of ``path`` (used when its queue is empty)."""
        with self._lock:
            self._routes[path] = behaviour

    def script(self, *behaviours: Behaviour, path: str = "/v1/embeddings") -> None:
        """Queue one-shot behaviours for the next requests to ``path``, in order."""
        with self._lock:
            self._queues.setdefault(path, deque()).extend(behaviours)

    def requests_to(self, path: str = "/v1/embeddings") -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    # -- called by the handler --------------------------------------------------------------
    def _begin(self, request: RecordedRequest) -> Behaviour | None:
        if request.path == "/info" or request.path.startswith("/runs"):
            return self._tracing(request)
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            queue = self._queues.get(request.path)
            if queue:
                return queue.popleft()
            return self._routes.get(request.path)

    def _tracing(self, request: RecordedRequest) -> Behaviour:
        """LangSmith's run endpoints, enough for its client: runs are kept in ``trace_runs``."""
        if request.path.startswith("/runs") and request.method in ("POST", "PATCH"):
            body = request.json or {}
            run_id = body.get("id") or request.path.rsplit("/", 1)[-1]
            with self._lock:
                self.trace_runs.setdefault(str(run_id), {}).update(
                    {k: v for k, v in body.items() if v is not None})
        with self._lock:
            self.in_flight += 1  # balanced by _end like every other request
        return lambda _request: json_reply({})

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def do_GET(self) -> None:
        self.do_POST("GET")

    def do_PATCH(self) -> None:
        self.do_POST("PATCH")

    def do_POST(self, method: str = "POST") -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = RecordedRequest(
            method,
            self.path.split("?")[0],
            {k.lower(): v for k, v in self.headers.items()},
            self.rfile.read(length),
        )
        owner: FakeOpenAIServer = self.server.owner
        behaviour = owner._begin(request)
        ended = False
        try:
            reply = (
                behaviour(request)
                if behaviour
                else json_reply({"error": {"message": f"no route {request.path}"}}, 404)
            )
            if reply.delay:
                time.sleep(reply.delay)
            # Counted out before the reply is written: a client that has read the whole body
            # may send its next request before this thread gets past the write, and counting
            # the two at once would blame the client for the server's lag.
            owner._end()
            ended = True
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to answer
        finally:
            if not ended:
                owner._end()

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if not reply.drip:
            self.wfile.write(reply.body)
            return
        owner: FakeOpenAIServer = self.server.owner
        for byte in reply.body:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            owner.dripped += 1
            time.sleep(reply.drip)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean
