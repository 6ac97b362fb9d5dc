"""`model` — the next model of `model_search_space` no candidate uses yet, with the parent's
other settings (a cheaper or stronger model is often the biggest lever)."""

from __future__ import annotations

from agentopt.workflows.optimize.strategies.base import (
    NoProposal,
    Proposal,
    ProposalContext,
    register_strategy,
)


def next_untried(search_space: list[str], tried: set[str]) -> str | None:
    return next((m for m in search_space if m not in tried), None)


@register_strategy("model", target="model")
class SwitchModel:
    """Walk the search space in order."""

    async def propose(self, ctx: ProposalContext) -> Proposal:
        model = next_untried(ctx.search_space, ctx.tried_models)
        if model is None:
            raise NoProposal("every model of the search space was tried", exhausted=True)
        return Proposal(
            definition=ctx.parent.model_copy(update={"model": model}),
            strategy=f"model:{model}",
            rationale=f"same configuration as {ctx.parent_id} on {model}",
            mutation={"model": model, "from": ctx.parent.model},
        )
