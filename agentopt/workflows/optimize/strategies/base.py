"""What every mutation strategy gets and gives back, and the registry that names them.

A strategy reads the parent configuration and how it did on its weakest train tasks, and
returns a child configuration with a one-line rationale — or says why it has nothing to
propose (`NoProposal`), which the loop counts like a failed screening. Built-in strategies
register exactly the way a plugin would (`@register_strategy` in their own module; plugins name
theirs with an `agentopt.strategies` entry point), style.md rules 2 and 11.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from agentopt.contracts.task import Task
from agentopt.contracts.task_record import RepeatOutcome
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.plugins import STRATEGIES_GROUP, PluginRegistry
from agentopt.models.call import CallLayer
from agentopt.workflows.optimize.leak import LeakCheck


@dataclass(frozen=True)
class Example:
    """One train task as the parent ran it (never a test task)."""

    task: Task
    score: float | None
    status: str
    record: RepeatOutcome
    """The parent's run of the task: response, tool calls, verdicts, turns. A saved record's
    JSON form is read through the contract model when the example is made, so strategies
    read typed fields, never keys."""

    def __post_init__(self) -> None:
        if isinstance(self.record, dict):
            object.__setattr__(self, "record", RepeatOutcome.model_validate(self.record))


@dataclass
class ProposalContext:
    """Everything a strategy may read."""

    number: int
    """Proposal number (1-based); seeds the reflection call so proposals differ."""
    parent_id: str
    parent: AgentDefinition
    examples: list[Example]
    """The parent's weakest train tasks (the screening minibatch), worst first."""
    train: list[Example]
    """Every train task the parent has been run on (traces for the toolset strategy)."""
    tried_models: set[str]
    """Models some candidate already uses (the model strategy skips them)."""
    search_space: list[str]
    layer: CallLayer | None
    optimization_model: str | None
    seed: int
    rng: random.Random = field(default_factory=random.Random)
    tried: list[str] = field(default_factory=list)
    """Labels of the changes already proposed from this parent (`tools:get_order`, …), so a
    strategy with several things to change tries another one first."""
    harmful: frozenset[str] = frozenset()
    """Normalised lines the search found harmful on validation (`harm.py`): never proposed
    again, and taken out of a parent that holds them."""
    leaks: LeakCheck | None = None
    """The job's leak check (every split's queries and expected answers): a reflection reply's
    lines that quote a task are dropped before the proposal is made."""
    start: AgentDefinition | None = None
    """The starting configuration: text it already holds is the user's own (never a leak)."""
    seen: list[Example] = field(default_factory=list)
    """Every train task any candidate had run when the round started: the rules strategy
    learns the judges' phrasing across them and which phrase the answers that passed a
    criterion hold (`rule_phrases`); what a rule asks for is still named by this parent's
    failures."""


@dataclass
class Proposal:
    """A child configuration."""

    definition: AgentDefinition
    strategy: str
    """Label shown in the table: instructions, rules, tools:<name>, model:<name>, …"""
    rationale: str
    mutation: dict[str, Any] = field(default_factory=dict)
    signature: str | None = None
    """What the change means, when two different texts can mean the same change (e.g. the
    same rules with other example queries): a second proposal with the same parent and
    signature is treated as a duplicate."""


class NoProposal(Exception):
    """The strategy has nothing (new) to propose for this parent; counted as a stall."""

    def __init__(
        self, reason: str, *, exhausted: bool = False, leaks: int = 0, empty: bool = False
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.exhausted = exhausted
        """True when no parent will ever give this strategy something to do (e.g. every
        model of the search space was tried): the loop stops asking it."""
        self.leaks = leaks
        """Lines of the reply dropped because they quoted a task (`leak.py`), counted."""
        self.empty = empty
        """The optimization model was asked and its reply changed nothing (the same text,
        or only lines quoting a task): counted against the parent's failures it was shown
        (`perfect.Barren`)."""


class MutationRejected(NoProposal):
    """The proposed change broke a rule (e.g. renamed a tool parameter) and was refused."""


class Strategy(Protocol):
    """A mutation operator."""

    name: str
    """Registry name, e.g. instructions:reflect."""
    target: str
    """Which optimize target it serves (instructions, tools, skills, model, toolset)."""
    needs_model: bool
    """True when it calls the optimization model."""

    async def propose(self, ctx: ProposalContext) -> Proposal: ...


S = TypeVar("S", bound=Callable[..., Any])
STRATEGIES: PluginRegistry[Callable[[], Strategy]] = PluginRegistry(
    "optimize strategy", STRATEGIES_GROUP, ("agentopt.workflows.optimize.strategies",)
)


def register_strategy(
    name: str, *, target: str | None = None, needs_model: bool = False
) -> Callable[[S], S]:
    """Class decorator: make `make_strategy(name)` build this strategy. With `target`, the
    class gets `name`, `target` and `needs_model` from here, so a strategy declares its name
    once (a class that sets the three itself passes only the name)."""

    def decorate(factory: S) -> S:
        if target is not None:
            for attr, value in (("name", name), ("target", target), ("needs_model", needs_model)):
                setattr(factory, attr, value)
        STRATEGIES.add(name, factory)
        return factory

    return decorate


def strategy_names() -> list[str]:
    return sorted(STRATEGIES.names())


def make_strategy(name: str) -> Strategy:
    """Build a registered strategy (ConfigError listing the known ones otherwise)."""
    factory = STRATEGIES.get(name)
    if factory is None:
        raise ConfigError(
            f"unknown optimize strategy '{name}'; known: {', '.join(strategy_names())}"
        )
    return factory()


def strategies_for(target: str, *, reflect: bool) -> list[Strategy]:
    """Every registered strategy serving an optimize target, by name (so the order does not
    depend on import order); those that need the optimization model only when there is one."""
    built = [factory() for _name, factory in sorted(STRATEGIES.items())]
    return [s for s in built if s.target == target and (reflect or not s.needs_model)]
