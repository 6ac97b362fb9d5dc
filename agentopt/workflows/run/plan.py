"""`eval run --dry-run`: the plan and its token/cost estimate, with nothing sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentopt.contracts.task import Dataset, Task
from agentopt.core.files.agent_config import compose_system_prompt
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.registry import lookup
from agentopt.evaluators.selection import select_evaluators
from agentopt.models.call import CallLayer
from agentopt.models.cost import estimate_tokens

AGENT_OUTPUT_TOKENS = 250
JUDGE_PROMPT_TOKENS = 450
JUDGE_OUTPUT_TOKENS = 80


@dataclass
class RunPlan:
    """What a run would do."""

    tasks: int
    turns: int
    repeat: int
    agent_model: str
    judge_model: str
    agent: dict[str, Any] = field(default_factory=dict)
    judge: dict[str, Any] = field(default_factory=dict)
    evaluators: dict[str, int] = field(default_factory=dict)
    """Canonical evaluator name → how many times it runs."""

    @property
    def cost_usd(self) -> float:
        return float(self.agent.get("cost_usd", 0.0)) + float(self.judge.get("cost_usd", 0.0))


def _is_judge(name: str) -> bool:
    info = lookup(name)
    # Registered non-judge kinds cost nothing; rubric / prompt evaluators are judges.
    return info is None or info.kind in ("judge", "rubric", "prompt")


def plan_run(
    tasks: list[Task],
    dataset: Dataset,
    agent: AgentDefinition,
    evaluators: list[EvaluatorUse],
    judge_model: str,
    repeat: int,
    layer: CallLayer,
) -> RunPlan:
    """Count agent and judge calls and estimate their tokens (chars / 4) and cost."""
    system = estimate_tokens(compose_system_prompt(agent)) if agent.instructions else 0
    agent_calls = agent_in = judge_calls = judge_in = 0
    counts: dict[str, int] = {}
    turns = 0
    for task in tasks:
        history = 0
        for turn, uses in zip(
            task.turns,
            select_evaluators(task, configured=evaluators, dataset=dataset),
            strict=True,
        ):
            turns += 1
            query = estimate_tokens(turn.query)
            agent_calls += 1
            agent_in += system + history + query
            history += query + AGENT_OUTPUT_TOKENS
            for use in uses:
                info = lookup(use.name)
                key = info.name if info else use.name
                counts[key] = counts.get(key, 0) + repeat
                if _is_judge(use.name):
                    judge_calls += 1
                    judge_in += JUDGE_PROMPT_TOKENS + history
    # An agent without a model (endpoint, command, hosted) costs agentopt nothing to estimate.
    model = agent.model or f"({agent.target or 'remote'} agent)"
    a = (
        layer.estimate(
            agent.model,
            (agent_calls * repeat, agent_in // max(agent_calls, 1), AGENT_OUTPUT_TOKENS),
        )
        if agent.model
        else {"calls": agent_calls * repeat, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    )
    # Only resolve the judge when one will run: resolving may print the embedded-model notice.
    j = (
        layer.estimate(
            judge_model,
            (judge_calls * repeat, judge_in // max(judge_calls, 1), JUDGE_OUTPUT_TOKENS),
        )
        if judge_calls
        else {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    )
    return RunPlan(
        tasks=len(tasks),
        turns=turns,
        repeat=repeat,
        agent_model=model,
        judge_model=judge_model,
        agent=dict(a),
        judge=dict(j),
        evaluators=counts,
    )
