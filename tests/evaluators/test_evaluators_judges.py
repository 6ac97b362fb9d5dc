"""LLM judges with scripted judge models: parsing, re-asks, errors, inputs, request shape."""

from __future__ import annotations

import json

import pytest

from agentopt.contracts.transcript import ToolCallRecord
from agentopt.core.errors import ConfigError, ModelCallError
from agentopt.evaluators import EvalSample
from agentopt.evaluators.base import HistoryTurn
from agentopt.evaluators.judges.parsing import JudgeParseError, extract_json_object

SAMPLE = EvalSample(query="What is the refund window?", response="30 days from delivery.")


def verdict(score, reason="Because."):
    return json.dumps({"reason": reason, "score": score})


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("Relevance", "builtin.relevance"),
        ("coherence", "builtin.coherence"),
        ("builtin.fluency", "builtin.fluency"),
        ("builtin.intent_resolution", "builtin.intent_resolution"),
    ],
)
@pytest.mark.parametrize(("score", "status"), [(1, "fail"), (2, "fail"), (3, "pass"), (5, "pass")])
def test_scale_judge_scores_and_normalizes(harness, judge, name, canonical, score, status):
    j = judge(verdict(score, "Clear and on topic."))
    r = harness.run(name, SAMPLE, judge_model=j.model)
    assert (r.evaluator, r.status, r.score, r.threshold) == (canonical, status, score, 3)
    assert r.normalized == (score - 1) / 4
    assert r.reason == "Clear and on topic."
    assert r.cost.input_tokens > 0 and r.cost.output_tokens > 0
    assert j.calls == 1


def test_judge_request_is_deterministic_and_structured(harness, judge):
    j = judge(verdict(4))
    harness.run("Relevance", SAMPLE, judge_model=j.model)
    request = j.requests[0]
    assert request.temperature == 0 and request.seed is not None
    fmt = request.response_format
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"]["required"] == ["reason", "score"]
    assert [m.role for m in request.messages] == ["system", "user"]
    # the scale is stated with an anchor per level and the JSON shape is asked for
    user = request.messages[1].content
    for level in range(1, 6):
        assert f"\n{level} - " in user
    assert '{"reason": "<one or two sentences explaining the score>", "score": <integer' in user


def test_threshold_option(harness, judge):
    j = judge(verdict(4))
    r = harness.run({"name": "Relevance", "options": {"threshold": 5}}, SAMPLE, judge_model=j.model)
    assert r.status == "fail" and r.threshold == 5


@pytest.mark.parametrize(
    "reply",
    [
        'Sure! Here is my verdict:\n```json\n{"reason": "fine", "score": 4}\n```',
        'I considered it carefully. {"reason": "fine", "score": 4} Hope this helps.',
        '{"reason": "fine", "score": 4,}',
        '```\n{\n  "reason": "the agent\'s answer is fine",\n  "score": "4",\n}\n```',
        '{"score": 4.0, "reason": "fine", "confidence": "high"}',
    ],
)
def test_lenient_parsing(harness, judge, reply):
    j = judge(reply)
    r = harness.run("Relevance", SAMPLE, judge_model=j.model)
    assert r.status == "pass" and r.score == 4
    assert j.calls == 1


def test_broken_json_then_fixed_on_reask(harness, judge):
    j = judge('{"reason": "fine", "score": 4', verdict(2))
    r = harness.run("Coherence", SAMPLE, judge_model=j.model)
    assert j.calls == 2
    assert r.score == 2 and r.details["attempts"] == 2
    second = j.requests[1].messages
    assert second[-2].role == "assistant" and second[-2].content == '{"reason": "fine", "score": 4'
    assert second[-1].role == "user"
    assert "could not be used" in second[-1].content
    assert "invalid JSON" in second[-1].content  # the parse error, quoted
    # tokens of both attempts are counted
    assert r.cost.input_tokens > 2 * (len(j.prompt(0)) // 4) - 10


@pytest.mark.parametrize(
    "bad",
    [
        "I'd give it a 4 out of 5.",
        '{"reason": "great", "score": 7}',
        '{"reason": "great", "score": 3.5}',
        '{"reason": "great", "score": true}',
        '{"reason": "great"}',
        "",
    ],
)
def test_unusable_three_times_is_an_error_never_a_score(harness, judge, bad):
    j = judge(bad)
    r = harness.run("Relevance", SAMPLE, judge_model=j.model)
    assert j.calls == 3
    assert r.status == "error" and r.score is None and r.normalized is None
    assert r.error.code == "judgeParseFailed"
    assert "after 3 attempts" in r.error.message
    assert r.cost.output_tokens >= 0 and r.details["attempts"] == 3


def test_out_of_range_score_is_reasked_with_the_reason(harness, judge):
    j = judge('{"reason": "x", "score": 7}', verdict(5))
    r = harness.run("Relevance", SAMPLE, judge_model=j.model)
    assert r.score == 5 and j.calls == 2
    assert "score" in j.requests[1].messages[-1].content
    assert "7" in j.requests[1].messages[-1].content


@pytest.mark.parametrize(
    ("kind", "code"),
    [
        ("auth", "judgeAuthenticationError"),
        ("rate_limit", "judgeRateLimited"),
        ("timeout", "judgeTimeout"),
        ("server", "judgeUnavailable"),
    ],
)
def test_a_failed_judge_call_is_a_categorized_error(harness, judge, kind, code):
    j = judge(ModelCallError("401 Unauthorized: bad key", kind=kind, provider="mock"))
    r = harness.run("Relevance", SAMPLE, judge_model=j.model)
    assert r.status == "error" and r.score is None
    assert r.error.code == code
    assert "401 Unauthorized" in r.error.message


def test_no_judge_model_is_a_config_error(harness):
    with pytest.raises(ConfigError, match="eval_model"):
        harness.build("Relevance", judge_model=None)


@pytest.mark.parametrize(
    ("name", "sample", "missing"),
    [
        ("Similarity", SAMPLE, "ground truth"),
        ("Groundedness", SAMPLE, "context"),
        ("Relevance", EvalSample(response="hi"), "query"),
        ("builtin.tool_call_accuracy", SAMPLE, "tool"),
    ],
)
def test_missing_input_is_an_error_without_calling_the_judge(harness, judge, name, sample, missing):
    j = judge(verdict(5))
    r = harness.run(name, sample, judge_model=j.model)
    assert r.status == "error" and r.error.code == "missingInput" and r.score is None
    assert missing in r.error.message
    assert j.calls == 0


def test_groundedness_uses_item_context_else_tool_outputs(harness, judge):
    j = judge(verdict(5))
    with_context = SAMPLE.model_copy(update={"context": "Refunds: 30 days from delivery."})
    harness.run("Groundedness", with_context, judge_model=j.model)
    assert "Refunds: 30 days from delivery." in j.prompt(0)
    assert "given with the task" in j.prompt(0)

    from_tools = SAMPLE.model_copy(
        update={
            "tool_calls": [
                ToolCallRecord(name="policy", arguments={"q": "refund"}, result={"days": 30}),
                ToolCallRecord(name="broken", error="timeout"),
            ]
        }
    )
    r = harness.run("Groundedness", from_tools, judge_model=j.model)
    assert r.status == "pass"
    assert '[policy] {"days": 30}' in j.prompt(1)
    assert "what the agent's tools returned" in j.prompt(1)


def test_similarity_sees_the_ground_truth(harness, judge):
    j = judge(verdict(3))
    harness.run(
        "Similarity",
        SAMPLE.model_copy(update={"ground_truth": "Thirty days."}),
        judge_model=j.model,
    )
    assert "Thirty days." in j.prompt(0)


def test_relevance_in_a_thread_sees_the_history(harness, judge):
    j = judge(verdict(4))
    sample = EvalSample(
        query="And for opened items?",
        response="Opened items: 14 days.",
        history=[HistoryTurn(query="What is the refund window?", response="30 days.")],
    )
    harness.run("Relevance", sample, judge_model=j.model)
    prompt = j.prompt(0)
    assert "Earlier turns of the conversation" in prompt
    assert "[turn 1] User: What is the refund window?" in prompt
    assert "[turn 1] Agent: 30 days." in prompt
    single = judge(verdict(4))
    harness.run("Relevance", SAMPLE, judge_model=single.model)
    assert "Earlier turns" not in single.prompt(0)


def test_tool_call_accuracy_sees_calls_and_definitions(harness, judge):
    j = judge(verdict(4))
    sample = SAMPLE.model_copy(
        update={
            "tool_calls": [ToolCallRecord(name="get_policy", arguments={"topic": "refunds"})],
            "tool_definitions": [
                {
                    "type": "function",
                    "function": {"name": "get_policy", "description": "Look up a policy."},
                }
            ],
        }
    )
    r = harness.run("builtin.tool_call_accuracy", sample, judge_model=j.model)
    assert r.status == "pass"
    assert '"tool": "get_policy", "arguments": {"topic": "refunds"}' in j.prompt(0)
    assert '{"name": "get_policy", "description": "Look up a policy."}' in j.prompt(0)


def test_tool_call_accuracy_judges_a_run_that_offered_tools_but_made_no_call(harness, judge):
    j = judge(verdict(2))
    sample = SAMPLE.model_copy(
        update={"tool_definitions": [{"type": "function", "function": {"name": "get_policy"}}]}
    )
    r = harness.run("builtin.tool_call_accuracy", sample, judge_model=j.model)
    assert r.score == 2
    assert "none — the agent answered without calling a tool" in j.prompt(0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('prose {"a": {"b": "}"}} tail {"c": 2}', {"c": 2}),
        ('prose {"a": {"b": "}"}} tail {"c": 2', {"a": {"b": "}"}}),
        ('{"a": [1, 2,], }', {"a": [1, 2]}),
    ],
)
def test_extract_json_object(text, expected):
    assert extract_json_object(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "score: 4",
        "[1, 2]",
        '{"a": ',
        "{'a': __import__('os')}",
        '{"a": 1 + 1}',
        "```json\n{'a': None, 'b': true}\n```",
    ],
)
def test_extract_json_object_rejects(text):
    with pytest.raises(JudgeParseError):
        extract_json_object(text)
