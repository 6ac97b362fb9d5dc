"""Which targets a job optimizes and which strategies serve each (cli.md `--targets`).

Default: everything the agent has. A target asked for explicitly that cannot work is a
ConfigError naming what to set; a default one that cannot work is skipped with a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentopt.core.errors import AgentoptError, ConfigError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.call import CallLayer
from agentopt.workflows.optimize.options import TARGETS
from agentopt.workflows.optimize.strategies.base import Strategy, strategies_for
from agentopt.workflows.optimize.strategies.instructions import function_names

NO_REFLECTION = (
    "no optimization model: instructions improve through the rule proposer only "
    "(pass --optimize-model MODEL or set options.optimization_model for reflective rewrites "
    "of instructions, tool descriptions and skills)"
)
EMBEDDED_REFLECTION = (
    "the optimization model '{model}' runs on the embedded model, which is too small to "
    "rewrite instructions: using the rule proposer only (pass --optimize-model with a real model)"
)


@dataclass
class TargetPlan:
    """The resolved targets, in round-robin order, with their strategies."""

    targets: list[str]
    strategies: dict[str, list[Strategy]]
    optimization_model: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def proposers(self) -> list[str]:
        return [s.name for t in self.targets for s in self.strategies[t]]


def resolve_model_name(layer: CallLayer, model: str, flag: str) -> bool:
    """Check a model name resolves; True when it is a real (non-embedded) model."""
    try:
        ref = layer.resolve(model)
    except AgentoptError as exc:
        raise ConfigError.at("", flag, f"model '{model}': {exc.message}") from None
    return ref.type != "local"


def reflection_model(layer: CallLayer, configured: str | None, notes: list[str]) -> str | None:
    """The usable reflection model: the configured one unless it is the embedded model."""
    if configured is None:
        notes.append(NO_REFLECTION)
        return None
    if resolve_model_name(layer, configured, "--optimize-model / options.optimization_model"):
        return configured
    notes.append(EMBEDDED_REFLECTION.format(model=configured))
    return None


def _why_not(target: str, agent: AgentDefinition, reflect: bool, space: list[str]) -> str | None:
    tools = function_names(agent.tools)
    if target == "instructions":
        return None
    if target in ("tools", "toolset") and not tools:
        return f"the agent '{agent.name}' has no function tools"
    if target == "skills" and not agent.skills:
        return f"the agent '{agent.name}' has no skills"
    if target in ("tools", "skills") and not reflect:
        return (
            "it needs an optimization model: pass --optimize-model MODEL or set "
            "options.optimization_model"
        )
    if target == "model" and not space:
        return (
            "it needs models to try: pass --model-search-space LIST or set "
            "options.optimization_config.model_search_space"
        )
    return None


def resolve_targets(
    agent: AgentDefinition,
    explicit: list[str] | None,
    search_space: list[str],
    optimization_model: str | None,
    notes: list[str],
) -> TargetPlan:
    """Targets in the canonical order, each with its strategies."""
    reflect = optimization_model is not None
    wanted = list(dict.fromkeys(explicit)) if explicit else list(TARGETS)
    targets: list[str] = []
    for target in wanted:
        why = _why_not(target, agent, reflect, search_space)
        if why is None and target == "instructions" and not explicit and not agent.instructions:
            why = "the agent has no instructions"
        if why is None:
            targets.append(target)
        elif explicit:
            raise ConfigError.at("", "--targets", f"cannot optimize '{target}': {why}")
        elif target != "model" or search_space:
            notes.append(f"not optimizing {target}: {why}")
    if not targets:
        raise ConfigError(
            "nothing to optimize: the agent has no instructions, tools, skills or model "
            "search space",
            hint="pass --targets and what they need (e.g. --model-search-space LIST)",
        )
    strategies = {target: strategies_for(target, reflect=reflect) for target in targets}
    return TargetPlan(targets, strategies, optimization_model, notes)
