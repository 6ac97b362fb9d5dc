"""Mutation strategies of `agentopt optimize`: each proposes a child configuration from a
parent and its train traces (optimizer.md §2b)."""

from agentopt.workflows.optimize.strategies.base import (
    Example,
    MutationRejected,
    NoProposal,
    Proposal,
    ProposalContext,
    Strategy,
    make_strategy,
    register_strategy,
    strategy_names,
)
from agentopt.workflows.optimize.strategies.rules import HEADING as RULES_HEADING
from agentopt.workflows.optimize.strategies.tools import structure_problems

__all__ = [
    "RULES_HEADING",
    "Example",
    "MutationRejected",
    "NoProposal",
    "Proposal",
    "ProposalContext",
    "Strategy",
    "make_strategy",
    "register_strategy",
    "strategy_names",
    "structure_problems",
]
