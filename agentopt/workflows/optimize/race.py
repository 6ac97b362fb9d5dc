"""A candidate's validation raced against the best's score (as F-Race or successive halving
do, with a bound instead of a statistic), decided the same way whatever order its units
finish in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from agentopt.contracts.task_record import UnitResult
from agentopt.workflows.optimize.ranking import SCORE_EPS as _EPS


@dataclass
class Race:
    """Once the tasks a candidate failed put even "every remaining task scores 1" below
    `bar()`, it cannot be ranked best, and its units that have not started are not started.
    Units in flight finish and are kept. No bound is drawn while a unit ended in an error (its
    mean would leave it out).

    Unit i is decided on units 0 … i − `window` alone, and waits until they are settled. With
    `window` the number of units run at once, that is as many finished units as a free slot
    would have seen; but always the same ones. Deciding on whichever units happened to finish
    first ended the race at a task that depended on timing, and the same job run twice with
    the same seed kept different candidates.

    `bar` returns (the best candidate's id, its validation score), or None for no bar."""

    n: int
    bar: Callable[[], tuple[str, float] | None]
    window: int = 1
    units: dict[int, UnitResult] = field(default_factory=dict)
    """Settled units by their position in the validation split (skipped ones are absent)."""
    stopped: tuple[str, float, float] | None = None
    """(best, its score, the most this candidate could reach) for the first unit it lost at."""
    _first_lost: int | None = None
    _settled: list[asyncio.Event] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._settled = [asyncio.Event() for _ in range(self.n)]

    async def admits(self, index: int) -> bool:
        """Whether unit `index` is to run, once the units it is decided on are settled."""
        seen = max(0, index - self.window + 1)
        for settled in self._settled[:seen]:
            await settled.wait()
        return not self.lost(seen)

    def settle(self, index: int, unit: UnitResult | None) -> None:
        """Unit `index` ran (`unit`), or was skipped or failed (None)."""
        if unit is not None:
            self.units[index] = unit
        self._settled[index].set()

    def lost(self, seen: int) -> bool:
        """True when units 0 … seen − 1 leave the candidate below the bar."""
        bar = self.bar()
        if bar is None:
            return False
        ran = [self.units[i] for i in range(seen) if i in self.units]
        if any(u.score.errors() or u.score.score is None for u in ran):
            return False
        at_most = (sum(u.score.score or 0.0 for u in ran) + self.n - len(ran)) / self.n
        best, score = bar
        if at_most >= score - _EPS:
            return False
        if self._first_lost is None or seen < self._first_lost:
            self._first_lost, self.stopped = seen, (best, score, at_most)
        return True
