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
    _first_lost: int | None = field(default=None, init=False, repr=False)
    _settled: list[asyncio.Event] = field(init=False, repr=False)
    _prefix: list[tuple[float, int, bool]] = field(
        default_factory=lambda: [(0.0, 0, False)], init=False, repr=False
    )
    """At k: (the scores' sum, how many ran, whether one ended in an error) of units 0 … k − 1,
    so each unit's decision costs one step, not a pass over the units before it."""

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
        total, ran, error = self._totals(seen)
        if error:
            return False
        at_most = (total + self.n - ran) / self.n
        best, score = bar
        if at_most >= score - _EPS:
            return False
        if self._first_lost is None or seen < self._first_lost:
            self._first_lost, self.stopped = seen, (best, score, at_most)
        return True

    def _totals(self, seen: int) -> tuple[float, int, bool]:
        """`_prefix` at `seen`, extended over units 0 … seen − 1 (all settled by then)."""
        prefix = self._prefix
        while len(prefix) <= seen:
            total, ran, error = prefix[-1]
            unit = self.units.get(len(prefix) - 1)
            if unit is not None:
                ran += 1
                if unit.score.errors() or unit.score.score is None:
                    error = True
                else:
                    total += unit.score.score
            prefix.append((total, ran, error))
        return prefix[seen]
