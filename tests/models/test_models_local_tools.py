"""How the embedded model is asked for tool calls and JSON (no model run: fast)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from agentopt.models import ChatRequest, FunctionCall, Message, ToolCall, ToolDef
from agentopt.models.providers.local_runtime import json_grammar
from agentopt.models.providers.local_tools import (
    closed_objects,
    history_for_template,
    parse_tool_reply,
    response_schema,
    tool_prompt,
    tool_schema,
    wants_tools,
)

LOOKUP = ToolDef(
    function={
        "name": "lookup_order",
        "description": "Look up an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    }
)


def test_tool_schema_accepts_only_listed_tools_with_valid_arguments() -> None:
    schema = tool_schema([LOOKUP], allow_content=True)
    good = {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A1"}}]}
    jsonschema.validate(good, schema)
    jsonschema.validate({"content": "hello"}, schema)
    bad_replies: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "delete_everything", "arguments": {}}]},
        {"tool_calls": [{"name": "lookup_order", "arguments": {}}]},
        {"tool_calls": []},
        {"answer": "x"},
    ]
    for bad in bad_replies:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"content": "x"}, tool_schema([LOOKUP], allow_content=False))


def test_tool_argument_strings_are_bounded() -> None:
    schema = tool_schema([LOOKUP], allow_content=False)
    branch = schema["properties"]["tool_calls"]["items"]["anyOf"][0]
    assert branch["properties"]["arguments"]["properties"]["order_id"]["maxLength"] == 100
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "x" * 101}}]},
            schema,
        )


def test_json_grammar_embeds_the_schema_for_llguidance() -> None:
    schema = tool_schema([LOOKUP], allow_content=True)
    head, _, body = json_grammar(schema).partition("start: %json ")
    assert head.startswith("%llguidance")
    embedded = json.loads(body)
    assert embedded.pop("x-guidance") == {"lenient": True}
    assert embedded == schema  # the schema itself is passed through untouched


def test_tool_arguments_are_closed_objects() -> None:
    schema = tool_schema([LOOKUP], allow_content=False)
    extra = {"name": "lookup_order", "arguments": {"order_id": "A1", "note": "x"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tool_calls": [extra]}, schema)


def test_prompt_lists_tools_as_signatures() -> None:
    text = tool_prompt([LOOKUP], allow_content=True)
    assert "- lookup_order(order_id): Look up an order." in text
    assert '{"content": "<your answer>"}' in text
    assert "content" not in tool_prompt([LOOKUP], allow_content=False)


def test_history_is_rewritten_for_a_plain_chat_template() -> None:
    messages = [
        Message(role="user", content="where is A1?"),
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(
                    id="c1",
                    function=FunctionCall(name="lookup_order", arguments='{"order_id": "A1"}'),
                )
            ],
        ),
        Message(role="tool", tool_call_id="c1", content="shipped"),
    ]
    assert history_for_template(messages) == [
        {"role": "user", "content": "where is A1?"},
        {
            "role": "assistant",
            "content": json.dumps(
                {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A1"}}]}
            ),
        },
        {"role": "user", "content": "Result of lookup_order:\nshipped"},
    ]


def test_tools_are_offered_until_a_tool_result_arrives() -> None:
    ask = Message(role="user", content="q")
    result = Message(role="tool", tool_call_id="c1", content="r")
    assert wants_tools(ChatRequest(messages=[ask], tools=[LOOKUP]))
    assert not wants_tools(ChatRequest(messages=[ask, result], tools=[LOOKUP]))
    assert wants_tools(ChatRequest(messages=[ask, result], tools=[LOOKUP], tool_choice="required"))
    assert not wants_tools(ChatRequest(messages=[ask], tools=[LOOKUP], tool_choice="none"))
    assert not wants_tools(ChatRequest(messages=[ask]))


def test_reply_parsing() -> None:
    content, calls = parse_tool_reply(
        '{"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A1"}}]}', turn=3
    )
    assert content is None
    assert [(c.id, c.function.name, c.function.parsed_arguments()) for c in calls] == [
        ("call_3_0", "lookup_order", {"order_id": "A1"})
    ]
    assert parse_tool_reply('{"content": "hi there"}', turn=1) == ("hi there", [])
    assert parse_tool_reply('{"tool_calls": [', turn=1) == ('{"tool_calls": [', [])


def test_response_format_translation() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}},
    }
    wrapped = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    assert response_schema(ChatRequest(messages=[], response_format=wrapped)) == {
        **schema,
        "additionalProperties": False,
    }
    inline = {"type": "json_object", "schema": schema}
    assert response_schema(ChatRequest(messages=[], response_format=inline)) == {
        **schema,
        "additionalProperties": False,
    }
    plain = response_schema(ChatRequest(messages=[], response_format={"type": "json_object"}))
    assert plain == {"type": "object"}
    assert response_schema(ChatRequest(messages=[])) is None
    assert response_schema(ChatRequest(messages=[], response_format={"type": "text"})) is None


def test_closed_objects_closes_listed_properties_only() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {"a": {}}}},
            "meta": {"type": "object"},
            "open": {"type": "object", "properties": {}, "additionalProperties": True},
        },
    }
    out = closed_objects(schema)
    assert out["additionalProperties"] is False
    assert out["properties"]["items"]["items"]["additionalProperties"] is False
    assert "additionalProperties" not in out["properties"]["meta"]  # any object stays any
    assert out["properties"]["open"]["additionalProperties"] is True  # the author's word wins
    assert "additionalProperties" not in schema  # a copy
