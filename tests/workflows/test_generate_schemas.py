"""The generator's reply schemas: portable ones for remote models, bounded ones (turned into a
llama.cpp grammar) for the embedded model. A bounded schema must accept only replies the
validator keeps, so a grammar-decoded reply is usable by construction."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentopt.models.call import CallLayer, CallSettings, ProviderConfig
from agentopt.workflows.generate.schemas import (
    answers_schema,
    batch_schema,
    grammar_decoded,
    rubric_schema,
)
from agentopt.workflows.generate.validate import check_task, task_record

BOUND_KEYS = {"minLength", "maxLength", "pattern", "minItems", "maxItems", "minimum", "maximum"}


def _walk(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk(value)


def _task(**changes: Any) -> dict[str, Any]:
    task = {
        "name": "late_refund",
        "query": "My refund for the running shoes has not arrived after two weeks.",
        "ground_truth": None,
        "category": "core",
        "criteria": [
            {"name": "states_window", "instruction": "States that refunds take 5 to 7 days."},
            {"name": "offers_check", "instruction": "Offers to check the refund status."},
        ],
    }
    task.update(changes)
    return task


def _valid(schema: dict[str, Any], instance: Any) -> bool:
    try:
        jsonschema.validate(instance, schema)
    except jsonschema.ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    "schema",
    [
        batch_schema("task", ["core", "edge"]),
        batch_schema("thread", ["core"], count=3),
        rubric_schema(),
        answers_schema(),
    ],
)
def test_remote_schemas_stay_in_the_portable_subset(schema: dict[str, Any]) -> None:
    # OpenAI's strict mode refuses length bounds; every key is required, none is extra.
    for node in _walk(schema):
        assert not BOUND_KEYS & node.keys()
        if node.get("type") == "object":
            assert node["required"] == list(node["properties"])
            assert node["additionalProperties"] is False


def test_bounded_task_batch_accepts_what_the_validator_keeps() -> None:
    schema = batch_schema("task", ["core"], count=2, bounded=True)
    reply = {"tasks": [_task(), _task(name="where_order", ground_truth="It ships today.")]}
    assert _valid(schema, reply)
    for raw in reply["tasks"]:
        check_task(task_record(raw, "core", thread=False), index=0)
    # The shortest texts the schema allows still pass the validator's word rules.
    shortest = _task(
        query="a b c",
        criteria=[{"name": "abc", "instruction": "x y z"}, {"name": "def", "instruction": "x y w"}],
    )
    assert _valid(batch_schema("task", ["core"], count=1, bounded=True), {"tasks": [shortest]})
    check_task(task_record(shortest, "core", thread=False), index=0)


def _criterion(instruction: str) -> dict[str, Any]:
    return {"name": "check", "instruction": instruction}


BAD_TASKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "empty instruction": lambda t: t["criteria"][0].update(instruction=""),
    "two-word instruction": lambda t: t["criteria"][0].update(instruction="Is polite."),
    "one criterion": lambda t: t.update(criteria=t["criteria"][:1]),
    "five criteria": lambda t: t.update(criteria=[_criterion("Check that it holds.")] * 5),
    "empty query": lambda t: t.update(query=""),
    "two-word query": lambda t: t.update(query="Refund please"),
    "JSON copied into a text": lambda t: t.update(query='Refund {"tasks": [ now'),
    "a line break": lambda t: t.update(query="Refund my\nshoes please"),
    "a word of 40 letters": lambda t: t.update(query="Refund " + "x" * 40 + " now"),
    "a name with digits": lambda t: t.update(name="task_123"),
    "another category": lambda t: t.update(category="edge"),
    "an empty ground truth": lambda t: t.update(ground_truth=""),
}  # fmt: skip


@pytest.mark.parametrize("why", list(BAD_TASKS))
def test_bounded_task_batch_refuses_what_the_embedded_model_used_to_write(why: str) -> None:
    task = copy.deepcopy(_task())
    BAD_TASKS[why](task)
    assert not _valid(batch_schema("task", ["core"], count=1, bounded=True), {"tasks": [task]})


def test_bounded_batch_holds_exactly_the_tasks_asked_for() -> None:
    schema = batch_schema("task", ["core"], count=2, bounded=True)
    assert not _valid(schema, {"tasks": [_task()]})
    assert not _valid(schema, {"tasks": [_task()] * 3})


def _turn(query: str, name: str = "check") -> dict[str, Any]:
    return {
        "query": query,
        "ground_truth": None,
        "criteria": [{"name": name, "instruction": "Answers this turn of the conversation."}],
    }


def test_bounded_thread_has_two_to_four_criteria_in_total() -> None:
    schema = batch_schema("thread", ["core"], count=1, bounded=True)

    def thread(*turns: dict[str, Any]) -> dict[str, Any]:
        return {"threads": [{"name": "exchange_flow", "category": "core", "turns": list(turns)}]}

    two = thread(_turn("I want to return my boots."), _turn("Actually make it an exchange."))
    assert _valid(schema, two)
    # One criterion per turn, named alike by a small model: the repair makes the names unique.
    task = check_task(task_record(two["threads"][0], "core", thread=True), index=0)
    assert [c.name for c in task.criteria] == ["check", "check_2"]
    assert not _valid(schema, thread(_turn("I want to return my boots.")))
    assert not _valid(schema, thread(*[_turn(f"Turn number {i} here.") for i in range(5)]))
    doubled = _turn("I want to return my boots.")
    doubled["criteria"] *= 2
    assert not _valid(schema, thread(doubled, _turn("Actually make it an exchange.")))


def test_bounded_rubric_and_answers() -> None:
    schema = rubric_schema(bounded=True, dimensions=(4, 6))
    dim = {"description": "States the refund window.", "weight": 9}
    assert _valid(schema, {"dimensions": [dim] * 4})
    assert not _valid(schema, {"dimensions": [dim] * 3})
    assert not _valid(schema, {"dimensions": [dim] * 7})
    assert not _valid(schema, {"dimensions": [{**dim, "weight": 11}] * 4})
    assert not _valid(schema, {"dimensions": [{**dim, "description": "Polite."}] * 4})
    # No id to write: the ids are made from the descriptions (a small model repeats its ids).
    assert not _valid(schema, {"dimensions": [{**dim, "id": "refund_policy"}] * 4})
    answers = answers_schema(bounded=True)
    assert _valid(answers, {"good": "Refunds take five days.", "bad": "No idea, try elsewhere."})
    assert not _valid(answers, {"good": "", "bad": "No idea, try elsewhere."})


def test_the_embedded_model_and_self_hosted_servers_are_grammar_decoded(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layer = CallLayer(project, CallSettings())
    assert grammar_decoded(layer, "local:smollm2-135m")
    assert grammar_decoded(layer, "gpt-4.1-mini")  # no provider configured: the fallback
    assert not grammar_decoded(layer, "mock:echo")
    # llama.cpp, Ollama, vLLM and LM Studio compile the JSON schema into a grammar...
    assert grammar_decoded(layer, "compat:qwen@http://127.0.0.1:9/v1")
    assert grammar_decoded(layer, "ollama:qwen2.5")
    # ...unless the schema is not sent.
    prompted = CallSettings(
        providers={
            "lab": ProviderConfig(
                type="compat", base_url="http://127.0.0.1:9/v1", structured_output="prompt"
            )
        }
    )
    assert not grammar_decoded(CallLayer(project, prompted), "lab:qwen")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert not grammar_decoded(CallLayer(project, CallSettings()), "gpt-4.1-mini")
