"""No eval.yaml option is accepted and silently ignored: each one set changes what some command
does, or a warning names it (issue 20, item 6).

The keys are not listed by hand: they are walked from the eval.yaml model (`EvalConfig`), so a
key added later is probed too, and one without a probe value fails here. For each key the
suite is prepared the way the commands prepare it — `eval run` (agent, dataset, evaluators,
judge and simulator, gates, call settings), `optimize` (search settings, splits, targets) and
`eval generate` (its plan) — and what they would act on is compared with the same suite
without the key. Only consumed values are compared (a built provider's address, secrets and
flags; prices as the cost of a fixed usage; built evaluators), never a copy of the file, so a
key that is carried along and never used is caught. Task fields are covered by
tests/test_task_field_coverage.py.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from agentopt.contracts.usage import Usage
from agentopt.core.errors import AgentoptError
from agentopt.core.files.config_secrets import config_secret_values
from agentopt.core.files.eval_yaml import (
    BUILTIN_PROVIDER_TYPES,
    INTERNAL_FIELDS,
    EvalConfig,
)
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.build import EvaluatorCache
from agentopt.models.call import CallLayer
from agentopt.workflows.detect import detect_target
from agentopt.workflows.init import GenerateOptions, Kept, plan_suite
from agentopt.workflows.optimize.job import _new_job
from agentopt.workflows.optimize.options import OptimizeOptions
from agentopt.workflows.optimize.prepare import prepare_optimize
from agentopt.workflows.run.eval_run import _gate_settings, prepare_run
from agentopt.workflows.run.finish import new_run_info
from agentopt.workflows.run.inputs import RunOptions
from agentopt.workflows.run.matrix import prepare_matrix
from agentopt.workflows.run.store import RunStore
from agentopt.workflows.run.variants import variants_from_config

BASE: dict[str, Any] = {
    "name": "cov",
    "agent": {"name": "shop", "model": "mock:cov_agent", "instruction": "Be brief."},
    "dataset": {"local_uri": "tasks.jsonl"},
    "evaluators": ["builtin.exact_match"],
    "options": {"eval_model": "mock:cov_judge"},
}
RUBRIC = [
    {"id": "accuracy", "description": "Correct.", "weight": 5},
    {"id": "general_quality", "description": "Other.", "weight": 5, "always_applicable": True},
]

# key path → the value set (and other keys set with it, when the value needs them).
VALUES: dict[str, Any] = {
    "name": "other-suite",
    "agent.name": "other-agent",
    "agent.kind": "hosted",
    "agent.version": "7",
    "agent.config": ".agent_configs/alt/metadata.yaml",
    "agent.model": "mock:cov_other",
    "agent.target": "local",
    "agent.instruction": "Be verbose.",
    "agent.instruction.file": {"file": "alt.md"},
    "agent.endpoint": "http://127.0.0.1:9/v1",
    "agent.protocol": "chat_completions",
    "agent.command": ["python", "agent.py"],
    "agent.port": 9099,
    "agent.headers": {"X-Key": "COV_HEADER"},
    "dataset.name": "seed",
    "dataset.version": "1",
    "dataset.local_uri": "more.jsonl",
    "validation_dataset.local_uri": "val.jsonl",
    "test_dataset.local_uri": "held.jsonl",
    "evaluators[].name": [{"name": "builtin.partial_match"}],
    "evaluators[].version": [{"name": "builtin.exact_match", "version": "2"}],
    "evaluators[].local_uri": [{"name": "quality", "local_uri": "rubric_dimensions.json"}],
    "evaluators[].initialization_parameters": [
        {"name": "builtin.exact_match", "initialization_parameters": {"mode": "contains"}}
    ],
    "options.eval_model": "mock:cov_judge2",
    "options.optimization_model": "mock:cov_opt",
    "options.max_candidates": 3,
    "options.max_stalls": 2,
    "options.max_concurrent_agent_runs": 3,
    "options.evaluation_level": "conversation",
    "options.optimization_config.model_search_space": ["mock:cov_a", "mock:cov_b"],
    "options.optimization_config.candidate_screening_sample_size": 2,
    "options.prices.<model>.input": {"mock:cov_judge": {"input": 3.0, "output": 1.0}},
    "options.prices.<model>.output": {"mock:cov_judge": {"input": 1.0, "output": 3.0}},
    "options.prices.<model>.cached_input": {
        "mock:cov_judge": {"input": 1.0, "output": 1.0, "cached_input": 0.5}
    },
}
AGAINST: dict[str, Any] = {
    "options.prices.<model>.input": {"mock:cov_judge": {"input": 1.0, "output": 1.0}},
    "options.prices.<model>.output": {"mock:cov_judge": {"input": 1.0, "output": 1.0}},
    "options.prices.<model>.cached_input": {"mock:cov_judge": {"input": 1.0, "output": 1.0}},
    "validation_dataset.name": None,
    "validation_dataset.version": None,
    "test_dataset.name": None,
    "test_dataset.version": None,
}
"""What a key is compared against when not BASE itself: the same parent without the key."""
ALSO: dict[str, dict[str, Any]] = {
    # The agent then has two targets (instructions, model) for `targets` to narrow.
    "options.targets": {"options.optimization_config.model_search_space": ["mock:cov_a"]},
}
"""Other keys set in both the probe and what it is compared against."""
VALUES.update(
    {
        "options.judge_concurrency": 3,
        "options.repeat": 2,
        "options.seed": 11,
        "options.max_errors": 4,
        "options.max_cost": 2.5,
        "options.budget_calls": 100,
        "options.timeout_seconds": 30,
        "options.attempt_timeout_seconds": 15,
        "options.call_timeout_seconds": 300,
        "options.stall_timeout_seconds": 45,
        "options.targets": ["instructions"],
        "options.parallel_proposals": 1,
        "options.fail_under": 0.6,
        "options.min_pass_rate": 0.7,
        "options.real_tools": True,
        "options.simulator_model": "mock:cov_sim",
        "options.desired_num_turns": 3,
        "options.secrets": ["COV_NAMED"],
        "options.max_answer_bytes": 65536,
        "options.executor": "ray",
        "max_samples": 7,
        "variants[].name": [
            {"name": "one", "model": "mock:cov_a"},
            {"name": "two", "model": "mock:cov_b"},
        ],
        "variants[].model": [{"model": "mock:cov_a"}, {"model": "mock:cov_b"}],
        "variants[].instruction": [{"instruction": "Be terse."}, {"instruction": "Be kind."}],
        "variants[].instruction.file": [
            {"instruction": {"file": "alt.md"}},
            {"instruction": "Be kind."},
        ],
    }
)
# A leaf of a dataset section needs the section: a local copy, and (for the label keys) the
# label set beside it.
for section in ("validation_dataset", "test_dataset"):
    copy = {"validation_dataset": "val.jsonl", "test_dataset": "held.jsonl"}[section]
    VALUES[f"{section}.name"] = {"local_uri": copy, "name": "label"}
    VALUES[f"{section}.version"] = {"local_uri": copy, "version": "1"}
    AGAINST[f"{section}.name"] = AGAINST[f"{section}.version"] = {"local_uri": copy}
"""Keys under `options.providers.<name>` are probed per provider type (below)."""
PROVIDER_VALUES: dict[str, Any] = {
    "base_url": "http://127.0.0.1:9/v1",
    "api_key_env": "COV_KEY",
    "api_version": "2024-02-01",
    "endpoint": "https://cov.example",
    "headers": {"X-Team": "COV_TEAM"},
    "reasoning": True,
    "structured_output": "json_object",
    "tool_calling": "prompted",
}
ENV = {
    "COV_KEY": "cov-secret-key",
    "COV_TEAM": "cov-team-header",
    "COV_HEADER": "cov-agent-header",
    "COV_NAMED": "cov-named-secret",
    "OPENAI_API_KEY": "sk-cov",
    "AZURE_OPENAI_API_KEY": "az-cov",
    "AZURE_OPENAI_ENDPOINT": "https://az.example",
    "FOUNDRY_PROJECT_ENDPOINT": "https://proj.example/api/projects/p",
}


def eval_yaml_keys(model: type[BaseModel] = EvalConfig, prefix: str = "") -> list[str]:
    """Every key path of the eval.yaml model: `a.b`, `evaluators[].name`, `x.<name>.y`."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        if name in INTERNAL_FIELDS:
            continue
        path = f"{prefix}{name}"
        nested = _models_in(field.annotation)
        container = typing.get_origin(field.annotation)
        if not nested:
            keys.append(path)
            continue
        for sub, how in nested:
            if how == "plain":
                keys.append(path)
            sep = {"dict": ".<name>." if name == "providers" else ".<model>.", "list": "[]."}
            keys.extend(eval_yaml_keys(sub, path + sep.get(how, ".")))
        del container
    return sorted(set(keys))


def _models_in(annotation: Any) -> list[tuple[type[BaseModel], str]]:
    """The models a field holds: directly ("model"), as dict values, list items, or beside a
    plain value in a union ("plain": the key itself is also a leaf)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, "model")]
    if origin is dict and args and _is_model(args[1]):
        return [(args[1], "dict")]
    if origin is list and args and _is_model(args[0]):
        return [(args[0], "list")]
    if origin in (typing.Union, types.UnionType):
        models = [a for a in args if _is_model(a)]
        plain = [a for a in args if not _is_model(a) and a is not type(None)]
        return [(m, "plain" if plain else "model") for m in models]
    return []


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def with_key(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """`base` (BASE) with `path` set to `value` (a list value replaces `evaluators` or
    `variants`)."""
    data = json.loads(json.dumps(BASE if base is None else base))
    if path.startswith(("evaluators[]", "variants[]")):
        data[path.split("[]")[0]] = value
        return data
    parts = path.split(".")
    if parts[0] in ("validation_dataset", "test_dataset") and isinstance(value, dict):
        data[parts[0]] = value
        return data
    if "<model>" in parts:
        data["options"]["prices"] = value
        return data
    if parts[-1] == "file" and parts[-2] == "instruction":
        data["agent"]["instruction"] = value
        return data
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return data


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("coverage")
    rows = [{"name": f"t{i}", "query": f"q{i}", "ground_truth": f"q{i}"} for i in range(12)]
    for file, prefix in (("tasks", "t"), ("more", "m"), ("val", "v"), ("held", "h")):
        text = "".join(json.dumps({**r, "name": prefix + r["name"]}) + "\n" for r in rows)
        (root / f"{file}.jsonl").write_text(text)
    (root / "alt.md").write_text("Alternative instructions.")
    (root / "rubric_dimensions.json").write_text(json.dumps(RUBRIC))
    alt = root / ".agent_configs" / "alt"
    alt.mkdir(parents=True)
    (alt / "metadata.yaml").write_text("model: mock:cov_alt\ninstruction_file: instructions.md\n")
    (alt / "instructions.md").write_text("Alt config instructions.")
    return root


def effects(project: Path, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Observed:
    """What the commands would act on for this eval.yaml, and every warning they gave."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    path = project / "eval.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    observed = Observed()
    config, warnings = load_eval_config(path)
    observed.warn(str(w) for w in warnings)
    observed.add("masked", values=config_secret_values(config, ENV))
    run = prepare_run(RunOptions(config=path), project, None)
    observed.warn(run.notices)
    observed.warn(str(w) for w in run.inputs.warnings)
    spec, inputs = run.spec, run.inputs
    layer = CallLayer(project, run.settings.model_copy(update={"cache_enabled": False}))
    cache = EvaluatorCache(
        BuildContext(judge_model=spec.judge_model, layer=layer, project_dir=project)
    )
    observed.add(
        "run",
        agent=spec.agent.model_dump(mode="json", exclude={"source"}),
        dataset=[spec.dataset.name, spec.dataset.version, spec.dataset.source],
        evaluators=[_built(cache, u) for u in spec.evaluators],
        judge=spec.judge_model,
        repeat=spec.repeat,
        seed=run.seed,
        timeout=spec.turn_timeout_s,
        simulation=asdict(spec.simulator),
        gates=_gate_settings(run.opts, inputs),
        name=new_run_info(RunStore(project), run.opts, inputs, spec, run.seed).name,
        # eval.yaml `variants:` make `eval run` a matrix run: each variant's agent as built.
        variants=[
            a.model_dump(mode="json", exclude={"source"})
            for a in (
                r.spec.agent
                for r in prepare_matrix(
                    run.opts, variants_from_config(inputs.eval_config), project, None, base=run
                ).runs
            )
        ]
        if inputs.eval_config is not None and inputs.eval_config.variants
        else None,
        concurrency=run.settings.concurrency,
        attempt_timeout=run.settings.attempt_timeout(),
        call_timeout=[run.settings.call_timeout_s, run.settings.stall_timeout_s],
        max_answer=run.settings.max_answer_bytes,
        max_cost=run.settings.max_cost_usd,
        providers=_providers(project, run.settings),
        prices=_prices(run.settings),
        executor=asdict(run.executor),
    )
    job = prepare_optimize(OptimizeOptions(config=path, dry_run=True), project, None)
    observed.warn(job.notices)
    observed.add(
        "optimize",
        settings=_plain(job.settings),
        splits={
            "train": sorted(t.name for t in job.splits.train.tasks),
            "validation": sorted(t.name for t in job.splits.validation.tasks),
            "test": sorted(t.name for t in job.splits.test.tasks) if job.splits.test else None,
            "sources": [job.inputs.validation and job.inputs.validation.source],
        },
        targets=[job.targets.targets, job.targets.proposers],
        optimization_model=job.inputs.optimization_model,
        job=_new_job(job).config,  # what job.json records of the suite
    )
    target = detect_target(project, no_prompt=True, eval_config=load_eval_config(path)[0])
    plan = plan_suite(
        GenerateOptions(gen_instruction="A shop agent.", reset_defaults=True, cwd=project),
        target,
        asker=None,
    )
    assert not isinstance(plan, Kept)
    observed.add("generate", max_samples=plan.max_samples, name=plan.suite_name)
    return observed


class Observed:
    """Consumed values (compared) and warnings (searched for the key)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.warnings: list[str] = []

    def add(self, command: str, **values: Any) -> None:
        self.values[command] = json.loads(json.dumps(values, default=str, sort_keys=True))

    def warn(self, lines: Any) -> None:
        self.warnings.extend(str(line) for line in lines)

    def changed_from(self, other: Observed) -> list[str]:
        return [
            f"{command}.{k}"
            for command, values in self.values.items()
            for k, v in values.items()
            if other.values.get(command, {}).get(k) != v
        ]

    def names(self, key: str) -> bool:
        """Some warning names the key (its leaf, with its parent for nested keys)."""
        leaf = key.replace("[]", "").split(".")[-1]
        return any(leaf in w for w in self.warnings)


def _built(cache: EvaluatorCache, use: Any) -> Any:
    evaluator = cache.get(use)
    seen = {"class": type(evaluator).__name__, "name": getattr(evaluator, "name", "")}
    seen["options"] = getattr(evaluator, "options", None)
    dims = getattr(evaluator, "dimensions", None)
    if dims:
        seen["dimensions"] = [d.id for d in dims]
    return seen


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def _providers(project: Path, settings: Any) -> dict[str, Any]:
    """Each declared provider as built: where it sends, what it masks, how it asks."""
    layer = CallLayer(project, settings.model_copy(update={"cache_enabled": False}), environ=ENV)
    out: dict[str, Any] = {}
    for name in settings.providers:
        ref = layer.resolve(f"{name}:gpt-4o")
        provider = layer._provider(ref)
        client_version = None
        if ref.type == "azure":
            client_version = getattr(provider.client, "_api_version", None)
        server = layer._server(ref, provider)
        out[name] = {
            "server": [server.mode, server.tool_mode] if server is not None else None,
            "type": ref.type,
            "base_url": getattr(provider, "base_url", None),
            "secrets": sorted(getattr(provider, "secrets", [])),
            "reasoning": provider.is_reasoning("gpt-4o")
            if hasattr(provider, "is_reasoning")
            else None,
            "api_version": client_version,
        }
    out["bare"] = layer.resolve("gpt-4o").provider if settings.providers else None
    return out


def _prices(settings: Any) -> dict[str, Any]:
    layer = CallLayer(None, settings.model_copy(update={"cache_enabled": False}))
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    return {model: layer.prices.cost([model], usage) for model in settings.prices}


def test_every_key_has_a_probe() -> None:
    keys = [k for k in eval_yaml_keys() if not k.startswith("options.providers.")]
    missing = [k for k in keys if k not in VALUES]
    assert not missing, f"give these eval.yaml keys a probe value in VALUES: {missing}"
    assert not [k for k in VALUES if k not in keys], "VALUES names keys eval.yaml no longer has"
    provider_keys = {k.split(".")[-1] for k in eval_yaml_keys() if ".providers." in k}
    assert provider_keys - {"type", "default"} == set(PROVIDER_VALUES)


@pytest.mark.parametrize("key", sorted(VALUES))
def test_a_key_set_is_acted_on_or_warned_about(
    key: str, suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = json.loads(json.dumps(BASE))
    for other, value in ALSO.get(key, {}).items():
        start = with_key(other, value, start)
    against = with_key(key, AGAINST[key], start) if AGAINST.get(key) is not None else start
    base = effects(suite, against, monkeypatch)
    try:
        probed = effects(suite, with_key(key, VALUES[key], start), monkeypatch)
    except AgentoptError as err:  # refused outright, naming the key, is not ignored either
        leaf = key.replace("[]", "").split(".")[-1]
        assert leaf in str(err) + "".join(str(p) for p in err.problems), err
        return
    changed = probed.changed_from(base)
    assert changed or probed.names(key), (
        f"{key} is accepted and silently ignored: nothing any command acts on changed, and no "
        f"warning names it (warnings: {probed.warnings})"
    )


@pytest.mark.parametrize("provider_type", [t for t in BUILTIN_PROVIDER_TYPES])
@pytest.mark.parametrize("key", sorted(PROVIDER_VALUES))
def test_a_provider_key_is_acted_on_or_warned_about(
    key: str, provider_type: str, suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def declared(**extra: Any) -> dict[str, Any]:
        data = json.loads(json.dumps(BASE))
        config = {"type": provider_type, **extra}
        if provider_type in ("compat", "vllm") and "base_url" not in config:
            config["base_url"] = "http://127.0.0.1:8/v1"
        data["options"]["providers"] = {"lab": config}
        data["agent"]["model"] = "lab:gpt-4o"
        return data

    base = effects(suite, declared(), monkeypatch)
    probed = effects(suite, declared(**{key: PROVIDER_VALUES[key]}), monkeypatch)
    changed = probed.changed_from(base)
    named = [w for w in probed.warnings if f"options.providers.lab.{key}" in w]
    assert changed or named, (
        f"options.providers.<name>.{key} is ignored by type {provider_type} without a warning"
    )


def test_type_and_default_pick_the_provider(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads(json.dumps(BASE))
    data["options"]["providers"] = {
        "a": {"type": "mock"},
        "b": {"type": "openai", "default": True},
    }
    seen = effects(suite, data, monkeypatch).values["run"]["providers"]
    assert seen["bare"] == "b"  # default: bare model names go to it
    assert (seen["a"]["type"], seen["b"]["type"]) == ("mock", "openai")
