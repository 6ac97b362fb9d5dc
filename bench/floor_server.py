"""The floor bench's model server: OpenAI chat completions over keep-alive HTTP/1.1, on one
asyncio loop in its own thread (`bench/floor.py`).

Why not `tests/fake_openai.py`: that server is a thread per connection, which costs the
machine's two cores more than the client it serves at 1,000 requests, and its answers wait in
`time.sleep` on a thread each. Here a 200 ms answer is an `asyncio.sleep`, every connection
stays open for as many requests as the client sends (HTTP/1.1 keep-alive, as every real model
server), and the listen backlog is 1,024, so 64 connections opened at once are all accepted
(socketserver's default of 5 drops SYNs, which a client then retries a second later).

It answers `POST …/chat/completions` by echoing the last user message (exactly what
`tests/fake_openai.py` answers), `GET …/models` with one model, and counts requests,
connections and the most requests in flight at once, so the bench can check that every tool
sent exactly one request a task over the connections it says it keeps.
"""

from __future__ import annotations

import asyncio
import json
import resource
import threading
import time
from typing import Any

BACKLOG = 1024
MODEL = "fake-model"


class FloorServer:
    """Use as a context manager; `latency` can change between runs."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.requests = 0
        self.connections = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self._cpu_at_reset = 0.0
        self.first_at: float | None = None
        """`time.monotonic()` when the first request since `reset` arrived."""
        self.last_at: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def reset(self) -> None:
        """Zero the counters between two measured runs."""
        self.requests = self.connections = self.peak_in_flight = 0
        self.first_at = self.last_at = None
        self._cpu_at_reset = self._thread_cpu()

    @property
    def cpu_s(self) -> float:
        """CPU the server's thread spent since `reset` (it shares the machine's two cores
        with the client measured)."""
        return self._thread_cpu() - self._cpu_at_reset

    def _thread_cpu(self) -> float:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(_thread_cpu(), self._loop).result(timeout=10)

    def __enter__(self) -> FloorServer:
        self._thread = threading.Thread(target=self._serve, name="floor-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the floor server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        loop, server = self._loop, self._server
        if loop is not None and server is not None:
            loop.call_soon_threadsafe(server.close)
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)

    # -- the loop's thread ---------------------------------------------------------------------
    def _serve(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        self._server = loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=BACKLOG)
        )
        self._port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                method, path, headers = _parse_head(head)
                body = await _read_body(reader, headers)
                self.requests += 1
                if self.first_at is None:
                    self.first_at = time.monotonic()
                self.last_at = time.monotonic()
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
                try:
                    if self.latency:
                        await asyncio.sleep(self.latency)
                    status, payload = _answer(method, path, body)
                finally:
                    self.in_flight -= 1
                close = headers.get("connection", "").lower() == "close"
                writer.write(
                    b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n%s\r\n"
                    % (
                        status,
                        b"OK" if status == 200 else b"Not Found",
                        len(payload),
                        b"Connection: close\r\n" if close else b"",
                    )
                    + payload
                )
                if close:
                    return
        finally:
            writer.close()


async def _thread_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_THREAD)
    return ru.ru_utime + ru.ru_stime


def _parse_head(head: bytes) -> tuple[str, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    return method, target.split("?", 1)[0], headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = int(headers.get("content-length") or 0)
    return await reader.readexactly(length) if length else b""


def _answer(method: str, path: str, raw: bytes) -> tuple[int, bytes]:
    if path.endswith("/models"):
        models = {"object": "list", "data": [{"id": MODEL, "object": "model"}]}
        return 200, json.dumps(models).encode()
    if not path.endswith("/chat/completions") or method != "POST":
        return 404, json.dumps({"error": {"message": f"no route for {path}"}}).encode()
    try:
        body: Any = json.loads(raw) if raw else {}
    except ValueError:
        body = {}
    last_user = ""
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            content = message.get("content")
            last_user = content if isinstance(content, str) else json.dumps(content)
    reply = {
        "id": "chatcmpl-floor",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or MODEL),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": last_user},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return 200, json.dumps(reply).encode()
