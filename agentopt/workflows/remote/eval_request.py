"""The request bodies of a remote evaluation, as azd builds them (docs/foundry-remote.md).

Create-eval: azd `EvalConfig.ToAgentTargetAdaptableEvalGroupRequest` (custom data source with a
`query` item schema, one `azure_ai_evaluator` testing criterion per evaluator with the eval
model as `model`/`deployment_name`). Create-run: azd `NewAgentTargetDataSource`
(`azure_ai_target_completions`, a `{{item.query}}` user message, an `azure_ai_agent` target
by deployed name and version) with the rows inline (`file_content`) or a registered dataset
(`file_id` = `azureai://accounts/<account>/projects/<project>/data/<name>/versions/<v>`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from agentopt.contracts.task import Task
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.build import EvaluatorCache
from agentopt.evaluators.judges.rubric import RubricEvaluator
from agentopt.evaluators.registry import canonical_name

REMOTE_BUILTINS = (
    "builtin.task_adherence",
    "builtin.intent_resolution",
    "builtin.relevance",
    "builtin.coherence",
    "builtin.fluency",
    "builtin.groundedness",
    "builtin.similarity",
    "builtin.tool_call_accuracy",
)
"""agentopt judges that are Foundry builtin evaluators of the same name."""
OPTIMIZER_BUILTINS = ("builtin.regex_match",)
"""Builtins agentopt runs locally in an evaluation but that Foundry's optimizer takes by name
with their `initialization_parameters` (azd PR #9472: `builtin.regex_match` + `patterns`)."""
ZERO_ONE = ("builtin.task_adherence",)
"""Builtins whose Foundry score is a fraction (0–1); the others score 1–5."""
DATA_MAPPING = {
    "query": "{{item.query}}",
    "response": "{{sample.output_items}}",
    "tool_calls": "{{sample.tool_calls}}",
    "tool_definitions": "{{sample.tool_definitions}}",
}
"""azd's mapping, for every criterion."""


@dataclass
class RemoteCriterion:
    """One evaluator judged by Foundry."""

    evaluator: str
    """The canonical agentopt name its results are recorded under."""
    name: str
    """The testing criterion's name (what the output items' `results[].name` report)."""
    foundry_name: str
    """`evaluator_name`: a builtin, or the rubric registered in the project."""
    version: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    rubric: RubricEvaluator | None = None
    """Set for a rubric that has to be registered first (its version is filled then)."""

    @property
    def scale(self) -> str:
        """`0-1` (rubrics and task adherence: Foundry emits a normalized score) or `1-5`."""
        return "0-1" if self.rubric is not None or self.evaluator in ZERO_ONE else "1-5"


def split_evaluators(
    uses: list[EvaluatorUse], cache: EvaluatorCache, *, also: tuple[str, ...] = ()
) -> tuple[list[RemoteCriterion], list[EvaluatorUse]]:
    """Which evaluators Foundry judges and which run locally over the remote transcripts;
    `also` names more builtins Foundry takes (the optimizer's `OPTIMIZER_BUILTINS`).

    Every evaluator is built here (a bad name or definition is exit 2 before any call).
    """
    remote: list[RemoteCriterion] = []
    local: list[EvaluatorUse] = []
    seen: set[str] = set()
    for use in uses:
        evaluator = cache.get(use)
        name = canonical_name(use.name)
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        if isinstance(evaluator, RubricEvaluator):
            remote.append(
                RemoteCriterion(
                    evaluator=evaluator.name,
                    name=_criterion_name(evaluator.name),
                    foundry_name=evaluator.name,
                    options=dict(use.options),
                    rubric=evaluator,
                )
            )
        elif (name in REMOTE_BUILTINS or name in also) and not use.local_uri:
            remote.append(
                RemoteCriterion(
                    evaluator=name,
                    name=_criterion_name(name),
                    foundry_name=name,
                    options=dict(use.options),
                )
            )
        else:
            local.append(use)
    return remote, local


def _criterion_name(evaluator: str) -> str:
    return evaluator.removeprefix("builtin.")


def rubric_version_body(criterion: RemoteCriterion) -> dict[str, Any]:
    """`POST /evaluators/{name}/versions` for a rubric (`RubricBasedEvaluatorDefinition`)."""
    rubric = criterion.rubric
    assert rubric is not None
    return {
        "display_name": rubric.name,
        "description": "Rubric registered by agentopt",
        "evaluator_type": "custom",
        "categories": ["quality"],
        "definition": {
            "type": "rubric",
            "dimensions": [d.model_dump(exclude_defaults=False) for d in rubric.dimensions],
            "pass_threshold": float(rubric.default_threshold),
        },
    }


def eval_body(
    *,
    suite: str,
    agent: str,
    version: str | None,
    criteria: list[RemoteCriterion],
    eval_model: str | None,
    ground_truth: bool,
) -> dict[str, Any]:
    """`POST /openai/v1/evals`."""
    mapping = dict(DATA_MAPPING)
    if ground_truth:
        mapping["ground_truth"] = "{{item.ground_truth}}"
    testing: list[dict[str, Any]] = []
    for crit in criteria:
        entry: dict[str, Any] = {
            "type": "azure_ai_evaluator",
            "name": crit.name,
            "evaluator_name": crit.foundry_name,
            "data_mapping": mapping,
        }
        if crit.version:
            entry["evaluator_version"] = crit.version
        params = dict(crit.options)
        if eval_model:
            params.setdefault("model", eval_model)
            params.setdefault("deployment_name", eval_model)
        if params:
            entry["initialization_parameters"] = params
        testing.append(entry)
    return {
        "name": suite,
        "metadata": {"azd_agent": agent, "azd_agent_version": version or ""},
        "data_source_config": {
            "type": "custom",
            "include_sample_schema": True,
            "item_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
        "testing_criteria": testing,
    }


def body_hash(body: dict[str, Any]) -> str:
    """Content hash of a request body (an identical evaluation is reused, not re-created)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def row(task: Task) -> dict[str, Any]:
    """One dataset row as Foundry sees it (`name` lets results find their task)."""
    out: dict[str, Any] = {"name": task.name, "query": task.query}
    if task.ground_truth is not None:
        out["ground_truth"] = task.ground_truth
    if task.turns[0].context:
        out["context"] = task.turns[0].context
    if task.criteria:
        out["criteria"] = [c.model_dump(exclude_none=True) for c in task.criteria]
    return out


def inline_source(tasks: Sequence[Task]) -> dict[str, Any]:
    """`EvalJsonlFileContentSource`: every row wrapped as `{"item": …}`."""
    return {"type": "file_content", "content": [{"item": row(t)} for t in tasks]}


def dataset_file_id(endpoint: str, name: str, version: str) -> str:
    """azd `buildDatasetFileID`: account = first label of the host, project from the path."""
    split = urlsplit(endpoint)
    account = (split.hostname or "").split(".")[0]
    parts = [p for p in split.path.split("/") if p]
    project = parts[parts.index("projects") + 1] if "projects" in parts[:-1] else ""
    return f"azureai://accounts/{account}/projects/{project}/data/{name}/versions/{version}"


def run_body(
    *, name: str, agent: str, version: str | None, source: dict[str, Any], run_id: str
) -> dict[str, Any]:
    """`POST /openai/v1/evals/{eval_id}/runs`."""
    return {
        "name": name,
        "metadata": {"azd_agent": agent, "agentopt_run": run_id},
        "data_source": {
            "type": "azure_ai_target_completions",
            "input_messages": {
                "type": "template",
                "template": [{"role": "user", "content": "{{item.query}}", "type": "message"}],
            },
            "source": source,
            "target": {
                "type": "azure_ai_agent",
                "name": agent,
                "version": version,
                "tool_descriptions": [],
            },
        },
    }
