"""When the search stops, from the noise and the failures it has measured (optimizer.md §2).

- **Stalls** count failed screenings in a row, but a search whose last screenings still moved
  train (the child beat its parent on a minibatch task, and lost on another) is not stuck:
  it stops only once `--max-stalls` screenings in a row moved nothing, or three times the
  limit failed whatever they moved. The limit grows with the distinct failure groups the best
  still has on train (a criterion, an expected fact: what one rule could fix), since each
  may need its own proposal.
- **Completed** at a perfect validation score only when the best has no train failure left
  that a proposal could still fix (known failures that have not resisted its proposals):
  validation can no longer rank a better candidate higher, but the train failures say one
  exists, and the ranking prefers a descendant that ties its ancestor on validation
  (`ranking._sort_key`).
"""

from __future__ import annotations

from agentopt.contracts.optimize_job import JobRecord
from agentopt.contracts.task_record import UnitResult
from agentopt.workflows.optimize.examples import Examples
from agentopt.workflows.optimize.perfect import at_ceiling, perfect, resisted
from agentopt.workflows.optimize.state import JobContext
from agentopt.workflows.optimize.strategies.base import Example
from agentopt.workflows.optimize.strategies.failure_groups import failure_keys
from agentopt.workflows.optimize.strategies.instructions import one_line

HARD_STALLS = 3
"""Failed screenings in a row, as a multiple of the limit, that end a search even when each
moved train."""


def lineage_units(ctx: JobContext, cand: str) -> dict[str, UnitResult]:
    """Each train task as the candidate or its nearest ancestor that ran it did."""
    out: dict[str, UnitResult] = {}
    cid: str | None = cand
    while cid is not None:
        for name in ctx.splits.train.names:
            if name not in out and (unit := ctx.book.get(cid, name)) is not None:
                out[name] = unit
        record = ctx.job.candidate(cid)
        cid = record.parent if record else None
    return out


class StopRule:
    """The stop conditions that read the job's evidence (see the module)."""

    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self.quiet = 0
        """Failed screenings in a row that moved no train task."""
        self._examples = Examples(ctx)
        self._limit: tuple[tuple[str, int, int], int] | None = None
        self._fixable: tuple[tuple[str, int, int], list[Example]] | None = None

    def screened_out(self, moved: bool) -> None:
        self.quiet = 0 if moved else self.quiet + 1

    def new_best(self) -> None:
        self.quiet = 0

    def fixable(self, job: JobRecord, best: str) -> list[Example]:
        """The best's known train failures that have not resisted its proposals (worked out
        again only when the evidence changed: a new candidate or unit)."""
        state = (best, len(job.candidates), len(self.ctx.book.units))
        if self._fixable is not None and self._fixable[0] == state:
            return self._fixable[1]
        stuck = resisted(job, self.ctx.book, best)
        found = [
            self._examples.of(n, u)
            for n, u in sorted(lineage_units(self.ctx, best).items())
            if not perfect(u) and n not in stuck
        ]
        self._fixable = (state, found)
        return found

    def limit(self) -> int:
        job = self.ctx.job
        base = self.ctx.settings.max_stalls
        if not job.best:
            return base
        # Worked out again only when the evidence changed (a new best, candidate or unit).
        state = (job.best, len(job.candidates), len(self.ctx.book.units))
        if self._limit is None or self._limit[0] != state:
            groups = len(failure_keys(self.fixable(job, job.best)))
            self._limit = (state, max(base, groups))
        return self._limit[1]

    def stalled(self) -> str | None:
        """The particulars when the search is stuck, else None."""
        job, base = self.ctx.job, self.ctx.settings.max_stalls
        if job.stalls < base:
            return None
        limit = self.limit()
        if job.stalls >= HARD_STALLS * limit:
            return f"{job.stalls} screenings in a row failed (limit {HARD_STALLS} × {limit})"
        if job.stalls >= limit and self.quiet >= base:
            return (
                f"{job.stalls} screenings in a row failed, the last {self.quiet} moving no "
                f"train task (limit {limit}: --max-stalls or the failure groups left)"
            )
        return None

    def ceiling(self) -> str | None:
        """The particulars when the best is perfect on validation with nothing left to fix."""
        top = at_ceiling(self.ctx)
        if top is None:
            return None
        left = self.fixable(self.ctx.job, top)
        if left:
            return None
        return (
            f"{top} passes every validation task with the top score and no train failure "
            "it could still fix remains"
        )


def nothing_screened(count: int, last: str) -> str:
    """The particulars when proposals in a row put nothing on screening: no screening failed
    (optimizer.md §2: not a stall), the proposers had nothing new; the last one's reason says
    what (nothing to learn, a refused change, a reply quoting tasks, the model failing)."""
    said = f"{count} proposals in a row put nothing new on screening"
    return f"{said}; the last: {one_line(last, 240)}" if last.strip() else said
