"""Which train tasks a proposal learns from and is screened on: the parent's weakest.

A task the parent has not run yet is judged by its nearest ancestor's run (0, among the
weakest, when none ran it: the baseline runs on validation only). Tasks another slot of the
round already screens the same parent on go last, so parallel slots learn from different
failures, and after them the failures that resisted the parent's proposals
(`perfect.resisted`), so that the same unfixable tasks do not steer every proposal.
"""

from __future__ import annotations

import random

from agentopt.workflows.optimize.state import JobContext


def estimate(ctx: JobContext, parent: str, name: str) -> float:
    """The parent's train score on `name`, else its nearest ancestor's, else 0."""
    cid: str | None = parent
    while cid is not None:
        unit = ctx.book.get(cid, name)
        if unit is not None:
            return unit.score.score if unit.score.score is not None else 0.0
        record = ctx.job.candidate(cid)
        cid = record.parent if record else None
    return 0.0


def weakest_tasks(
    ctx: JobContext, parent: str, rng: random.Random, avoid: set[str], stuck: frozenset[str]
) -> list[str]:
    """`screening_size` train tasks, weakest first (ties broken by `rng`)."""
    train = ctx.splits.train.names
    ties = {n: rng.random() for n in train}
    ordered = sorted(
        train, key=lambda n: (n in avoid, n in stuck, estimate(ctx, parent, n), ties[n])
    )
    return ordered[: ctx.settings.screening_size]
