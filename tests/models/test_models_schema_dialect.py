"""Every schema agentopt can send, through fakes as strict as OpenAI's and Azure's structured
outputs (tests/strict_schema.py): the hosted dialect is never refused, a self-hosted gateway
that refuses the bounded form steps down once and remembers it, and what the strict form leaves
unenforced is checked on our side."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentopt.evaluators.judges.entailment import SCHEMA as ENTAILMENT_SCHEMA
from agentopt.evaluators.judges.judge_base import SCORE_EXAMPLE, SCORE_SCHEMA, ScoreReply
from agentopt.evaluators.judges.judge_call import (
    JUDGE_TEXT_CHARS,
    call_judge,
    capped_reasons,
    sent_schema,
)
from agentopt.evaluators.judges.prompt_judge import scale_schema
from agentopt.evaluators.judges.prompty_judge import SCHEMA as PROMPTY_SCHEMA
from agentopt.evaluators.judges.rubric import schema_for as rubric_judge_schema
from agentopt.evaluators.judges.task_adherence import (
    EXAMPLE as VERDICTS_EXAMPLE,
)
from agentopt.evaluators.judges.task_adherence import (
    VerdictsReply,
    _schema_for,
)
from agentopt.models import CallLayer, ProviderConfig
from agentopt.models.prompted_tools import prompted_request
from agentopt.models.providers.local_tools import capped_strings
from agentopt.models.schema_dialect import keyed, reply_problems, restore, to_strict
from agentopt.models.structured import schema_max_tokens
from agentopt.models.types import ChatRequest, Message, ToolDef
from agentopt.workflows.generate.schemas import answers_schema, batch_schema, rubric_schema
from agentopt.workflows.optimize.strategies.instructions import SCHEMA as INSTRUCTIONS_SCHEMA
from agentopt.workflows.optimize.strategies.skills import SCHEMA as SKILL_SCHEMA
from agentopt.workflows.run.simulated_user import REPLY_SCHEMA as SIMULATOR_SCHEMA
from tests.fake_openai import FakeOpenAI, Reply, text, tool_calls
from tests.models.helpers import fast_settings
from tests.strict_schema import violation

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
CRITERIA = ["states_refund_window", "offers_label", "polite_tone"]
DIMENSIONS = ["refund_accuracy", "tone", "general_quality"]


def real_tools() -> list[ToolDef]:
    """The foundry-samples prompt agent's tools as its agent.yaml declares them: `strict:
    true`, an optional `unit`, no `additionalProperties` — what OpenAI's strict mode refuses."""
    data = yaml.safe_load((REAL / "fs-prompt-02-tools" / "agent.yaml").read_text())
    return [
        ToolDef(function={k: v for k, v in tool.items() if k != "type"}) for tool in data["tools"]
    ]


def produced_schemas() -> dict[str, dict[str, Any]]:
    """Every schema the code can produce, by who produces it, in the forms it sends: the
    generator's (portable and bounded), the rubric's and its self-check's, every judge kind's
    (as call_judge sends it: reasons capped; bounded judges' strings capped and entries
    pinned), the simulated user's, the optimizer's reflections, and prompted tool use."""
    out: dict[str, dict[str, Any]] = {}
    for bounded in (False, True):
        tag = "bounded" if bounded else "portable"
        for kind in ("task", "thread", "simulated"):
            out[f"generate.{kind}.{tag}"] = batch_schema(
                kind,  # type: ignore[arg-type]
                ["refunds", "shipping"],
                count=3,
                bounded=bounded,
            )
        out[f"generate.rubric.{tag}"] = rubric_schema(bounded=bounded)
        out[f"generate.rubric_check.{tag}"] = answers_schema(bounded=bounded)
        judges = {
            "scale": SCORE_SCHEMA,
            "task_adherence": _schema_for(CRITERIA, exact_count=bounded),
            "rubric": rubric_judge_schema(DIMENSIONS, exact_count=bounded),
            "prompt_judge": scale_schema(0, 10),
            "prompty": PROMPTY_SCHEMA,
            "entailment": ENTAILMENT_SCHEMA,
            "simulator": SIMULATOR_SCHEMA,
        }
        for name, schema in judges.items():
            out[f"judge.{name}.{tag}"], _ = sent_schema(schema, grammar=bounded)
    out["optimize.instructions"] = INSTRUCTIONS_SCHEMA
    out["optimize.skill"] = SKILL_SCHEMA
    tools = real_tools()
    for choice in ("auto", "required"):
        request = ChatRequest(
            messages=[Message(role="user", content="Weather in Oslo?")],
            tools=tools,
            tool_choice=choice,
        )
        fmt = prompted_request(request).response_format or {}
        out[f"prompted_tools.{choice}"] = fmt["json_schema"]["schema"]
    return out


def test_the_strict_fake_refuses_a_hand_made_prefix_items_schema_as_openai_does() -> None:
    schema = {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "prefixItems": [{"type": "string", "const": "a"}],
                "minItems": 1,
                "maxItems": 1,
            }
        },
        "required": ["verdicts"],
        "additionalProperties": False,
    }
    body = {
        "model": "gpt-4.1-mini",
        "messages": [{"role": "user", "content": "hi"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "verdicts", "schema": schema, "strict": True},
        },
    }
    with FakeOpenAI() as srv:
        srv.expect_refusals = True
        request = urllib.request.Request(
            f"{srv.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=10)
        assert len(srv.refusals) == 1
    assert err.value.code == 400
    answer = json.loads(err.value.read())["error"]
    assert answer["type"] == "invalid_request_error" and answer["param"] == "response_format"
    assert answer["message"] == (
        "Invalid schema for response_format 'verdicts': In context=('properties', 'verdicts'), "
        "'prefixItems' is not permitted."
    )
    # The strict form of the same schema passes both services' rules.
    assert violation(to_strict(schema), "openai") is None
    assert violation(to_strict(schema), "azure") is None


@pytest.mark.parametrize("name", sorted(produced_schemas()))
def test_every_produced_schema_in_the_strict_form_is_in_both_services_subsets(name: str) -> None:
    strict = to_strict(produced_schemas()[name])
    assert violation(strict, "openai") is None
    assert violation(strict, "azure") is None


def openai_layer(project: Path, srv: FakeOpenAI, kind: str = "openai") -> CallLayer:
    provider = ProviderConfig(type=kind, base_url=srv.base_url, api_key_env="TEST_OPENAI_KEY")  # type: ignore[arg-type]
    return CallLayer(project, fast_settings(providers={"hosted": provider}))


def structured(name: str, schema: dict[str, Any], **kwargs: Any) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="user", content=f"reply for {name}")],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": name.replace(".", "_"), "schema": schema, "strict": True},
        },
        **kwargs,
    )


@pytest.mark.parametrize("flavour", ["openai", "azure"])
def test_every_produced_schema_goes_through_the_strict_fake_with_no_refusal(
    project: Path, monkeypatch: pytest.MonkeyPatch, flavour: str
) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test")
    schemas = produced_schemas()

    async def main(srv: FakeOpenAI) -> dict[str, str]:
        async with openai_layer(project, srv) as layer:
            for name, schema in schemas.items():
                await layer.complete("hosted:gpt-4.1-mini", structured(name, schema))
            # The agent's own strict tools, as agent.yaml declares them, natively.
            tools = ChatRequest(
                messages=[Message(role="user", content="Weather in Oslo?")], tools=real_tools()
            )
            await layer.complete("hosted:gpt-4.1-mini", tools)
            return layer.stats().capabilities["hosted:gpt-4.1-mini"]

    with FakeOpenAI(schemas=flavour) as srv:  # type: ignore[arg-type]
        caps = asyncio.run(main(srv))
        assert srv.refusals == []
        assert srv.count() == len(schemas) + 1
        sent = [r.body["response_format"]["json_schema"]["schema"] for r in srv.chat_requests[:-1]]
        weather = srv.chat_requests[-1].body["tools"][0]["function"]
    assert caps["schema_dialect"] == "strict" and caps["structured_output"] == "json_schema_strict"
    assert all(violation(s, flavour) is None for s in sent)  # type: ignore[arg-type]
    assert not any("prefixItems" in json.dumps(s) for s in sent)
    assert weather["parameters"]["required"] == ["city", "unit"]
    assert weather["parameters"]["properties"]["unit"]["type"] == ["string", "null"]


def test_a_gateway_refusing_the_bounded_form_steps_down_once_and_remembers(
    project: Path,
) -> None:
    """A LiteLLM-style gateway in front of OpenAI (`compat`): judges send the bounded form
    (pinned verdicts, capped reasons); the first refusal names `prefixItems`, every later call
    — this run's and the next run's — sends the strict form."""
    bounded = capped_strings(capped_reasons(_schema_for(CRITERIA, exact_count=True)), 400)
    verdicts = {
        "verdicts": [{"name": c, "passed": True, "reason": "ok"} for c in reversed(CRITERIA)]
    }
    notices: list[str] = []

    async def run(srv: FakeOpenAI, calls: range) -> dict[str, str]:
        provider = ProviderConfig(type="compat", base_url=srv.base_url)
        settings = fast_settings(providers={"gateway": provider})
        async with CallLayer(project, settings, on_notice=notices.append) as layer:
            for i in calls:
                outcome = await call_judge(
                    layer,
                    "gateway:gpt-4.1-mini",
                    [Message(role="user", content=f"judge {i}")],
                    schema_name="task_adherence",
                    schema=bounded,
                    reply_model=VerdictsReply,
                    example=VERDICTS_EXAMPLE,
                )
                assert outcome.value is not None, outcome.error
            return layer.stats().capabilities["gateway:gpt-4.1-mini"]

    with FakeOpenAI() as srv:
        srv.expect_refusals = True
        srv.handler = lambda req: text(json.dumps(verdicts))
        caps = asyncio.run(run(srv, range(3)))
        first_run = list(srv.chat_requests)
        assert len(srv.refusals) == 1
        asyncio.run(run(srv, range(3, 4)))  # the next run, same cache: no probe, no refusal
        assert len(srv.refusals) == 1 and srv.count() == len(first_run) + 1
    refused = first_run[0].body["response_format"]["json_schema"]["schema"]
    assert "prefixItems" in json.dumps(refused)
    assert caps["schema_dialect"] == "strict"
    assert caps["structured_output"] == "json_schema_strict"  # still strict structured output
    assert len(first_run) == 4  # one refusal, then three accepted calls
    assert len(notices) == 1 and "'prefixItems' is not permitted" in notices[0]
    sent = first_run[1].body["response_format"]["json_schema"]["schema"]
    item = sent["properties"]["verdicts"]["items"]
    assert item["properties"]["name"] == {"enum": CRITERIA}
    assert "exactly 3 items" in sent["properties"]["verdicts"]["description"]
    assert "at most 400 characters" in item["properties"]["reason"]["description"]


def test_a_llama_server_keeps_the_bounded_form(project: Path) -> None:
    bounded = capped_reasons(_schema_for(CRITERIA, exact_count=True))

    async def main(srv: FakeOpenAI) -> dict[str, str]:
        provider = ProviderConfig(type="compat", base_url=srv.base_url)
        async with CallLayer(project, fast_settings(providers={"llama": provider})) as layer:
            await layer.complete("llama:smollm2", structured("task_adherence", bounded))
            return layer.stats().capabilities["llama:smollm2"]

    with FakeOpenAI(schemas="any") as srv:
        caps = asyncio.run(main(srv))
        assert srv.chat_requests[0].body["response_format"]["json_schema"]["schema"] == bounded
    assert caps["schema_dialect"] == "bounded"


def judge_once(project: Path, srv: FakeOpenAI, schema: dict[str, Any], model: Any) -> Any:
    async def main() -> Any:
        async with openai_layer(project, srv) as layer:
            return await call_judge(
                layer,
                "hosted:gpt-4.1-mini",
                [Message(role="user", content="judge")],
                schema_name="judge",
                schema=schema,
                reply_model=model,
                example=SCORE_EXAMPLE,
            )

    return asyncio.run(main())


def test_a_reason_is_bounded_for_every_provider_and_cut_on_our_side(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test")
    long_reason = "It answers the question. " * 60  # 1,500 characters
    with FakeOpenAI() as srv:
        srv.queue(text(json.dumps({"reason": long_reason, "score": 4})))
        outcome = judge_once(project, srv, SCORE_SCHEMA, ScoreReply)
        sent = srv.chat_requests[0].body
    assert outcome.value is not None and outcome.value.score == 4 and outcome.attempts == 1
    assert len(outcome.value.reason) == JUDGE_TEXT_CHARS
    assert outcome.value.reason.endswith("…")
    reason = sent["response_format"]["json_schema"]["schema"]["properties"]["reason"]
    assert reason == {"type": "string", "description": "at most 400 characters"}
    assert sent["max_tokens"] <= 400  # the bound follows the rich schema's maxLength


def test_replies_to_the_strict_form_are_checked_against_the_rich_schema(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pinned verdicts are read by key (any order is fine), but a verdict for a criterion
    that is not asked about, or one too many, is quoted back to the judge."""
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test")
    pinned = _schema_for(CRITERIA, exact_count=True)

    def reply(names: list[str]) -> Reply:
        rows = [{"name": n, "passed": True, "reason": "ok"} for n in names]
        return text(json.dumps({"verdicts": rows}))

    with FakeOpenAI() as srv:
        srv.queue(reply([*CRITERIA, CRITERIA[0]]), reply(list(reversed(CRITERIA))))
        outcome = judge_once(project, srv, pinned, VerdictsReply)
        reask = srv.chat_requests[1].body["messages"][-1]["content"]
    assert outcome.value is not None and outcome.attempts == 2
    assert "the JSON breaks its schema: verdicts: expected at most 3 items, found 4" in reask
    assert reply_problems({"verdicts": [{"name": "x", "passed": True, "reason": ""}]}, pinned)


def test_optional_tool_arguments_come_back_as_the_tool_declares_them(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A strict tool's optional parameter is nullable in the strict form; the null the model
    then sends is dropped before the agent sees the call."""
    monkeypatch.setenv("TEST_OPENAI_KEY", "sk-test")

    async def main(srv: FakeOpenAI) -> Any:
        async with openai_layer(project, srv) as layer:
            request = ChatRequest(
                messages=[Message(role="user", content="Weather in Oslo?")], tools=real_tools()
            )
            return await layer.complete("hosted:gpt-4.1-mini", request)

    with FakeOpenAI() as srv:
        srv.queue(tool_calls([("get_weather", {"city": "Oslo", "unit": None})]))
        response = asyncio.run(main(srv))
    assert json.loads(response.tool_calls[0].function.arguments) == {"city": "Oslo"}


def test_restore_and_keyed_read_the_rich_schema() -> None:
    rich = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}},
        "required": [],
    }
    assert restore({"a": None, "b": None}, rich) == {"b": None}
    assert to_strict(rich)["required"] == ["a", "b"]
    tuple_ = {"type": "array", "prefixItems": [{"const": 1}, {"const": 2}]}
    assert keyed(tuple_) == {
        "type": "array",
        "items": {"anyOf": [{"const": 1}, {"const": 2}]},
        "minItems": 2,
        "maxItems": 2,
    }


def test_a_judge_sends_its_schema_worked_out_once_and_a_fresh_copy_each_call() -> None:
    """What `call_judge` sends is the schema with its reasons capped (and, to a grammar-decoded
    judge, every free string), and the bound of its reply; worked out once per schema, and
    a copy the caller may change without changing the next call's."""
    schema = _schema_for(CRITERIA, exact_count=True)
    for grammar in (False, True):
        expected = capped_reasons(schema)
        if grammar:
            expected = capped_strings(expected, JUDGE_TEXT_CHARS)
        first, bound = sent_schema(schema, grammar=grammar)
        assert first == expected and bound == schema_max_tokens(expected)
        first["properties"].clear()
        again, _ = sent_schema(schema, grammar=grammar)
        assert again == expected
    free = {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}
    assert sent_schema(free, grammar=True)[0]["properties"]["note"]["maxLength"] == JUDGE_TEXT_CHARS
    assert "maxLength" not in sent_schema(free, grammar=False)[0]["properties"]["note"]
