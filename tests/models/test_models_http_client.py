"""The lean HTTP client against real sockets: framing, keep-alive, stale connections, cancel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from agentopt.core.errors import ModelCallError
from agentopt.models import CallLayer, ChatRequest, Message
from agentopt.models.http_client import LeanClient, direct_route
from tests.fake_openai import FakeOpenAI, error, rate_limited
from tests.models.helpers import fast_settings

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    length = next(
        int(line.split(":", 1)[1])
        for line in head.split("\r\n")
        if line.lower().startswith("content-length")
    )
    return head, await reader.readexactly(length)


async def _serve(script: Script, work: Callable[[str], Awaitable[None]]) -> list[int]:
    """Run `work(base_url)` against a server answering each connection with `script`;
    returns how many requests each connection carried."""
    per_conn: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        per_conn.append(0)
        index = len(per_conn) - 1
        try:
            while True:
                await script(reader, writer)
                per_conn[index] += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        await work(f"http://127.0.0.1:{port}/v1")
    return per_conn


def _answer(body: bytes, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        f"{extra}\r\n"
    ).encode() + body


def test_keep_alive_reuses_one_connection_and_sends_the_body() -> None:
    seen: list[tuple[str, bytes]] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        # The answer arrives in two writes: the parser waits for the whole body.
        data = _answer(b'{"ok": true}')
        writer.write(data[:30])
        await writer.drain()
        await asyncio.sleep(0.01)
        writer.write(data[30:])
        await writer.drain()

    async def work(base: str) -> None:
        client = LeanClient(base, {"authorization": "Bearer k"})
        for i in range(3):
            answer = await client.post("/chat/completions", json.dumps({"i": i}).encode())
            assert answer.status == 200 and json.loads(answer.body) == {"ok": True}
        await client.aclose()

    per_conn = asyncio.run(_serve(script, work))
    assert per_conn == [3]
    head, body = seen[2]
    assert head.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
    assert "authorization: Bearer k" in head and "host: 127.0.0.1:" in head
    assert json.loads(body) == {"i": 2}


def test_chunked_and_read_to_close_bodies() -> None:
    replies = [
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'5\r\n{"a":\r\n3;ext=1\r\n 1}\r\n0\r\nX-Trailer: t\r\n\r\n',
        b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"b": 2}',
    ]

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        reply = replies.pop(0)
        writer.write(reply)
        await writer.drain()
        if b"Content-Length" not in reply and b"chunked" not in reply:
            writer.close()  # a body without length ends with the connection

    async def work(base: str) -> None:
        client = LeanClient(base)
        first = await client.post("/x", b"{}")
        second = await client.post("/x", b"{}")
        assert json.loads(first.body) == {"a": 1}
        assert json.loads(second.body) == {"b": 2}
        await client.aclose()

    per_conn = asyncio.run(_serve(script, work))
    assert per_conn[0] >= 2  # the chunked answer kept the connection open for the second


@pytest.mark.parametrize("pause", [0.0, 0.02])
def test_a_keep_alive_connection_closed_by_the_server_is_replaced(pause: float) -> None:
    """Whether the close arrives before the next request (pause) or while it is being sent
    (no pause: the request reached no one and goes again on a fresh connection)."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_answer(b"{}"))
        await writer.drain()
        raise ConnectionError("the server drops every connection after one answer")

    async def work(base: str) -> None:
        client = LeanClient(base)
        for _ in range(3):
            assert (await client.post("/x", b"{}")).status == 200
            await asyncio.sleep(pause)
        await client.aclose()

    assert len(asyncio.run(_serve(script, work))) == 3


def test_connection_close_header_is_honoured() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_answer(b"{}", "Connection: close\r\n"))
        await writer.drain()

    async def work(base: str) -> None:
        client = LeanClient(base)
        for _ in range(2):
            assert (await client.post("/x", b"{}")).status == 200
        await client.aclose()

    per_conn = asyncio.run(_serve(script, work))
    assert len(per_conn) == 2


def test_a_cancelled_request_never_hands_its_half_answer_to_the_next() -> None:
    calls = 0

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal calls
        await _read_request(reader)
        calls += 1
        if calls == 1:
            writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"late')
            await writer.drain()
            await asyncio.sleep(0.3)
            writer.write(b'": 1}' + b" " * 39)
        else:
            writer.write(_answer(b'{"second": true}'))
        await writer.drain()

    async def work(base: str) -> None:
        client = LeanClient(base)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await client.post("/x", b"{}")
        answer = await client.post("/x", b"{}")
        assert json.loads(answer.body) == {"second": True}
        await client.aclose()

    per_conn = asyncio.run(_serve(script, work))
    assert len(per_conn) == 2


def test_header_values_with_line_breaks_are_refused() -> None:
    with pytest.raises(ValueError, match="line break"):
        LeanClient("http://127.0.0.1:1/v1", {"x-token": "a\r\nx-evil: 1"})


@pytest.mark.parametrize(
    ("env", "url", "direct"),
    [
        ({}, "http://127.0.0.1:8000/v1", True),
        ({}, "https://api.openai.com/v1", True),
        ({"AGENTOPT_HTTP_CLIENT": "sdk"}, "http://127.0.0.1:8000/v1", False),
        ({"HTTPS_PROXY": "http://proxy:3128"}, "https://api.openai.com/v1", False),
        ({"https_proxy": "http://proxy:3128"}, "http://localhost:8000/v1", True),
        ({"ALL_PROXY": "http://proxy:3128"}, "http://localhost:8000/v1", False),
        ({"ALL_PROXY": "http://p:1", "NO_PROXY": "localhost"}, "http://localhost:8000/v1", True),
        ({"ftp_proxy": "x"}, "ftp://example.com/v1", False),
    ],
)
def test_direct_route_leaves_proxied_hosts_to_the_sdk(
    env: dict[str, str], url: str, direct: bool
) -> None:
    assert direct_route(url, env) is direct


def test_status_errors_are_classified_like_the_sdks(fake: FakeOpenAI, project: Path) -> None:
    """A 429 with Retry-After and a 400 with an error body keep their kind, code and wait."""
    fake.queue(
        rate_limited(retry_after=0.05),
        error(400, "temperature is out of range", code="invalid_request"),
    )

    async def main() -> ModelCallError:
        async with CallLayer(project, fast_settings(fake, cache_enabled=False)) as layer:
            try:
                await layer.complete(
                    "fake:gpt-x", ChatRequest(messages=[Message(role="user", content="q")])
                )
            except ModelCallError as exc:
                return exc
        raise AssertionError("expected an error")

    err = asyncio.run(main())
    assert fake.count() == 2  # the 429 was retried after its Retry-After
    assert err.kind == "bad_request" and err.status_code == 400
    assert "invalid_request" in err.message and "temperature is out of range" in err.message


def test_connection_refused_names_the_server(project: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    settings = fast_settings(cache_enabled=False).model_copy(update={"max_attempts": 1})

    async def main() -> ModelCallError:
        async with CallLayer(project, settings) as layer:
            try:
                await layer.complete(
                    f"compat:m@http://127.0.0.1:{port}/v1",
                    ChatRequest(messages=[Message(role="user", content="q")]),
                )
            except ModelCallError as exc:
                return exc
        raise AssertionError("expected an error")

    err = asyncio.run(main())
    assert err.kind == "connection" and f"127.0.0.1:{port}" in err.message


def test_an_answer_nobody_asked_for_is_never_given_to_the_next_request() -> None:
    """A server that says 408 on an idle keep-alive connection (then closes it later): the
    next request goes out on a fresh connection and gets its own answer."""

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_answer(b'{"n": 1}'))
        writer.write(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.5)  # the close comes late

    async def work(base: str) -> None:
        client = LeanClient(base)
        assert json.loads((await client.post("/x", b"{}")).body) == {"n": 1}
        await asyncio.sleep(0.05)
        second = await client.post("/x", b"{}")
        assert second.status == 200 and json.loads(second.body) == {"n": 1}
        await client.aclose()

    assert len(asyncio.run(_serve(script, work))) == 2
