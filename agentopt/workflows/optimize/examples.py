"""The strategies' view of finished units (`Example`), made once per unit: every proposal from a
parent shows its known train units again, and the stop rule reads the best's (both only read
them)."""

from __future__ import annotations

from collections.abc import Iterable

from agentopt.contracts.task_record import UnitResult
from agentopt.workflows.optimize.state import JobContext
from agentopt.workflows.optimize.strategies.base import Example


class Examples:
    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self._made: dict[int, tuple[UnitResult, Example]] = {}

    def of(self, name: str, unit: UnitResult) -> Example:
        """The example of `unit`, the run of task `name`."""
        known = self._made.get(id(unit))
        if known is not None and known[0] is unit:
            return known[1]
        task, _ = self.ctx.splits.task(name)
        example = Example(task, unit.score.score, unit.score.status, unit.record)
        self._made[id(unit)] = (unit, example)
        return example

    def train_runs(self, known: Iterable[tuple[str, str]]) -> list[Example]:
        """The train units of `known` (candidate, task) pairs, any candidate's, in a fixed
        order: what `ProposalContext.seen` holds."""
        train = set(self.ctx.splits.train.names)
        return [
            self.of(name, unit)
            for cand, name in sorted(known)
            if name in train and (unit := self.ctx.book.get(cand, name)) is not None
        ]
