"""A local HTTP server that speaks the OpenAI wire format, for provider tests and `bench/`.

The openai SDK 3.x sends requests through its own httpx fork, so patching `httpx` sees nothing:
this server is tested against at the socket instead (style.md rule 9). It listens on
127.0.0.1 with an ephemeral port, records every request (headers included, so auth can be
checked) and answers from a FIFO of scripted replies, falling back to a default behaviour
(echo the last user message, with usage).

    with FakeOpenAI() as srv:
        srv.queue(rate_limited(retry_after=0.2), text("hello", usage=(12, 3)))
        client = AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        ...
        assert srv.count("/chat/completions") == 2

Like the real service, it refuses a strict schema outside the structured-outputs subset
(`schemas="openai"`, the default; `"azure"` is Azure OpenAI's narrower list; `"any"` accepts
every schema, as llama.cpp's server does): HTTP 400 with OpenAI's error body naming
`response_format` (or the strict tool's `parameters`), see `tests/strict_schema.py`. Every
refusal is kept in `refusals`; a test that did not expect one fails (tests/conftest.py).

Any path ending in `/chat/completions`, `/embeddings` or `/models` is served, so Azure
deployment URLs (`/openai/deployments/<d>/chat/completions?api-version=...`) and Foundry project
URLs (`/api/projects/<p>/openai/v1/chat/completions`) work against the same server.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from tests.strict_schema import refusal

__all__ = [
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
    "error",
    "malformed",
    "rate_limited",
    "slow",
    "sse_events",
    "text",
    "tool_calls",
    "trickle",
]


@dataclass
class Reply:
    """One scripted answer. `body` is JSON-encoded when it is a dict/list, sent raw otherwise."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (a slow server, or a client-side timeout)."""
    token_gap: float = 0.0
    """Streamed answers only: seconds between two chunks (a slow server that progresses)."""
    stall: float = 0.0
    """Streamed answers only: seconds of silence after the first chunk (a stuck server)."""


@dataclass
class RecordedRequest:
    """What the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """Parsed JSON body, or None."""
    at: float
    """time.monotonic() when the request arrived."""


Handler = Callable[[RecordedRequest], "Reply | None"]
Schemas = Literal["openai", "azure", "any"]
STARTED: list[FakeOpenAI] = []
"""Every fake made in this process, in order (the conftest checks their refusals per test)."""


def text(
    content: str,
    *,
    usage: tuple[int, int] = (10, 5),
    finish_reason: str = "stop",
    model: str = "fake-model",
) -> Reply:
    """A normal chat completion."""
    return Reply(
        body=_completion({"role": "assistant", "content": content}, finish_reason, usage, model)
    )


def tool_calls(
    calls: list[tuple[str, dict[str, Any]]],
    *,
    usage: tuple[int, int] = (10, 5),
    model: str = "fake-model",
) -> Reply:
    """A completion that asks for tool calls: `[(name, arguments), ...]`."""
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }
    return Reply(body=_completion(message, "tool_calls", usage, model))


def error(
    status: int,
    message: str = "error",
    *,
    code: str | None = None,
    type_: str = "invalid_request_error",
    headers: dict[str, str] | None = None,
) -> Reply:
    """An OpenAI-style error body with the given HTTP status."""
    body = {"error": {"message": message, "type": type_, "param": None, "code": code}}
    return Reply(status=status, body=body, headers=dict(headers or {}))


def rate_limited(retry_after: float | None = None, *, retry_after_ms: float | None = None) -> Reply:
    """A 429 with `Retry-After` (seconds) and/or `retry-after-ms`."""
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    return error(
        429, "Rate limit reached", code="rate_limit_exceeded", type_="requests", headers=headers
    )


def malformed(status: int = 200) -> Reply:
    """A body that claims to be JSON and is not."""
    return Reply(status=status, body=b'{"id": "chatcmpl-1", "choices": [')


def slow(delay: float, reply: Reply | None = None) -> Reply:
    """`reply` (default: echo) after `delay` seconds."""
    base = reply or Reply()
    return Reply(status=base.status, body=base.body, headers=base.headers, delay=delay)


def trickle(content: str, gap: float, *, stall: float = 0.0) -> Reply:
    """`content` that, asked to stream, comes one word every `gap` seconds (after the first
    word, `stall` seconds of silence); asked plainly, it comes whole after the same time."""
    return Reply(body=text(content, usage=(10, len(content.split()))).body, token_gap=gap,
                 stall=stall)  # fmt: skip


def sse_events(completion: dict[str, Any]) -> list[bytes]:
    """A chat completion as the server-sent events llama.cpp's server streams: a role chunk,
    one chunk per word (tool calls: name, then arguments), the finish_reason, the usage."""
    base = {k: completion[k] for k in ("id", "created", "model") if k in completion}
    base["object"] = "chat.completion.chunk"
    choice = (completion.get("choices") or [{}])[0]
    message = choice.get("message") or {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": None})]
    words = (message.get("content") or "").split(" ")
    chunks += [chunk({"content": w if i == 0 else f" {w}"}) for i, w in enumerate(words) if w]
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call["function"]
        head = {"index": i, "id": call["id"], "type": "function", "function": {"name": fn["name"]}}
        chunks.append(chunk({"tool_calls": [head]}))
        args = {"index": i, "function": {"arguments": fn["arguments"]}}
        chunks.append(chunk({"tool_calls": [args]}))
    chunks.append(chunk({}, choice.get("finish_reason") or "stop"))
    chunks.append({**base, "choices": [], "usage": completion.get("usage")})
    return [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks] + [b"data: [DONE]\n\n"]


def _streamable(completion: dict[str, Any]) -> list[bytes] | None:
    """The body's events when it is a completion that can be streamed; None for anything else
    (a broken body a test serves on purpose goes out as it is, as a misbehaving gateway
    sends it)."""
    try:
        return sse_events(completion)
    except (AttributeError, KeyError, TypeError, IndexError):
        return None


def _completion(
    message: dict[str, Any], finish_reason: str, usage: tuple[int, int], model: str
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


def _embedding(text_: str, dim: int = 8) -> list[float]:
    digest = hashlib.sha256(text_.encode()).digest()
    vec = [b - 128.0 for b in digest[:dim]]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeOpenAI:
    """The server. Use as a context manager, or `start()` / `stop()`."""

    def __init__(
        self,
        *,
        usage: tuple[int, int] = (10, 5),
        model: str = "fake-model",
        latency: float = 0.0,
        max_in_flight: int | None = None,
        retry_after: float | None = None,
        schemas: Schemas = "openai",
    ) -> None:
        """
        Args:
            usage: (prompt, completion) tokens reported by default answers.
            model: model name of default answers and `GET /models`.
            latency: seconds every answer takes (a queued reply's own delay adds to it).
            max_in_flight: act like a rate-limited service: a request arriving while this many
                are being served gets a 429 (with `retry_after` as `Retry-After` when given).
            retry_after: the `Retry-After` of those 429s.
            schemas: which strict schemas are refused: OpenAI's subset, Azure's, or none
                ("any": a llama.cpp-like server whose grammar takes any schema).
        """
        self.default_usage = usage
        self.model = model
        self.latency = latency
        self.max_in_flight = max_in_flight
        self.retry_after = retry_after
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rejected = 0
        self.requests: list[RecordedRequest] = []
        self.schemas: Schemas = schemas
        self.refusals: list[RecordedRequest] = []
        """Chat requests refused for a schema outside the strict subset."""
        self.expect_refusals = False
        """Set by a test that sends such schemas on purpose."""
        STARTED.append(self)
        self.handler: Handler | None = None
        """Optional function answering any request it returns a Reply for (after the queue)."""
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        owner = self

        class _H(_RequestHandler):
            server_owner = owner

        self._server = _Server(("127.0.0.1", 0), _H)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (no path)."""
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, `<url>/v1`."""
        return f"{self.url}/v1"

    # -- scripting and inspection ------------------------------------------------------------
    def queue(self, *replies: Reply) -> None:
        """Answer the next requests (chat or embeddings) with these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    def count(self, path_suffix: str = "/chat/completions") -> int:
        """How many requests arrived for paths ending with `path_suffix`."""
        return sum(1 for r in self.requests if r.path.endswith(path_suffix))

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def last(self) -> RecordedRequest:
        return self.requests[-1]

    # -- serving -----------------------------------------------------------------------------
    def _admit(self, req: RecordedRequest) -> Reply | None:
        """Count the request in; a 429 when the server is "full" (max_in_flight)."""
        with self._lock:
            if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
                self.requests.append(req)
                self.rejected += 1
                return rate_limited(self.retry_after)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return None

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _next_reply(self, req: RecordedRequest) -> Reply:
        scriptable = req.path.endswith(("/chat/completions", "/embeddings"))
        refused = self._refused(req)
        with self._lock:
            self.requests.append(req)
            if refused is not None:
                self.refusals.append(req)
                return refused
            scripted = self._queue.popleft() if self._queue and scriptable else None
        if scripted is not None:
            if scripted.body is None and scripted.status == 200:
                return Reply(
                    body=self._default(req).body, headers=scripted.headers, delay=scripted.delay
                )
            return scripted
        if self.handler is not None:
            answer = self.handler(req)
            if answer is not None and answer.body is None and answer.status == 200:
                # A bodiless reply (e.g. `slow(0.2)`) means "the default answer, shaped so".
                return Reply(
                    body=self._default(req).body, headers=answer.headers, delay=answer.delay
                )
            if answer is not None:
                return answer
        return self._default(req)

    def _refused(self, req: RecordedRequest) -> Reply | None:
        """The service's 400 for a strict schema outside its subset (before any script)."""
        if self.schemas == "any" or not req.path.endswith("/chat/completions"):
            return None
        if not isinstance(req.body, dict):
            return None
        body = refusal(req.body, self.schemas)
        return None if body is None else Reply(status=400, body=body)

    def _default(self, req: RecordedRequest) -> Reply:
        body = req.body if isinstance(req.body, dict) else {}
        if req.path.endswith("/models"):
            return Reply(body={"object": "list", "data": [{"id": self.model, "object": "model"}]})
        if req.path.endswith("/embeddings"):
            inputs = body.get("input", [])
            inputs = [inputs] if isinstance(inputs, str) else list(inputs)
            data = [
                {"object": "embedding", "index": i, "embedding": _embedding(str(t))}
                for i, t in enumerate(inputs)
            ]
            tokens = sum(max(1, len(str(t)) // 4) for t in inputs)
            return Reply(
                body={
                    "object": "list",
                    "data": data,
                    "model": body.get("model", self.model),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                }
            )
        if req.path.endswith("/chat/completions"):
            last_user = ""
            for m in body.get("messages", []):
                if m.get("role") == "user":
                    content = m.get("content")
                    last_user = content if isinstance(content, str) else json.dumps(content)
            model = str(body.get("model") or self.model)
            return text(last_user, usage=self.default_usage, model=model)
        return error(404, f"no route for {req.path}", code="not_found")


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: a client opening 64 connections at once
    # (concurrency 64) had all but a few SYNs dropped and retried a second later, which no
    # real server does (uvicorn and llama.cpp's server listen with a backlog of 2048 / 512).
    request_queue_size = 512


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall
    server_owner: FakeOpenAI
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._serve(body)

    def _serve(self, body: Any) -> None:
        parts = urlsplit(self.path)
        req = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            at=time.monotonic(),
        )
        owner = self.server_owner
        rejected = owner._admit(req)
        if rejected is not None:
            reply = rejected
        else:
            try:
                reply = owner._next_reply(req)
                if reply.delay or owner.latency:
                    time.sleep(reply.delay + owner.latency)
            finally:
                owner._leave()
        wants_stream = isinstance(body, dict) and body.get("stream") is True
        answer = reply.body if reply.status == 200 and isinstance(reply.body, dict) else {}
        events = _streamable(answer) if wants_stream and answer.get("choices") else None
        if events is not None:  # as a real server does
            self._stream(reply, events)
            return
        if reply.token_gap or reply.stall:  # asked plainly: the same time, then all of it
            time.sleep(reply.stall + reply.token_gap * len(sse_events(reply.body)))
        if isinstance(reply.body, bytes):
            payload = reply.body
        elif isinstance(reply.body, str):
            payload = reply.body.encode()
        else:
            payload = json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            headers = dict(reply.headers)
            if not any(k.lower() == "content-type" for k in headers):
                headers = {"Content-Type": "application/json", **headers}
            headers["Content-Length"] = str(len(payload))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test): nothing to answer.
            self.close_connection = True

    def _stream(self, reply: Reply, events: list[bytes]) -> None:
        """The reply as server-sent events, chunked, `token_gap` apart. With no gap and no
        stall every event is ready at once and goes out in one write, as a server's socket
        sends what its model made faster than it could be sent: one write and flush per event
        cost this process (shared by both sides of `bench.optimizer_efficiency`) 0.3 ms of
        CPU per answer, time a streaming client waited for."""
        chunks = [f"{len(e):x}\r\n".encode() + e + b"\r\n" for e in events] + [b"0\r\n\r\n"]
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if not (reply.stall or reply.token_gap):
                self.wfile.write(b"".join(chunks))
                self.wfile.flush()
                return
            for i, chunk in enumerate(chunks):
                if i == 1 and reply.stall:
                    time.sleep(reply.stall)
                elif 0 < i < len(events) and reply.token_gap:
                    time.sleep(reply.token_gap)
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionResetError, BrokenPipeError, TimeoutError):
            self.close_connection = True
