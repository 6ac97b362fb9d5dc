"""Reading an invocations agent's answer: the body is the agent's own, so agentopt follows what
the agent declares (`invocationsModeration` in a real foundry-samples layout) and otherwise the
samples' conventions. The lifecycle itself runs against the real package in
test_agentserver_real.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentopt.agents.conversation import TurnFailed
from agentopt.agents.invocations_wire import answer_turn, request_body, stream_turn
from agentopt.models.http_client import Answer
from agentopt.workflows.detect import detect_target
from tests.files.test_real_fixtures import copy_fixture


def sse(*frames: object) -> str:
    return "".join(f"data: {f if isinstance(f, str) else json.dumps(f)}\n\n" for f in frames)


def test_the_guardrail_samples_declared_paths_are_followed(tmp_path: Path) -> None:
    found = detect_target(copy_fixture("fs-hosted-py-invocations-guardrail", tmp_path), environ={})
    assert found.definition is not None
    io = found.definition.invocations_io
    body, ctype = request_body("Where is my order?", io)
    assert (json.loads(body), ctype) == ({"message": "Where is my order?"}, None)
    buffered = Answer(200, {"content-type": "application/json"}, b'{"response": "On its way."}')
    assert answer_turn(buffered, "q", io, "hosted").response == "On its way."
    stream = sse(
        {"type": "message.delta", "text": "On its "},
        ": keep-alive",
        {"type": "message.delta", "text": "way."},
        {"type": "message.completed", "id": "m1"},
    )
    assert stream_turn(stream, "q", io).response == "On its way."


def test_the_samples_conventions_without_a_declaration() -> None:
    tokens = sse(
        {"type": "token", "content": "Hel"},
        {"type": "token", "content": "lo"},
        {"type": "done", "full_text": "Hello", "session_id": "s"},
    )
    assert stream_turn(tokens, "q", None).response == "Hello"  # not "HelloHello"
    assert stream_turn(sse({"delta": "a"}, {"delta": "b"}, "[DONE]"), "q", None).response == "ab"
    assert stream_turn(sse("plain line", "another"), "q", None).response == "plain line\nanother"
    plain = Answer(200, {"content-type": "text/plain"}, b"just text\n")
    assert answer_turn(plain, "q", None, "hosted").response == "just text"
    usage = b'{"output": "ok", "usage": {"prompt_tokens": 3, "completion_tokens": 2}}'
    turn = answer_turn(Answer(200, {"content-type": "application/json"}, usage), "q", None, "h")
    assert (turn.response, turn.usage.input_tokens, turn.usage.output_tokens) == ("ok", 3, 2)
    nested = b'{"status": "completed", "result": {"answer": "42"}}'
    assert answer_turn(Answer(200, {}, nested), "q", None, "h").response == "42"


def test_a_plain_text_agent_gets_plain_text() -> None:
    body, ctype = request_body("hi there", {"input_content_type": "text"})
    assert (body, ctype) == (b"hi there", "text/plain")


@pytest.mark.parametrize(
    "stream",
    [
        sse({"type": "token", "content": "x"}, {"error": {"code": "rate", "message": "slow"}}),
        sse({"error": {"type": "server_error", "message": "boom"}}),
    ],
)
def test_an_error_frame_is_an_agent_error(stream: str) -> None:
    with pytest.raises(TurnFailed, match=r"agent error \((rate|server_error)\)"):
        stream_turn(stream, "q", None)
