"""Servers as users run them: capability errors, the structured-output ladder and its memory,
refused parameters, prompted tool use, and the message shapes sent.

The fake server here plays the documented behaviour of servers we cannot run in the suite:
llama-cpp-python's server (HTTP 500 on `response_format: json_schema`, and a chat-template
crash — HTTP 500 — on an assistant message whose `content` is missing or null), a server that
refuses `seed`, one that refuses `tools`, and one that ignores them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentopt.evaluators.judges.judge_base import SCORE_EXAMPLE, SCORE_SCHEMA, ScoreReply
from agentopt.evaluators.judges.judge_call import JUDGE_TEXT_CHARS, call_judge
from agentopt.models import CallLayer, CallSettings, ProviderConfig
from agentopt.models.prompted_tools import tool_calls_in_text
from agentopt.models.providers.local_tools import capped_strings
from agentopt.models.structured import schema_max_tokens
from agentopt.models.types import (
    ChatRequest,
    ChatResponse,
    FunctionCall,
    Message,
    ToolCall,
    ToolDef,
)
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text, tool_calls
from tests.models.helpers import fast_settings

VERDICT = json.dumps({"reason": "it answers the question", "score": 4})
WEATHER = ToolDef(
    function={
        "name": "get_weather",
        "description": "Weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """Self-hosted servers: their grammar takes any schema (strict refusals are tested in
    test_models_schema_dialect.py)."""
    with FakeOpenAI(schemas="any") as srv:
        yield srv


def llama_cpp_python(req: RecordedRequest) -> Reply | None:
    """llama-cpp-python 0.3's server as observed: 500 on json_schema and on a tool-call turn
    without string content (its Jinja template concatenates message['content'])."""
    body = req.body or {}
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return error(500, "Unsupported response_format type json_schema", type_="server_error")
    for m in body.get("messages", []):
        if m.get("role") == "assistant" and not isinstance(m.get("content"), str):
            return error(500, 'can only concatenate str (not "NoneType") to str')
    return None if "tools" in body else text(VERDICT)


def judge_messages(question: str = "Is Paris the capital of France?") -> list[Message]:
    return [
        Message(role="system", content="You are a judge. Reply in JSON."),
        Message(role="user", content=question),
    ]


def settings(srv: FakeOpenAI, **provider: Any) -> CallSettings:
    return fast_settings(
        providers={"llama": ProviderConfig(type="compat", base_url=srv.base_url, **provider)}
    )


def judge(project: Path, srv: FakeOpenAI, count: int = 1, **provider: Any) -> tuple[list, list]:
    notices: list[str] = []

    async def main() -> list:
        async with CallLayer(project, settings(srv, **provider), on_notice=notices.append) as lay:
            runs = [
                call_judge(
                    lay,
                    "llama:smollm2",
                    judge_messages(f"question {i}?"),
                    schema_name="relevance",
                    schema=SCORE_SCHEMA,
                    reply_model=ScoreReply,
                    example=SCORE_EXAMPLE,
                )
                for i in range(count)
            ]
            return await asyncio.gather(*runs)

    return asyncio.run(main()), notices


def test_a_500_naming_json_schema_is_probed_once_and_remembered(
    project: Path, fake: FakeOpenAI
) -> None:
    fake.handler = llama_cpp_python
    outcomes, notices = judge(project, fake, count=8)
    assert all(o.value is not None and o.value.score == 4 for o in outcomes)
    schema_requests = [
        r for r in fake.chat_requests if r.body["response_format"]["type"] == "json_schema"
    ]
    # One probe for eight concurrent judges, no retry of the refusal, then json_object.
    assert len(schema_requests) == 1
    assert fake.count() == 1 + 8
    fallback = fake.chat_requests[-1].body
    assert fallback["response_format"] == {"type": "json_object"}
    assert '"score"' in fallback["messages"][0]["content"]  # the schema is in the prompt
    assert fallback["messages"][0]["role"] == "system"
    assert notices == [
        "llama: json_schema not supported (HTTP 500: Unsupported response_format type "
        "json_schema); using json_object with the schema in the prompt"
    ]

    # A second run reads the remembered mode from the cache database: no probe at all.
    before = fake.count()
    outcomes, notices = judge(project, fake, count=8)
    assert [o.value.score for o in outcomes if o.value] == [4] * 8
    assert fake.count() == before, fake.last.body  # every answer is cached as json_object
    assert notices == []

    from agentopt.models import cache_clear

    cache_clear(project)  # forgets the answers and the capability
    outcomes, _ = judge(project, fake, count=1)
    assert fake.count() == before + 2  # probed again: one refusal, one answer


def test_the_remembered_mode_is_used_for_new_calls(project: Path, fake: FakeOpenAI) -> None:
    fake.handler = llama_cpp_python
    judge(project, fake, count=1)
    first = fake.count()

    # A different question is not cached, yet no json_schema request is sent.
    async def main() -> None:
        async with CallLayer(project, settings(fake)) as lay:
            await call_judge(
                lay,
                "llama:smollm2",
                judge_messages("a new question?"),
                schema_name="relevance",
                schema=SCORE_SCHEMA,
                reply_model=ScoreReply,
                example=SCORE_EXAMPLE,
            )
            caps = lay.stats().capabilities["llama:smollm2"]
            assert caps["structured_output"] == "json_object"

    asyncio.run(main())
    assert fake.count() == first + 1
    assert fake.last.body["response_format"] == {"type": "json_object"}


def test_a_generic_500_still_retries(project: Path, fake: FakeOpenAI) -> None:
    fake.queue(error(500, "Internal Server Error", type_="server_error"))
    fake.queue(text(VERDICT))
    outcomes, notices = judge(project, fake)
    assert outcomes[0].value is not None
    assert fake.count() == 2
    assert fake.chat_requests[1].body["response_format"]["type"] == "json_schema"
    assert notices == []


def test_strict_refused_falls_to_non_strict(project: Path, fake: FakeOpenAI) -> None:
    def refuses_strict(req: RecordedRequest) -> Reply | None:
        spec = (req.body.get("response_format") or {}).get("json_schema") or {}
        if spec.get("strict"):
            return error(400, "json_schema: 'strict' is not supported for this model")
        return text(VERDICT)

    fake.handler = refuses_strict
    outcomes, notices = judge(project, fake)
    assert outcomes[0].value is not None
    assert [r.body["response_format"]["json_schema"]["strict"] for r in fake.chat_requests] == [
        True,
        False,
    ]
    assert "using json_schema (non-strict)" in notices[0]


def test_a_configured_mode_skips_the_probe(project: Path, fake: FakeOpenAI) -> None:
    fake.handler = llama_cpp_python
    outcomes, notices = judge(project, fake, structured_output="prompt")
    assert outcomes[0].value is not None
    assert fake.count() == 1 and "response_format" not in fake.last.body
    assert "JSON schema" in fake.last.body["messages"][0]["content"]
    assert notices == []


def test_judge_requests_are_bounded_and_a_cut_off_reply_is_an_honest_error(
    project: Path, fake: FakeOpenAI
) -> None:
    runaway = '{\n  "reason": "1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1'
    fake.queue(text(runaway, finish_reason="length"))
    outcomes, _ = judge(project, fake)
    # A self-hosted server decodes under the schema's grammar: the reason is capped too.
    sent = fake.chat_requests[0].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["reason"]["maxLength"] == JUDGE_TEXT_CHARS
    limit = schema_max_tokens(capped_strings(SCORE_SCHEMA, JUDGE_TEXT_CHARS))
    assert 128 <= limit <= 400
    assert [r.body["max_tokens"] for r in fake.chat_requests] == [limit]
    error_ = outcomes[0].error
    assert error_ is not None and error_.code == "judgeParseFailed"
    assert f"cut off at the {limit}-token limit (finish_reason: length)" in error_.message
    # One parse error, not a re-ask: the same cap at temperature 0 would cut it again.
    assert outcomes[0].attempts == 1 and "after 1 attempts" in error_.message


def test_a_refused_seed_is_dropped_once(project: Path, fake: FakeOpenAI) -> None:
    def no_seed(req: RecordedRequest) -> Reply | None:
        if "seed" in req.body:
            return error(400, "Unrecognized request argument supplied: seed")
        return text(VERDICT)

    fake.handler = no_seed
    outcomes, notices = judge(project, fake, count=3)
    assert all(o.value is not None for o in outcomes)
    assert sum("seed" in r.body for r in fake.chat_requests) == 1
    assert notices == [
        "llama: seed not supported (HTTP 400: Unrecognized request argument supplied: seed); "
        "sent without it"
    ]


def complete(project: Path, srv: FakeOpenAI, request: ChatRequest, **provider: Any) -> Any:
    notices: list[str] = []

    async def main() -> Any:
        async with CallLayer(project, settings(srv, **provider), on_notice=notices.append) as lay:
            response = await lay.complete("llama:smollm2", request)
            return response, lay.stats().capabilities["llama:smollm2"], notices

    return asyncio.run(main())


def weather_request(**kwargs: Any) -> ChatRequest:
    return ChatRequest(
        messages=[
            Message(role="system", content="You answer weather questions."),
            Message(role="user", content="Weather in Paris?"),
        ],
        tools=[WEATHER],
        **kwargs,
    )


def test_refused_tools_fall_back_to_prompted_tool_use(project: Path, fake: FakeOpenAI) -> None:
    def no_tools(req: RecordedRequest) -> Reply | None:
        if "tools" in req.body:
            return error(400, "tools are not supported by this server")
        return text(
            json.dumps({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]})
        )

    fake.handler = no_tools
    response, caps, notices = complete(project, fake, weather_request())
    assert [(c.function.name, c.function.parsed_arguments()) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert response.finish_reason == "tool_calls"
    assert caps["tools"] == "prompted"
    prompted = fake.last.body
    assert "tools" not in prompted
    assert prompted["response_format"]["type"] == "json_schema"
    assert "get_weather(city)" in prompted["messages"][0]["content"]
    assert "prompted tool use" in notices[0]


def test_a_tool_call_written_as_text_is_read(project: Path, fake: FakeOpenAI) -> None:
    fake.queue(text('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'))
    response, caps, _ = complete(project, fake, weather_request())
    assert response.tool_calls[0].function.parsed_arguments() == {"city": "Paris"}
    assert caps["tools"] == "prompted"
    assert fake.count() == 1


@pytest.mark.parametrize(
    ("answer", "read"),
    [
        ('  [{"name": "get_weather", "arguments": {"city": "Paris"}}]', True),
        ('{"tool_calls": [{"name": "get_weather", "parameters": {"city": "Paris"}}]}', True),
        ('```\n  {"name": "get_weather", "arguments": "{}"}\n```', True),
        ("42", False),
        ('"get_weather"', False),
        ("", False),
        ("Sunny. {not json}", False),
        ('{"name": "set_alarm", "arguments": {}}', False),
    ],
)
def test_only_a_call_to_an_offered_tool_is_read_from_text(answer: str, read: bool) -> None:
    """A native server's plain answer is not taken for a call, whatever JSON it holds; a
    call written as JSON text (bare, listed, fenced, indented) to a tool the request offered
    is."""
    response = ChatResponse(message=Message(role="assistant", content=answer))
    calls = tool_calls_in_text(weather_request(), response)
    assert [c.function.name for c in calls] == (["get_weather"] if read else [])


def test_ignored_forced_tools_are_redone_prompted(project: Path, fake: FakeOpenAI) -> None:
    # llama-server with a chat template that has no tool support answers in prose.
    fake.queue(text("The weather in Paris is a classic example of weather."))
    fake.queue(
        text(json.dumps({"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}))
    )
    response, caps, _ = complete(project, fake, weather_request(tool_choice="required"))
    assert response.tool_calls and caps["tools"] == "prompted"
    assert fake.count() == 2
    # Forced: the prompted schema admits no plain answer.
    schema = fake.last.body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["tool_calls"]


def test_native_tool_calls_are_kept(project: Path, fake: FakeOpenAI) -> None:
    fake.queue(tool_calls([("get_weather", {"city": "Paris"})]))
    response, caps, notices = complete(project, fake, weather_request())
    assert response.tool_calls and caps["tools"] == "native" and notices == []
    assert fake.last.body["tools"][0]["function"]["name"] == "get_weather"


def tool_round_trip() -> ChatRequest:
    call = ToolCall(
        id="call_0", function=FunctionCall(name="get_weather", arguments='{"city": "Paris"}')
    )
    return ChatRequest(
        messages=[
            Message(role="system", content="You answer weather questions."),
            Message(role="user", content="Weather in Paris?"),
            Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id="call_0", content="18C, sunny"),
            Message(role="system", content="Be brief."),
        ],
        tools=[WEATHER],
    )


def test_tool_turns_have_string_content_for_local_servers(project: Path, fake: FakeOpenAI) -> None:
    fake.handler = llama_cpp_python
    complete(project, fake, tool_round_trip())
    assert fake.count() == 1  # no template crash, no retry
    messages = fake.last.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[0]["content"] == "You answer weather questions.\n\nBe brief."
    assert messages[2]["content"] == ""
    assert messages[3] == {
        "role": "tool",
        "content": "18C, sunny",
        "tool_call_id": "call_0",
        "name": "get_weather",
    }


def test_no_empty_tools_list_is_sent(project: Path, fake: FakeOpenAI) -> None:
    complete(
        project,
        fake,
        ChatRequest(messages=[Message(role="user", content="hi")], tools=[], tool_choice="auto"),
    )
    assert "tools" not in fake.last.body and "tool_choice" not in fake.last.body


def test_schema_bound_grows_with_the_schema() -> None:
    small = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    many = {"type": "array", "items": SCORE_SCHEMA, "maxItems": 10}
    bounded = {"type": "object", "properties": {"id": {"type": "string", "maxLength": 20}}}
    assert schema_max_tokens(small) == 128  # the floor
    assert schema_max_tokens(many) > 8 * schema_max_tokens(SCORE_SCHEMA) // 2
    assert schema_max_tokens(bounded) < schema_max_tokens(
        {"type": "object", "properties": {"id": {"type": "string"}}}
    )
