"""No task field is accepted and silently ignored: each one set changes what `eval run` sends
or records, or a warning names it (issue 20, item 6; eval.yaml keys:
tests/test_option_coverage.py).

The fields are the Foundry task JSONL loader's own lists (`TASK_KEYS`, `TURN_KEYS` and the
`simulation_configuration` keys it acts on), so a field added there is probed here too. Each
probe runs the suite on scripted `mock:` models and compares what reached them (every request,
per model) and the task's record in results.json with the same task without the field. An
alias must act exactly as the field it stands for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentopt.datasets.foundry import NAME_KEYS, QUERY_KEYS, TASK_KEYS, TRUTH_KEYS, TURN_KEYS
from agentopt.datasets.simulation_fields import GOAL_KEYS, SIMULATION_KEYS
from agentopt.models.providers.mock import register_mock, unregister_mock
from agentopt.models.types import ChatRequest, ChatResponse, FunctionCall, Message, ToolCall
from agentopt.workflows.events import NullSink
from agentopt.workflows.run.eval_run import prepare_run, run_prepared
from agentopt.workflows.run.inputs import RunOptions

SINGLE: dict[str, Any] = {"name": "t1", "query": "where is order 7?", "ground_truth": "shipped"}
THREAD: dict[str, Any] = {"name": "t1", "turns": [{"prompt": "hello"}, {"prompt": "order 7?"}]}
THREAD_KEY = "turns[]."
ALIASES = {
    **{k: "name" for k in NAME_KEYS[1:]},
    **{k: "query" for k in QUERY_KEYS[1:]},
    **{k: "ground_truth" for k in TRUTH_KEYS[1:]},
    **{k: "goal" for k in GOAL_KEYS[1:]},
}

# field → (the task it is set on, the value).
VALUES: dict[str, tuple[dict[str, Any], Any]] = {
    "name": (SINGLE, "renamed"),
    "query": (SINGLE, "and order 8?"),
    "ground_truth": (SINGLE, "delivered"),
    "context": (SINGLE, "Order 7 shipped on Monday."),
    "criteria": (SINGLE, [{"name": "says_status", "instruction": "Gives the status."}]),
    "turns": (SINGLE, [{"prompt": "hi"}, {"prompt": "order 7?"}]),
    "desired_num_turns": (SINGLE, 2),
    "persona": (SINGLE, "A terse customer."),
    "goal": (SINGLE, "Learn where order 7 is."),
    "stop_when": (SINGLE, "The agent gives the status."),
    "simulation_configuration": (SINGLE, {"desired_num_turns": 2}),
    "category": (SINGLE, "orders"),
    "tags": (SINGLE, ["smoke"]),
    "metadata": (SINGLE, {"owner": "team-a"}),
    "tool_mocks": (SINGLE, {"get_order": [{"return": {"status": "lost"}}]}),
    "description": (SINGLE, "Checks the order lookup."),
    "candidate_response": (SINGLE, "Order 7 has shipped."),
    "evaluators": (SINGLE, {"builtin.partial_match": {}}),
    "evaluators_mode": (
        {**SINGLE, "evaluators": {"builtin.partial_match": {}}},
        "replace",
    ),
    THREAD_KEY + "query": (THREAD, "order 9?"),
    THREAD_KEY + "ground_truth": (THREAD, "shipped"),
    THREAD_KEY + "context": (THREAD, "Order 7 shipped on Monday."),
    THREAD_KEY + "criteria": (THREAD, [{"name": "polite", "instruction": "Is polite."}]),
    THREAD_KEY + "evaluators": (THREAD, {"builtin.partial_match": {}}),
    THREAD_KEY + "evaluators_mode": (
        {"name": "t1", "turns": [{"prompt": "hi"}, {"prompt": "x", "evaluators": ["Fluency"]}]},
        "replace",
    ),
    "simulation_configuration.desired_num_turns": ({**SINGLE, "goal": "status"}, 2),
    "simulation_configuration.max_num_turns": ({**SINGLE, "goal": "status"}, 3),
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
        },
    }
]
SENT: list[dict[str, Any]] = []


def fields() -> list[str]:
    """Every task field the JSONL loader reads, turn fields as `turns[].<field>`."""
    keys = [k for k in TASK_KEYS if k not in ALIASES]
    keys += [THREAD_KEY + k for k in TURN_KEYS if k not in ALIASES]
    keys += [f"simulation_configuration.{k}" for k in SIMULATION_KEYS]
    return sorted(set(keys))


def agent(request: ChatRequest) -> ChatResponse | str:
    """Looks the order up when it has the tool, then repeats what the tool said."""
    SENT.append(_seen("agent", request))
    last = request.messages[-1]
    if request.tools and last.role == "user":
        call = ToolCall(id="c1", function=FunctionCall(name="get_order", arguments='{"id":"7"}'))
        return ChatResponse(message=Message(role="assistant", tool_calls=[call]))
    return f"shipped ({last.content})"


def judge(request: ChatRequest) -> str:
    """A simulated user that stops at once; judges that pass everything."""
    SENT.append(_seen("judge", request))
    name = (request.response_format or {}).get("json_schema", {}).get("name")
    text = str(request.messages[-1].content)
    if name == "simulated_user":
        return json.dumps({"reason": "done", "action": "goal_reached", "message": ""})
    if name == "task_adherence":
        names = re.findall(r"^- name: (\S+)$", text, flags=re.MULTILINE)
        return json.dumps(
            {"verdicts": [{"name": n, "passed": True, "reason": "ok"} for n in names]}
        )
    return json.dumps({"reason": "fine", "score": 4})


def _seen(model: str, request: ChatRequest) -> dict[str, Any]:
    fmt = (request.response_format or {}).get("json_schema", {}).get("name")
    return {"model": model, "format": fmt, "messages": [m.content for m in request.messages]}


@pytest.fixture(autouse=True, scope="module")
def scripted() -> Iterator[None]:
    register_mock("fields_agent", agent)
    register_mock("fields_judge", judge)
    yield
    unregister_mock("fields_agent")
    unregister_mock("fields_judge")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fields")
    baseline = root / ".agent_configs" / "baseline"
    baseline.mkdir(parents=True)
    (baseline / "metadata.yaml").write_text(
        "model: mock:fields_agent\ninstruction_file: instructions.md\ntools_file: tools.json\n"
    )
    (baseline / "instructions.md").write_text("You answer order questions.")
    (baseline / "tools.json").write_text(json.dumps(TOOLS))
    (baseline / "tool_mocks.json").write_text(
        json.dumps({"get_order": [{"return": {"status": "shipped"}}]})
    )
    (root / "eval.yaml").write_text(
        "name: fields\n"
        "agent:\n  name: shop\n  config: .agent_configs/baseline/metadata.yaml\n"
        "dataset:\n  local_uri: tasks.jsonl\n"
        "evaluators: [builtin.exact_match, builtin.groundedness]\n"
        "options:\n  eval_model: mock:fields_judge\n"
    )
    return root


def effects(project: Path, task: dict[str, Any]) -> tuple[Any, list[str]]:
    """What the models were sent and the task's record, and the run's warnings."""
    (project / "tasks.jsonl").write_text(json.dumps(task) + "\n")
    SENT.clear()
    prepared = prepare_run(RunOptions(config=project / "eval.yaml", no_cache=True), project, None)
    warnings = [str(w) for w in (*prepared.inputs.warnings, *prepared.inputs.dataset.warnings)]
    outcome = run_prepared(prepared, NullSink())
    assert outcome.results is not None
    [record] = outcome.results.model_dump(mode="json")["tasks"]
    return {"sent": list(SENT), "record": _stable(record)}, warnings


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in ("latency_s",)}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def with_field(task: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(task))
    if key.startswith(THREAD_KEY):
        turn = data["turns"][-1]
        if key == THREAD_KEY + "query":
            turn.pop("prompt")
        turn[key.removeprefix(THREAD_KEY)] = value
    elif key.startswith("simulation_configuration."):
        data["simulation_configuration"] = {key.split(".")[1]: value}
    elif key == "turns":
        data.pop("query"), data.pop("ground_truth")
        data["turns"] = value
    else:
        data[key] = value
    return data


def test_every_field_has_a_probe() -> None:
    assert not [k for k in fields() if k not in VALUES], "give these task fields a probe value"
    assert not [k for k in VALUES if k not in fields()], "VALUES names fields the loader lost"


@pytest.mark.parametrize("key", fields())
def test_a_field_set_is_acted_on_or_warned_about(key: str, suite: Path) -> None:
    task, value = VALUES[key]
    base, _ = effects(suite, task)
    probed, warnings = effects(suite, with_field(task, key, value))
    leaf = key.split(".")[-1]
    assert probed != base or any(leaf in w for w in warnings), (
        f"task field {key} is accepted and silently ignored: nothing sent or recorded changed "
        f"and no warning names it (warnings: {warnings})"
    )


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_acts_as_its_field(alias: str, suite: Path) -> None:
    field = ALIASES[alias]
    task, value = VALUES[field]
    canonical = with_field(task, field, value)
    spelled = {(alias if k == field else k): v for k, v in canonical.items()}
    assert effects(suite, spelled)[0] == effects(suite, canonical)[0]


def test_simulation_configuration_keys_not_acted_on_are_named(suite: Path) -> None:
    task = {**SINGLE, "simulation_configuration": {"user_behavior": {}, "audio_effects": {}}}
    _, warnings = effects(suite, task)
    for key in ("user_behavior", "audio_effects"):
        assert any(f"simulation_configuration.{key}" in w and "ignored" in w for w in warnings)
