"""The endpoint target against real local HTTP servers, in both protocols."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from agentopt.agents import RunConfig, Transcript, make_target
from agentopt.contracts.task import Task, Turn
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.call import CallLayer, CallSettings

SECRET_HEADER = "gw-secret-123456"
SECRET_AUTH = "Bearer tok-abcdef"


def endpoint(url: str, protocol: str = "responses", **options: Any) -> Any:
    defn = AgentDefinition(
        name="gateway",
        endpoint=url,
        protocol=protocol,
        model="agent-model",
        headers_from_env={"X-Gateway": "GATEWAY_HEADER_VALUE", "authorization": "GATEWAY_AUTH"},
    )
    options.setdefault("retry_attempts", 3)
    return make_target("endpoint", defn, **options)


def run_tasks(target: Any, *tasks: Task) -> list[Transcript]:
    async def go() -> list[Transcript]:
        try:
            return list(await asyncio.gather(*(target.run(t, RunConfig()) for t in tasks)))
        finally:
            await target.aclose()

    return asyncio.run(go())


def task(*queries: str, name: str = "t") -> Task:
    return Task(name=name, turns=[Turn(query=q) for q in queries])


@pytest.fixture(autouse=True)
def header_env(monkeypatch):
    monkeypatch.setenv("GATEWAY_HEADER_VALUE", SECRET_HEADER)
    monkeypatch.setenv("GATEWAY_AUTH", SECRET_AUTH)


def test_responses_protocol_with_env_headers(recording_server, responses_body):
    def answer(request):
        body = request.body
        echoed = f"{body['input']} after {body.get('previous_response_id')} "
        echoed += (
            f"(headers {request.headers.get('x-gateway')} {request.headers.get('authorization')})"
        )
        citation = {"type": "url_citation", "url": "https://kb.example/1", "title": "KB"}
        turn_id = f"resp_{len(server.requests)}"
        return 200, responses_body(echoed, turn_id, [citation, citation])

    server = recording_server(answer)
    [transcript] = run_tasks(endpoint(server.url), task("hi", "more"))
    first, second = server.requests
    assert (first.path, first.body["model"], first.body["input"]) == (
        "/responses",
        "agent-model",
        "hi",
    )
    assert first.headers["x-gateway"] == SECRET_HEADER
    assert first.headers["authorization"] == SECRET_AUTH  # replaces the client's own
    assert "previous_response_id" not in first.body
    assert second.body["previous_response_id"] == "resp_1"

    one, two = transcript.turns
    assert one.response.startswith("hi after None")
    assert two.response.startswith("more after resp_1")
    assert [c.url for c in one.citations] == ["https://kb.example/1"]  # duplicates dropped
    dumped = transcript.model_dump_json()
    assert SECRET_HEADER not in dumped
    assert "tok-abcdef" not in dumped


def test_chat_completions_protocol_keeps_history(recording_server, chat_body):
    annotation = {
        "type": "url_citation",
        "url_citation": {"url": "https://kb.example/2", "title": "Policy", "start_index": 0},
    }

    def answer(request):
        said = [m["content"] for m in request.body["messages"]]
        return 200, chat_body(" / ".join(said), annotations=[annotation])

    server = recording_server(answer)
    [transcript] = run_tasks(endpoint(server.url + "/v1", "chat_completions"), task("a", "b"))
    assert [r.path for r in server.requests] == ["/v1/chat/completions"] * 2
    assert server.requests[1].body["messages"] == [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "b"},
    ]
    assert transcript.turns[1].response == "a / a / b"
    assert [(c.url, c.title) for c in transcript.turns[0].citations] == [
        ("https://kb.example/2", "Policy")
    ]
    assert (transcript.turns[0].usage.input_tokens, transcript.turns[0].usage.output_tokens) == (
        4,
        6,
    )


def test_transient_errors_are_retried_and_others_are_not(recording_server, responses_body):
    def flaky(request):
        if request.body["input"] == "bad":
            return 400, {"error": {"message": f"rejected {SECRET_HEADER}", "type": "invalid"}}
        if len(server.requests) == 1:
            return 503, {"error": {"message": "warming up"}}
        return 200, responses_body("fine")

    server = recording_server(flaky)
    [ok] = run_tasks(endpoint(server.url), task("good"))
    assert ok.turns[0].response == "fine"
    assert len(server.requests) == 2

    [bad] = run_tasks(endpoint(server.url), task("bad", "never sent"))
    assert len(server.requests) == 3  # a 400 is final, and the next turn is skipped
    error = bad.turns[0].error
    assert error is not None and error.code == "agentRequestFailed"
    assert error.message.startswith("HTTP 400")
    assert SECRET_HEADER not in error.message
    assert bad.turns[1].error is not None and bad.turns[1].error.code == "turnSkipped"


def test_concurrency_is_limited(recording_server, responses_body, tmp_path):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(request):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return 200, responses_body("ok")

    server = recording_server(slow)
    target = endpoint(server.url)
    settings = CallSettings(cache_enabled=False, concurrency={"agent": 2})

    async def go() -> list[Transcript]:
        # The limit is the call layer's agent pool: the target asks it, holds none itself.
        async with CallLayer(tmp_path, settings) as layer:
            config = RunConfig(calls=layer)
            try:
                runs = (target.run(task("q", name=f"t{i}"), config) for i in range(6))
                return list(await asyncio.gather(*runs))
            finally:
                await target.aclose()

    transcripts = asyncio.run(go())
    assert all(t.turns[0].response == "ok" for t in transcripts)
    assert state["peak"] == 2


def test_missing_header_variable_names_it_without_values(monkeypatch):
    monkeypatch.delenv("GATEWAY_AUTH")
    with pytest.raises(ConfigError) as caught:
        endpoint("http://127.0.0.1:9")
    message = str(caught.value)
    assert "agent.headers_from_env.authorization" in message
    assert "GATEWAY_AUTH" in message
    assert SECRET_HEADER not in message


def test_an_endpoint_is_required():
    with pytest.raises(ConfigError, match=r"agent\.endpoint"):
        make_target("endpoint", AgentDefinition(name="gateway"))
