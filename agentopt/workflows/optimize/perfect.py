"""When the search has nothing left to learn: a perfect minibatch and the validation ceiling.

Both save calls that could not change the outcome. A parent whose weakest train tasks all
passed with the top score leaves no failure to reflect on (GEPA skips such a minibatch too),
so a proposal written from failures would spend a reflection call and a screening on a child
that can at best tie. And once the best candidate passes every validation task with the top
score, no candidate can rank above it on quality, while screening admits only a child that
beats its parent, never one that merely ties at a lower cost: the search is over.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentopt.contracts.task_record import UnitResult
from agentopt.workflows.optimize.ranking import SCORE_EPS
from agentopt.workflows.optimize.state import JobContext

FROM_FAILURES = frozenset({"instructions", "tools", "skills"})
"""Targets whose strategies learn from failed traces. The model and toolset strategies do not
need a failure (a cheaper model, an unused tool), so they still propose from a perfect parent."""


def perfect(unit: UnitResult) -> bool:
    """Passed with the top score (scores are normalized to [0, 1]) and no error."""
    score = unit.score
    return score.status == "pass" and not score.errors() and (score.score or 0.0) >= 1 - SCORE_EPS


def all_perfect(units: Iterable[UnitResult]) -> bool:
    """Every unit perfect, and at least one."""
    seen = False
    for unit in units:
        if not perfect(unit):
            return False
        seen = True
    return seen


def at_ceiling(ctx: JobContext) -> str | None:
    """The best candidate, when every validation task of it is in the book and perfect."""
    job = ctx.job
    best = job.candidate(job.best) if job.best else None
    if best is None or best.validation is None:
        return None
    names = ctx.splits.validation.names
    units = ctx.book_units(best.id, names)
    return best.id if len(units) == len(names) and all_perfect(units.values()) else None
