"""What one slot of a search round carries: its plan (parent, strategy or merge, minibatch)
and its outcome (the proposal, the screening, why it stopped)."""

from __future__ import annotations

from dataclasses import dataclass

from agentopt.contracts.optimize_job import Outranked, Screening
from agentopt.core.errors import AgentoptError
from agentopt.workflows.optimize.merge import MergePlan
from agentopt.workflows.optimize.strategies.base import Proposal, Strategy

MERGE = "merge"


@dataclass
class SlotPlan:
    number: int
    parent: str
    strategy: Strategy | None
    """None for a merge slot."""
    minibatch: list[str]
    tried_models: set[str]
    merge: MergePlan | None = None
    stuck: frozenset[str] = frozenset()
    """The parent's failures that resisted its proposals when the slot was planned
    (`perfect.resisted`)."""
    barren: frozenset[str] = frozenset()
    """The parent's failures on which this slot's strategy came back empty `RESIST_LIMIT`
    times when the slot was planned (`perfect.barren`)."""

    @property
    def label(self) -> str:
        return self.strategy.name if self.strategy is not None else MERGE


@dataclass
class SlotOutcome:
    plan: SlotPlan
    proposal: Proposal | None = None
    reason: str = ""
    exhausted: bool = False
    cand_id: str | None = None
    screening: Screening | None = None
    outranked: Outranked | None = None
    leaks: int = 0
    """Reply lines dropped for quoting a task when no proposal came of them (counted)."""
    empty: bool = False
    """The strategy's reply changed nothing (`NoProposal.empty`)."""
    failure: AgentoptError | None = None
    """BudgetExceeded or StopRequested: the slot stopped early (its finished units are kept)."""
