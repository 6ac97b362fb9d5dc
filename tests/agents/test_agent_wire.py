"""Tool mocks and the wire formats agents answer in, checked directly."""

from __future__ import annotations

import asyncio

import pytest

from agentopt.agents import RunConfig, TurnResult, run_turns
from agentopt.agents.citations import citations_from_annotations
from agentopt.agents.command import parse_output
from agentopt.agents.conversation import TurnFailed
from agentopt.agents.openai_wire import turn_from_response
from agentopt.agents.tools.mocks import ToolMocks
from agentopt.contracts.task import Task, Turn
from agentopt.core.errors import InputError


def test_subset_matching_nested_and_first_rule_wins():
    mocks = ToolMocks.parse(
        {
            "search": [
                {"when": {"filters": {"lang": "en"}}, "return": "english"},
                {"when": {"query": "refund"}, "return": "refund docs"},
                {"return": "fallback"},
            ],
            "now": "12:00",
            "weather": {"return": {"temp": 20}},
        }
    )
    assert mocks.lookup(
        "search", {"query": "refund", "filters": {"lang": "en", "n": 3}}
    ).returns == ("english")
    assert mocks.lookup("search", {"query": "refund", "filters": {"lang": "fr"}}).returns == (
        "refund docs"
    )
    assert mocks.lookup("search", {"query": "other"}).returns == "fallback"
    assert mocks.lookup("now", {}).returns == "12:00"
    assert mocks.lookup("weather", {"city": "x"}).returns == {"temp": 20}
    assert mocks.lookup("missing", {}) is None


def test_null_return_is_a_hit_not_a_miss():
    mocks = ToolMocks.parse({"ping": [{"return": None}]})
    hit = mocks.lookup("ping", {})
    assert hit is not None and hit.returns is None


def test_all_problems_are_reported_with_their_key_path():
    with pytest.raises(InputError) as caught:
        ToolMocks.parse(
            {"a": [{"when": "x", "return": 1}, {"retrun": 2}], "b": [{"return": 1, "extra": 0}]},
            source="tool_mocks.json",
        )
    message = str(caught.value)
    # Each message names the file and key, the mock's tool, what is wrong and the fix.
    assert (
        'tool_mocks.json:a[0].when: mock for tool "a": "when" is a mapping of argument → value, '
        'found "x"'
    ) in message
    assert (
        'tool_mocks.json:a[1]: mock for tool "a": a list holds rules {"when"?, "return"}, found '
        'a mapping; to answer every call with a list, write {"return": [...]}'
    ) in message
    assert 'tool_mocks.json:b[0]: mock for tool "b": unknown key(s) extra' in message


def test_responses_citations_both_kinds():
    citations = citations_from_annotations(
        [
            {"type": "url_citation", "url": "https://a", "title": "A"},
            {"type": "file_citation", "file_id": "file_1", "filename": "policy.pdf", "index": 9},
            {"type": "container_file_citation", "file_id": "file_1", "filename": "policy.pdf"},
            {"type": "something_else"},
        ]
    )
    assert [(c.index, c.url, c.title, c.file_id) for c in citations] == [
        (1, "https://a", "A", None),
        (2, None, "policy.pdf", "file_1"),
    ]


def test_failed_response_fails_the_turn():
    with pytest.raises(TurnFailed, match="the agent reported an error: model overloaded"):
        turn_from_response(
            {"status": "failed", "error": {"message": "model overloaded"}}, "q", "endpoint"
        )


def test_mcp_calls_and_multiple_messages():
    turn = turn_from_response(
        {
            "output": [
                {"type": "mcp_call", "name": "lookup", "arguments": '{"id": 1}', "output": "ok"},
                {"type": "web_search_call", "id": "ws_1", "action": {"query": "x"}},
                {"type": "message", "content": [{"type": "output_text", "text": "one"}]},
                {"type": "message", "content": [{"type": "output_text", "text": "two"}]},
            ]
        },
        "q",
        "hosted",
    )
    assert turn.response == "one\n\ntwo"
    assert [(c.name, c.arguments, c.result) for c in turn.tool_calls] == [
        ("lookup", {"id": 1}, "ok"),
        ("web_search", {"action": {"query": "x"}}, None),
    ]


def test_command_output_plain_text_and_json_without_output_key():
    assert parse_output("  hello\n", "q").response == "hello"
    assert parse_output('{"answer": 1}', "q").response == '{"answer": 1}'
    assert parse_output('{"output": {"a": 1}}', "q").response == '{"a": 1}'


def test_a_timeout_raised_inside_a_turn_is_not_the_turn_deadline():
    async def send(query: str) -> TurnResult:
        raise TimeoutError("socket read timed out")

    task = Task(name="t", turns=[Turn(query="hi")])
    [turn] = asyncio.run(run_turns(task, RunConfig(turn_timeout_s=30), send))
    assert turn.error is not None
    assert (turn.error.code, turn.error.message) == (
        "agentRequestFailed",
        "TimeoutError: socket read timed out",
    )
