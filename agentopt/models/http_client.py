"""A lean HTTP/1.1 client for the chat-completions hot path of OpenAI-compatible servers.

Measured on this machine against `tests/fake_openai.py` (2,000 requests, 16 in flight, CPU of
the client process only): the openai SDK's `chat.completions.create` costs 1.7 ms per request
(the TypedDict transform of the parameters alone re-walks the annotations every call), the SDK's
own httpx client with a fixed pool 0.8 ms (its pool checks every pooled connection on each
request), this client 0.08 ms — and importing it costs nothing, where the SDK costs 0.6 s of
startup. It does only what the hot path needs: a POST of a JSON body already encoded, keep-alive
connections reused across calls, `Content-Length`, chunked and read-to-close bodies, TLS.

What it does not do is done by the SDK, which stays the path for everything else
(`direct_route`): a proxy configured in the environment, Azure and Foundry (token refresh,
deployment URLs, api-version), macOS TLS (whose Python has no system trust store), or
`AGENTOPT_HTTP_CLIENT=sdk`. Timeouts and retries are the call layer's: a cancelled request
closes its connection, so a half-read answer never reaches the next call.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from agentopt import __version__
from agentopt.core import limits

MAX_IDLE = 128
"""Idle keep-alive connections kept per client (more than any pool's concurrency here)."""
MAX_HEAD = 64 * 1024
"""A status line plus headers longer than this is not an HTTP answer we can use."""
USER_AGENT = f"agentopt/{__version__}"


def direct_route(base_url: str, env: Mapping[str, str]) -> bool:
    """Whether this client may talk to `base_url` itself: http, or https where Python has the
    system's trust store; no `*_proxy` variable applies to the host (the SDK honours those);
    `AGENTOPT_HTTP_CLIENT` is not `sdk`."""
    if env.get("AGENTOPT_HTTP_CLIENT", "").strip().lower() == "sdk":
        return False
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    if parts.scheme == "https" and sys.platform == "darwin":
        return False
    proxies = {
        key.lower()[: -len("_proxy")]: value
        for key, value in env.items()
        if key.lower().endswith("_proxy") and value
    }
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return True
    no_proxy = proxies.get("no", "")
    if not no_proxy:
        return False
    from urllib.request import proxy_bypass_environment  # type: ignore[attr-defined]

    return bool(proxy_bypass_environment(parts.hostname, {"no": no_proxy}))


class HTTPStatusError(Exception):
    """A non-2xx answer, shaped like the SDK's `APIStatusError` (status_code, body, code,
    message, response.headers) so `models.classify` reads both the same way."""

    def __init__(self, status: int, headers: dict[str, str], raw: bytes) -> None:
        text = raw.decode("utf-8", errors="replace").strip()
        message = f"Error code: {status}"
        body: Any = text
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            body = parsed.get("error", parsed)
            detail = body.get("message") if isinstance(body, dict) else None
            if isinstance(detail, str) and detail:
                message += f" - {detail}"
        elif parsed is not None:
            body = parsed
        super().__init__(message)
        self.status_code = status
        self.body = body
        self.message = message
        code = body.get("code") if isinstance(body, dict) else None
        self.code = str(code) if code is not None else None
        self.response = _Headers(headers)


class BodyTooLarge(Exception):
    """An answer body over `core.limits.max_body_bytes`: the connection is closed at once."""

    def __init__(self, size: int) -> None:
        super().__init__(f"the answer body is over {size} bytes")
        self.size = size


@dataclass(frozen=True)
class _Headers:
    headers: dict[str, str]


@dataclass
class Answer:
    """One HTTP answer: status, lower-cased headers, body bytes."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Connection(asyncio.Protocol):
    """One keep-alive connection; parses one answer at a time into `Answer`."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.received_any = False
        self._buf = bytearray()
        self._waiter: asyncio.Future[Answer] | None = None
        self._head: tuple[int, dict[str, str]] | None = None
        self._length: int | None = None
        self._chunked = False
        self._body = bytearray()
        """A chunked answer's body so far (its chunks leave `_buf` as each one completes)."""
        self._until_close = False
        self.keep_alive = True
        self.on_data: Callable[[bytes], None] | None = None

    # -- asyncio.Protocol --------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.received_any = True
        self._buf += data
        if self.on_data is not None:
            self.on_data(data)
        if self._waiter is not None and not self._waiter.done():
            try:
                self._parse()
            except BodyTooLarge as exc:  # stop reading: the rest is never held
                self.keep_alive = False
                self._waiter.set_exception(exc)
                self.close()
            except ValueError as exc:
                self.keep_alive = False
                self._waiter.set_exception(ConnectionError(f"malformed HTTP answer: {exc}"))
        elif len(self._buf) > limits.max_body_bytes():  # unsolicited and endless
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._head is not None and self._until_close:
            status, headers = self._head
            waiter.set_result(Answer(status, headers, bytes(self._buf)))
            return
        waiter.set_exception(
            ConnectionError(f"the server closed the connection{f' ({exc})' if exc else ''}")
        )

    # -- one exchange -------------------------------------------------------------------------
    async def exchange(
        self, request: bytes, on_data: Callable[[bytes], None] | None = None
    ) -> Answer:
        assert self.transport is not None
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        self.received_any = False
        self.on_data = on_data
        self.transport.write(request)
        try:
            return await self._waiter
        finally:
            self._waiter = None
            self.on_data = None

    def _parse(self) -> None:
        assert self._waiter is not None
        while self._head is None:
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEAD:
                    raise ValueError("the headers never end")
                return
            head = bytes(self._buf[:end]).decode("latin-1")
            del self._buf[: end + 4]
            status, headers, version = _parse_head(head)
            if 100 <= status < 200:
                continue  # an interim answer (100 Continue): the real one follows
            self._head = (status, headers)
            self.keep_alive = _keeps_alive(version, headers)
            self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            self._body = bytearray()
            declared = headers.get("content-length")
            self._length = int(declared) if declared is not None and not self._chunked else None
            no_body = status in (204, 304)
            self._until_close = not self._chunked and self._length is None and not no_body
            if self._until_close:
                self.keep_alive = False
        status, headers = self._head
        limit = limits.max_body_bytes()
        held = len(self._buf) + len(self._body)
        if (self._length or 0) > limit or held > limit + MAX_HEAD:
            raise BodyTooLarge(max(self._length or 0, held))
        body: bytes | None
        if self._chunked:
            body = self._dechunk()
        elif self._until_close:
            return  # the body ends when the connection does (connection_lost)
        else:
            size = self._length or 0
            if len(self._buf) < size:
                return
            body = bytes(self._buf[:size])
            del self._buf[:size]
        if body is None:
            return
        self._head = None
        self._waiter.set_result(Answer(status, headers, body))

    def _dechunk(self) -> bytes | None:
        """The whole chunked body once it has all arrived (None until then).

        Each complete chunk moves from `_buf` to `_body` as it arrives, so a stream of
        hundreds of events (one per token) is read once, not from its start on every piece
        the socket hands over."""
        buf = self._buf
        while True:
            line_end = buf.find(b"\r\n")
            if line_end < 0:
                return None
            size = int(bytes(buf[:line_end]).split(b";", 1)[0].strip() or b"0", 16)
            start = line_end + 2
            if size == 0:
                trailer_end = buf.find(b"\r\n\r\n", line_end)
                if trailer_end < 0:
                    return None
                del buf[: trailer_end + 4]
                body, self._body = bytes(self._body), bytearray()
                return body
            if len(buf) < start + size + 2:
                return None
            self._body += buf[start : start + size]
            del buf[: start + size + 2]

    @property
    def unsolicited(self) -> bool:
        """Whether the server sent something while no request was waiting."""
        return bool(self._buf) and self._waiter is None

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def _parse_head(head: str) -> tuple[int, dict[str, str], str]:
    lines = head.split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError(f"not an HTTP status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            continue
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return int(parts[1]), headers, parts[0]


def _keeps_alive(version: str, headers: dict[str, str]) -> bool:
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return "keep-alive" in connection
    return "close" not in connection


@dataclass
class LeanClient:
    """POSTs JSON to one server over reused keep-alive connections.

    Args:
        base_url: the OpenAI-style base URL (`http://host:port/v1`).
        headers: sent with every request (authorization, configured headers).
    """

    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    _idle: list[_Connection] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {self.base_url!r}")
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        self._prefix = parts.path.rstrip("/")
        default_port = self._port == (443 if self._tls else 80)
        host = f"[{self._host}]" if ":" in self._host else self._host
        fixed = {
            "host": host if default_port else f"{host}:{self._port}",
            "user-agent": USER_AGENT,
            "accept": "application/json",
            "content-type": "application/json",
            **{k.lower(): v for k, v in self.headers.items()},
        }
        for name, value in fixed.items():
            if any(ch in f"{name}{value}" for ch in "\r\n\0"):
                raise ValueError(f"header {name!r} holds a line break")
        self._head_tail = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self._ssl: ssl.SSLContext | None = None

    async def post(
        self, path: str, payload: bytes, on_data: Callable[[bytes], None] | None = None
    ) -> Answer:
        """POST `payload` (JSON bytes) to base URL + `path`; any status comes back as is.
        `on_data` sees every piece of the answer as it arrives (a stream's progress)."""
        return await self.request("POST", path, payload, on_data=on_data)

    async def request(
        self,
        method: str,
        path: str,
        payload: bytes = b"",
        *,
        content_type: str | None = None,
        on_data: Callable[[bytes], None] | None = None,
    ) -> Answer:
        """Any method (a hosted agent's invocation, its status poll, its cancel); the body is
        sent as `content_type` (default JSON)."""
        if any(ch in f"{method}{path}{content_type or ''}" for ch in "\r\n\0 "):
            raise ValueError("method, path and content type must be one token each")
        head = self._head_tail
        if content_type is not None:
            head = head.replace("content-type: application/json", f"content-type: {content_type}")
        request = (
            f"{method} {self._prefix}{path} HTTP/1.1\r\n{head}"
            f"content-length: {len(payload)}\r\n\r\n"
        ).encode("latin-1") + payload
        while self._idle:
            conn = self._idle.pop()
            if conn.closed or conn.transport is None or conn.transport.is_closing():
                continue
            if conn.unsolicited:  # bytes no request asked for (a 408 before a close)
                conn.close()
                continue
            try:
                return await self._exchange(conn, request, on_data)
            except ConnectionError:
                if conn.received_any:
                    raise
                # A keep-alive connection the server had closed before it read anything:
                # the request never reached it, so it is sent again on a fresh one.
        return await self._exchange(await self._connect(), request, on_data)

    async def _exchange(
        self, conn: _Connection, request: bytes, on_data: Callable[[bytes], None] | None
    ) -> Answer:
        try:
            answer = await conn.exchange(request, on_data)
        except BaseException:
            conn.close()  # cancelled or broken mid-answer: never reused
            raise
        if conn.keep_alive and not conn.closed and len(self._idle) < MAX_IDLE:
            self._idle.append(conn)
        else:
            conn.close()
        return answer

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        if self._tls and self._ssl is None:
            self._ssl = ssl.create_default_context()
        _, conn = await loop.create_connection(
            _Connection,
            self._host,
            self._port,
            ssl=self._ssl if self._tls else None,
            server_hostname=self._host if self._tls else None,
        )
        return conn

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
