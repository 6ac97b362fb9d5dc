"""`eval run --dry-run`: the plan and its token/cost estimate, with nothing sent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentopt.agents.base import default_target
from agentopt.contracts.task import Dataset, Task
from agentopt.core.files.agent_config import compose_system_prompt
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.registry import lookup
from agentopt.models.call import CallLayer
from agentopt.models.cost import estimate_tokens
from agentopt.workflows.run.scoring import unit_evaluators
from agentopt.workflows.run.simulated_user import Simulation

AGENT_OUTPUT_TOKENS = 250
JUDGE_PROMPT_TOKENS = 450
JUDGE_OUTPUT_TOKENS = 80
SIMULATOR_PROMPT_TOKENS = 420
SIMULATOR_OUTPUT_TOKENS = 60


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
    simulator_model: str = ""
    simulator: dict[str, Any] = field(default_factory=dict)
    """The simulated users' calls (empty when no task has one)."""

    @property
    def cost_usd(self) -> float:
        parts = (self.agent, self.judge, self.simulator)
        return sum(float(p.get("cost_usd", 0.0)) for p in parts)


def _calls_model(agent: AgentDefinition) -> bool:
    """agentopt calls the agent's model itself (a local prompt agent)."""
    return bool(agent.model) and (agent.target or default_target(agent)) == "local"


def _is_judge(name: str) -> bool:
    info = lookup(name)
    # Registered non-judge kinds cost nothing; rubric / prompt evaluators are judges.
    return info is None or info.kind in ("judge", "rubric", "prompt")


def plan_run(
    tasks: Sequence[Task],
    dataset: Dataset,
    agent: AgentDefinition,
    evaluators: list[EvaluatorUse],
    judge_model: str,
    repeat: int,
    layer: CallLayer,
    simulation: Simulation | None = None,
    prepare: Callable[[EvaluatorUse], object] | None = None,
) -> RunPlan:
    """Count agent, simulated-user and judge calls and estimate their tokens (chars / 4) and
    cost. A simulated conversation is counted at its most turns (`desired_num_turns`).

    `prepare` is handed every evaluator use of every task as the plan meets it: `eval run`
    builds its evaluators in the same pass over the tasks (`engine.prepare_evaluators`)."""
    sim = simulation or Simulation(model=judge_model)
    system = estimate_tokens(compose_system_prompt(agent)) if agent.instructions else 0
    agent_calls = agent_in = judge_calls = judge_in = sim_calls = sim_in = 0
    counts: dict[str, int] = {}
    turns = 0
    for task in tasks:
        simulated = sim.plays(task)
        n = sim.turns_for(task) if simulated else len(task.turns)
        queries = [estimate_tokens(t.query) for t in task.turns]
        queries += [SIMULATOR_OUTPUT_TOKENS] * (n - len(queries))
        history, seen = 0, []
        for query in queries[:n]:
            turns += 1
            agent_calls += 1
            agent_in += system + history + query
            history += query + AGENT_OUTPUT_TOKENS
            seen.append(history)
            if simulated:
                sim_calls += 1
                sim_in += SIMULATOR_PROMPT_TOKENS + history
        per_sample = unit_evaluators(
            task, evaluators, dataset, level=sim.level, simulated=simulated, turns=n
        )
        # Each turn's judges see the conversation up to it; a whole conversation's, all of it.
        for uses, shown in zip(
            per_sample, seen if len(per_sample) > 1 else seen[-1:], strict=False
        ):
            for use in uses:
                if prepare is not None:
                    prepare(use)
                info = lookup(use.name)
                key = info.name if info else use.name
                counts[key] = counts.get(key, 0) + repeat
                if _is_judge(use.name):
                    judge_calls += 1
                    judge_in += JUDGE_PROMPT_TOKENS + shown
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
    sim_estimate: dict[str, Any] = {}
    if sim_calls:
        sizes = (sim_calls * repeat, sim_in // sim_calls, SIMULATOR_OUTPUT_TOKENS)
        sim_estimate = dict(layer.estimate(sim.model, sizes))
    return RunPlan(
        simulator_model=sim.model if sim_calls else "",
        simulator=sim_estimate,
        tasks=len(tasks),
        turns=turns,
        repeat=repeat,
        agent_model=layer.identity(agent.model) if agent.model and _calls_model(agent) else model,
        judge_model=layer.identity(judge_model) if judge_calls else judge_model,
        agent=dict(a),
        judge=dict(j),
        evaluators=counts,
    )
