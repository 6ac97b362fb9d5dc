"""What `agentopt optimize` optimizes, resolved like azd: eval.yaml (found in the agent folder
and confirmed, or `-c`), then flags on top. Every missing piece is a ConfigError naming the
flag or the eval.yaml key that supplies it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentopt.contracts.task import Dataset
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.files.azure_eval import RowShape
from agentopt.core.files.eval_yaml import DatasetRef, EvalConfig
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.datasets import load_dataset
from agentopt.datasets.row_shape import shape_rows
from agentopt.evaluators.base import EvaluatorUse
from agentopt.workflows.azure_eval.suite import load_suite
from agentopt.workflows.detect import DetectedTarget, detect_target
from agentopt.workflows.eval_model import DEFAULT_MODEL
from agentopt.workflows.optimize.options import TARGETS, OptimizeOptions
from agentopt.workflows.resolve_suite import OPTIMIZE, resolve_suite
from agentopt.workflows.run.inputs import evaluator_uses
from agentopt.workflows.run.matrix import start_from_best_variant
from agentopt.workflows.suite_assets import dataset_path, verify_pinned_assets
from agentopt.workflows.suite_inputs import SuiteInputs

Ask = Callable[[str, bool], bool]
"""A yes/no question with its default; None under --no-prompt."""
OPTIMIZABLE_TARGETS = ("local", "hosted")


@dataclass(kw_only=True)
class OptimizeInputs(SuiteInputs):
    """The agent, data and evaluators of one optimization job."""

    optimization_model: str | None
    config_path: Path | None = None
    validation: Dataset | None = None
    test: Dataset | None = None
    explicit_targets: list[str] | None = None
    """--targets / options.targets as given (None = all the agent has)."""


def _config(
    opts: OptimizeOptions, cwd: Path, ask: Ask | None, notices: list[str]
) -> tuple[EvalConfig | None, Path | None, DetectedTarget, list[Problem]]:
    warnings: list[Problem] = []

    def detect(folder: Path, config: EvalConfig) -> DetectedTarget:
        return detect_target(
            folder,
            agent=opts.agent,
            no_prompt=ask is None,
            eval_config=config,
            environment=opts.environment,
        )

    if opts.config is not None:
        path = opts.config if opts.config.is_absolute() else cwd / opts.config
        if not path.is_file():
            raise ConfigError.at("", "-c/--config", f"file not found: {opts.config}")
        config, more = load_suite(path, opts.eval_name)
        warnings.extend(more)
        detected = detect(path.resolve().parent, config)
        return config, path, detected, warnings + detected.warnings
    detected = detect(cwd, EvalConfig())
    found = detected.eval_yaml
    if not found.is_file():
        return None, None, detected, warnings + detected.warnings
    if ask is not None and not ask(f"Use the eval suite in {found}?", True):
        notices.append(f"Not using {found}: the dataset and evaluators come from flags.")
        return None, None, detected, warnings + detected.warnings
    if ask is None:
        notices.append(f"Using {found} (found in the agent folder; -c/--config picks another).")
    config, more = load_eval_config(found)
    warnings.extend(more)
    detected = detect(found.resolve().parent, config)
    return config, found, detected, warnings + detected.warnings


def _load_ref(
    project: Path, ref: DatasetRef, key: str, where: str, rows: RowShape | None = None
) -> Dataset:
    dataset = shape_rows(load_dataset(dataset_path(project, ref, where, key)), rows)
    return dataset.model_copy(update={"name": ref.name, "version": ref.version})


def _agent(detected: DetectedTarget, opts: OptimizeOptions) -> AgentDefinition:
    agent = detected.definition
    if agent is None:
        raise ConfigError(
            "no agent to optimize: no azure.yaml agent service, eval.yaml `agent:` or "
            ".agent_configs/baseline/ was found",
            hint="pass -a/--agent NAME for an azure.yaml service, set `agent.config` in "
            "eval.yaml, or run `agentopt eval init`",
        )
    target = agent.target or detected.target
    if target not in OPTIMIZABLE_TARGETS:
        raise ConfigError.at(
            "",
            "agent.target",
            f"agent '{agent.name}' runs as target '{target}', which takes no configuration: "
            "optimize needs a prompt agent (target local) or a hosted agent that reads "
            "OPTIMIZATION_CONFIG (target hosted)",
        )
    if agent.model is None and target == "local":
        agent = agent.model_copy(update={"model": DEFAULT_MODEL})
    # Pinned, so a candidate runs the way the baseline does whatever its mutations.
    return agent.model_copy(update={"target": target})


def _needs_evaluator(dataset: Dataset, evaluators: list[EvaluatorUse]) -> bool:
    if evaluators or dataset.format == "m365":
        return False
    return not all(t.criteria for t in dataset.tasks)


def resolve_optimize_inputs(opts: OptimizeOptions, cwd: Path, ask: Ask | None) -> OptimizeInputs:
    """Find the eval suite, the agent and the dataset; validate what optimize needs."""
    notices: list[str] = []
    config, config_path, detected, warnings = _config(opts, cwd, ask, notices)
    project = detected.project_dir
    where = str(config_path or "eval.yaml")
    if config is not None:
        verify_pinned_assets(config)
    agent = _agent(detected, opts)
    if opts.from_matrix:
        agent = start_from_best_variant(project, opts.from_matrix, agent, notices)
    if opts.dataset is not None:
        path = opts.dataset if opts.dataset.is_absolute() else cwd / opts.dataset
        dataset = load_dataset(path)
    elif config is not None and config.dataset is not None:
        dataset = _load_ref(project, config.dataset, "dataset", where, config.rows)
    else:
        raise ConfigError(
            "no dataset to optimize on",
            hint="pass -d/--dataset PATH, or set `dataset:` in eval.yaml "
            "(`agentopt eval generate` writes one)",
        )
    if not dataset.tasks:
        raise ConfigError.at(dataset.source, "", "the dataset has no task")
    validation = test = None
    if config is not None and config.validation_dataset is not None:
        validation = _load_ref(project, config.validation_dataset, "validation_dataset", where)
    if config is not None and config.test_dataset is not None:
        test = _load_ref(project, config.test_dataset, "test_dataset", where)
    evaluators = evaluator_uses(config, opts.evaluators, warnings)
    if _needs_evaluator(dataset, evaluators):
        raise ConfigError(
            "optimize needs at least one evaluator to score candidates (only some tasks have "
            "criteria)",
            hint="pass --evaluator NAME (repeatable), or list `evaluators:` in eval.yaml",
        )
    suite = resolve_suite(OPTIMIZE, opts, config, detected, agent=agent)
    targets = list(suite["targets"]) if suite["targets"] else None
    for name in targets or []:
        if name not in TARGETS:
            raise ConfigError.at(
                "", "--targets", f"unknown target '{name}'; expected some of: {', '.join(TARGETS)}"
            )
    return OptimizeInputs(
        project_dir=project,
        agent=agent,
        dataset=dataset,
        evaluators=evaluators,
        judge_model=suite["judge_model"],
        optimization_model=suite["optimization_model"],
        eval_config=config,
        config_path=config_path,
        validation=validation,
        test=test,
        explicit_targets=targets,
        warnings=warnings + list(dataset.warnings),
        notices=notices,
        suite=suite,
    )
