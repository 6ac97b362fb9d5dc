"""The body of `POST /agent_optimization_jobs` (V2Preview), as azd builds it from eval.yaml and
`.agent_configs/baseline/` (azd `OptimizeConfig.ToRequest`, `datasetRefToAPI`,
`loadJSONLRawFile`; docs/foundry-remote.md):

    {"inputs": {"agent": {agent_name, agent_version?},
                "train_dataset": {"type": "inline", "items": [each JSONL line as is]}
                               | {"type": "reference", "name", "version"},
                "validation_dataset"?: …,
                "evaluators": [{name, version?, initialization_parameters?}],
                "options": {max_candidates?, eval_model, optimization_model, evaluation_level,
                            max_stalls, max_concurrent_agent_runs,
                            optimization_config: {model, system_prompt, skills, tools,
                                                  model_search_space?}}}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentopt.contracts.resolved_suite import ResolvedSuite
from agentopt.contracts.task import Dataset, Task
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.files.eval_yaml import EvalConfig
from agentopt.workflows.remote.eval_request import RemoteCriterion


def dataset_item(task: Task) -> dict[str, Any]:
    """`AgentOptimizationDatasetItem`: query, ground_truth?, desired_num_turns?, criteria?."""
    item: dict[str, Any] = {"query": task.query}
    if task.ground_truth is not None:
        item["ground_truth"] = task.ground_truth
    if task.desired_num_turns is not None:
        item["desired_num_turns"] = task.desired_num_turns
    if task.criteria:
        item["criteria"] = [{"name": c.name, "instruction": c.instruction} for c in task.criteria]
    return item


def dataset_input(dataset: Dataset, reference: tuple[str, str] | None = None) -> dict[str, Any]:
    """azd `datasetRefToAPI`: a registered dataset (`name` + `version`) goes as a reference to
    the project's copy; a local file goes inline, each JSONL line as it is (`loadJSONLRawFile`:
    every key kept, `name` included). Other shapes (M365, CSV) go as the task fields."""
    if reference is not None:
        return {"type": "reference", "name": reference[0], "version": reference[1]}
    rows = raw_rows(dataset)
    return {"type": "inline", "items": rows or [dataset_item(t) for t in dataset.tasks]}


def raw_rows(dataset: Dataset) -> list[dict[str, Any]] | None:
    """The JSONL file's rows verbatim, when the dataset is that whole file."""
    path = Path(dataset.source) if dataset.source else None
    if dataset.format != "jsonl" or path is None or not path.is_file():
        return None
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return rows if len(rows) == len(dataset.tasks) else None


def _skills(agent: AgentDefinition) -> list[dict[str, str]]:
    return [{"name": s.name, "description": s.description, "body": s.body} for s in agent.skills]


def optimization_body(
    *,
    agent: AgentDefinition,
    agent_name: str,
    agent_version: str | None,
    dataset: Dataset,
    validation: Dataset | None,
    config: EvalConfig | None,
    references: dict[str, tuple[str, str]] | None = None,
    criteria: list[RemoteCriterion],
    suite: ResolvedSuite,
) -> dict[str, Any]:
    """The whole request body, `{"inputs": AgentOptimizationJobInputs}`. A setting left at
    agentopt's default is left out (azd's `omitempty`: the service's default applies)."""
    options = config.options if config is not None else None
    opt_config: dict[str, Any] = {}
    if agent.model:
        opt_config["model"] = agent.model
    if agent.instructions:
        opt_config["system_prompt"] = agent.instructions
    if agent.skills:
        opt_config["skills"] = _skills(agent)
    if agent.tools:
        opt_config["tools"] = agent.tools
    if suite["model_search_space"]:
        opt_config["model_search_space"] = list(suite["model_search_space"])
    if suite.given("screening_size"):
        opt_config["candidate_screening_sample_size"] = suite["screening_size"]
    run_options: dict[str, Any] = {
        "eval_model": suite["judge_model"],
        "optimization_model": suite["optimization_model"],
        "optimization_config": opt_config,
    }
    for key in ("max_candidates", "max_stalls"):  # azd `*int, omitempty`
        if suite.given(key):
            run_options[key] = suite[key]
    if options is not None and options.max_concurrent_agent_runs:
        run_options["max_concurrent_agent_runs"] = options.max_concurrent_agent_runs
    if options is not None and options.evaluation_level == "conversation":
        run_options["evaluation_level"] = "conversation"
    inputs: dict[str, Any] = {
        "agent": {
            "agent_name": agent_name,
            **({"agent_version": agent_version} if agent_version else {}),
        },
        "train_dataset": dataset_input(dataset, (references or {}).get("train")),
        "evaluators": [_evaluator(c) for c in criteria],
        "options": run_options,
    }
    if validation is not None:
        inputs["validation_dataset"] = dataset_input(
            validation, (references or {}).get("validation")
        )
    return {"inputs": inputs}


def _evaluator(crit: RemoteCriterion) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": crit.foundry_name}
    if crit.version:
        entry["version"] = crit.version
    if crit.options:
        entry["initialization_parameters"] = dict(crit.options)
    return entry
