"""`--budget-calls`: agent + judge provider calls over every session of a job, held exactly.

A unit (one candidate on one task) is admitted only when the calls already made, plus what
the units in flight may still make, plus its own cost, fit under the limit less the calls
kept for the test split. A unit that does not fit while others are in flight waits for them
(their true cost is then known) instead of giving up early; when nothing is in flight and it
still does not fit, the search is over. A unit's cost is what finished units cost on average
(agent turns and tool rounds, judge calls, cache hits included), never less than the plan's
estimate, so a tool loop that takes three calls per task is budgeted as three and the test
split, which the cache cannot answer, keeps what it needs. Cache hits themselves are free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from agentopt.core.errors import BudgetExceeded
from agentopt.models.call import CallLayer

EVAL_POOLS = ("agent", "judge", "simulator")
"""The pools an evaluation unit calls (simulated users included): what --budget-calls counts."""


class CallBudget:
    """The call cap of one job (None = no cap; units are still counted)."""

    def __init__(
        self,
        layer: CallLayer,
        limit: int | None,
        before: int = 0,
        unit_calls: float = 2.0,
        sync: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.layer = layer
        self.sync = sync
        """Brings the layer's totals up to date before each check (a cluster's workers report
        their calls on their next message; None in one process)."""
        self.limit = limit
        self.before = before
        """Calls earlier sessions of the job made (--resume)."""
        self.unit_calls = unit_calls
        """The plan's estimate of calls per unit."""
        self.reserve_units = 0
        """Units kept back for the final test-split evaluation."""
        self._start = self._requested()
        self._inflight = 0
        self._finished = 0
        self._final_limit: int | None = None
        self._changed: asyncio.Condition | None = None

    def used(self) -> int:
        # The ledger's live totals, not `layer.stats()`: that builds the whole summary (copies
        # of every pool, the limiter's events, each server's capabilities), and the budget is
        # asked before every unit.
        pools = self.layer.ledger.pools
        return self.before + sum(pools[p].calls for p in EVAL_POOLS if p in pools)

    def _requested(self) -> int:
        """Calls made plus calls the cache answered: what the units asked for."""
        pools = self.layer.ledger.pools
        return sum(pools[p].calls + pools[p].cache_hits for p in EVAL_POOLS if p in pools)

    @property
    def per_unit(self) -> float:
        """Calls one unit costs when nothing is cached (as on the test split): what finished
        units asked for on average, at least the plan's estimate."""
        if not self._finished:
            return self.unit_calls
        return max(self.unit_calls, (self._requested() - self._start) / self._finished)

    @property
    def reserve(self) -> int:
        """Calls kept for the test split."""
        return round(self.reserve_units * self.per_unit)

    def _limit(self, final: bool) -> int:
        assert self.limit is not None
        if not final:
            return max(self.limit - self.reserve, 0)
        if self._final_limit is None:
            # The test split is promised its reserve: if an estimate was short and the search
            # ate into it, the test split still gets it (an overshoot of that shortfall only).
            self._final_limit = max(self.limit, self.used() + self.reserve)
        return self._final_limit

    def _exceeded(self, final: bool) -> BudgetExceeded:
        kept = "" if final or not self.reserve else f" ({self.reserve} kept for the test split)"
        return BudgetExceeded(
            f"call budget reached: {self.used()} agent+judge calls of --budget-calls "
            f"{self.limit}{kept}",
            hint="raise --budget-calls and resume the job; finished work is not repeated",
        )

    async def admit(self, *, final: bool = False) -> None:
        """Reserve one unit's calls; BudgetExceeded when they cannot fit."""
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            while True:
                if self.limit is None:
                    break
                if self.sync is not None:
                    await self.sync()
                room = self._limit(final) - self.used()
                if (self._inflight + 1) * self.per_unit <= room + 1e-9:
                    break
                if self._inflight == 0:
                    raise self._exceeded(final)
                await self._changed.wait()
            self._inflight += 1

    async def release(self) -> None:
        """A unit admitted by `admit` has finished (or failed)."""
        assert self._changed is not None
        async with self._changed:
            self._inflight -= 1
            self._finished += 1
            self._changed.notify_all()
