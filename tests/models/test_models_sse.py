"""Streamed answers put back together: the events of a body parsed at once, and a chunked
body that arrives in pieces read piece by piece (issue 31: the tool worlds' wall time)."""

from __future__ import annotations

import asyncio
import json

import pytest

from agentopt.models.http_client import _Connection
from agentopt.models.providers.sse import completion_from_sse
from tests.fake_openai import sse_events, text, tool_calls


def _body(events: list[bytes]) -> bytes:
    return b"".join(events)


def test_a_tool_call_and_a_text_answer_come_back_whole() -> None:
    call = tool_calls([("order_status", {"order": "A1"})], usage=(40, 12)).body
    got = completion_from_sse(_body(sse_events(call)))
    message = got["choices"][0]["message"]
    assert message["tool_calls"][0]["function"] == {
        "name": "order_status",
        "arguments": json.dumps({"order": "A1"}),
    }
    assert got["choices"][0]["finish_reason"] == "tool_calls"
    assert got["usage"]["prompt_tokens"] == 40

    said = completion_from_sse(_body(sse_events(text("Your parcel ships today.").body)))
    assert said["choices"][0]["message"]["content"] == "Your parcel ships today."


@pytest.mark.parametrize(
    "line",
    [
        b'data: {"choices": [',  # cut short
        b'data: {"id": "a"}, {"id": "b"}',  # two values on one line
        b"data: [1, 2]",  # JSON, but not an event
    ],
)
def test_a_data_line_that_is_not_one_json_object_is_refused(line: bytes) -> None:
    events = sse_events(text("fine").body)
    body = _body([*events[:2], line + b"\n\n", *events[2:]])
    with pytest.raises(ValueError):
        completion_from_sse(body)


def test_an_error_event_is_the_answer() -> None:
    events = sse_events(text("partial").body)
    error = b'data: {"error": {"message": "out of memory", "code": 500}}\n\n'
    got = completion_from_sse(_body([*events[:2], error, *events[2:]]))
    assert got == {"error": {"message": "out of memory", "code": 500}}


def test_a_chunked_stream_arriving_byte_by_byte_is_read_whole() -> None:
    events = sse_events(text("one two three four five").body)
    chunked = b"".join(f"{len(e):x}\r\n".encode() + e + b"\r\n" for e in events)
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + b"0\r\n\r\n"

    async def read() -> bytes:
        conn = _Connection()
        conn._waiter = asyncio.get_running_loop().create_future()
        for i in range(len(wire)):
            assert not conn._waiter.done()
            conn.data_received(wire[i : i + 1])
        answer = conn._waiter.result()
        assert not conn._buf  # nothing of this answer is left for the next
        return answer.body

    body = asyncio.run(read())
    assert body == b"".join(events)
    assert completion_from_sse(body)["choices"][0]["message"]["content"] == (
        "one two three four five"
    )
