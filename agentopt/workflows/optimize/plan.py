"""The plan printed before a job starts (optimizer.md §3): targets, split sizes, and an
estimate of calls, tokens and cost for the baseline, per candidate and in total, with the
budget caps. `--dry-run` stops after it. Token counts are estimates (characters / 4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentopt.contracts.optimize_job import Estimate, OptimizePlan
from agentopt.core.files.agent_config import compose_system_prompt
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.evaluators.base import EvaluatorUse
from agentopt.models.call import CallLayer
from agentopt.models.cost import estimate_tokens
from agentopt.workflows.optimize.options import OptimizeSettings
from agentopt.workflows.optimize.splits import Splits, SplitTasks
from agentopt.workflows.optimize.targets import TargetPlan
from agentopt.workflows.run.plan import plan_run
from agentopt.workflows.run.simulated_user import Simulation

EXAMPLE_TOKENS = 450
"""A reflection example: query, answer, tool calls, failed checks."""
TEMPLATE_TOKENS = 500
RATIONALE_TOKENS = 60
SHOWN_SETTINGS = (
    "model_search_space",
    "max_candidates",
    "max_stalls",
    "screening_size",
    "parallel_proposals",
    "budget_calls",
    "max_cost",
    "real_tools",
)
"""The loop's settings the plan repeats as they are (OptimizePlan has fields of these names)."""


def _estimate(
    split: SplitTasks | None,
    names: list[str] | None,
    agent: AgentDefinition,
    evaluators: list[EvaluatorUse],
    judge: str,
    layer: CallLayer,
    simulation: Simulation | None = None,
) -> Estimate:
    if split is None:
        return Estimate()
    wanted = set(names) if names is not None else None
    tasks = [t for t in split.tasks if wanted is None or t.name in wanted]
    if not tasks:
        return Estimate()
    plan = plan_run(tasks, split.dataset, agent, evaluators, judge, 1, layer, simulation)
    total = Estimate()
    for part in (plan.agent, plan.judge, plan.simulator):
        total = total + _as_estimate(part)
    return total


def _as_estimate(raw: Mapping[str, Any]) -> Estimate:
    """A call-layer estimate (calls, tokens, cost; a missing key is 0) as the plan's record."""
    return Estimate(
        calls=int(raw.get("calls", 0)),
        input_tokens=int(raw.get("input_tokens", 0)),
        output_tokens=int(raw.get("output_tokens", 0)),
        cost_usd=float(raw.get("cost_usd", 0.0)),
    )


def plan_optimize(
    agent: AgentDefinition,
    splits: Splits,
    evaluators: list[EvaluatorUse],
    judge: str,
    targets: TargetPlan,
    settings: OptimizeSettings,
    layer: CallLayer,
    simulation: Simulation | None = None,
) -> OptimizePlan:
    """Estimate the job from the dataset and the configuration, sending nothing."""

    def est(split: SplitTasks | None, names: list[str] | None = None) -> Estimate:
        return _estimate(split, names, agent, evaluators, judge, layer, simulation)

    baseline = est(splits.validation)
    screening = est(splits.train, splits.train.names[: settings.screening_size])
    per_candidate = screening + est(splits.validation)
    reflection = Estimate()
    if targets.optimization_model is not None:
        instructions = estimate_tokens(compose_system_prompt(agent)) if agent.instructions else 0
        raw = layer.estimate(
            targets.optimization_model,
            (1, TEMPLATE_TOKENS + instructions + 5 * EXAMPLE_TOKENS, instructions + 60),
        )
        reflection = _as_estimate(raw)
    test = est(splits.test).times(2)
    total = baseline + (per_candidate + reflection).times(settings.max_candidates) + test
    return OptimizePlan(
        agent=agent.name,
        # As every view shows a model: resolved, with the user's own server (ModelRef.identity).
        agent_model=layer.identity(agent.model) if agent.model else None,
        eval_model=layer.identity(judge),
        optimization_model=(
            layer.identity(targets.optimization_model) if targets.optimization_model else None
        ),
        targets=targets.targets,
        proposers=targets.proposers,
        train=len(splits.train.tasks),
        validation=len(splits.validation.tasks),
        test=len(splits.test.tasks) if splits.test else 0,
        split_warning=splits.info.warning,
        baseline=baseline,
        per_candidate=per_candidate,
        per_proposal_reflection=reflection,
        test_split=test,
        total=total,
        notes=list(targets.notes),
        **{name: getattr(settings, name) for name in SHOWN_SETTINGS},
    )
