"""The state every model call of one command shares: the response cache, the AIMD limiter of
each pool, and the ledger (usage, cost, budgets).

`CallLayer` owns the flow of a call (resolve → cache → budget → limiter → retry → provider →
cost); this object owns what the calls have in common. Locally there is one per command, inside
the layer. On a Ray cluster one lives in a coordinator actor on the driver's node and every
process's layer reaches it through a proxy with the same surface (`workflows/cluster`), so the
cache is one SQLite file, the limits are global and the budget counts every worker's calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentopt.contracts.usage import Usage
from agentopt.models.cache import ResponseCache
from agentopt.models.calllog import log_limiter_event
from agentopt.models.cost import Ledger
from agentopt.models.limiter import LimiterEvent, PoolLimiter
from agentopt.models.settings import CallSettings

DEFAULT_POOL_LIMIT = 4


class CallState:
    """Cache, limiters and ledger of one command (see the module docstring)."""

    def __init__(
        self,
        project_dir: Path,
        settings: CallSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.ledger = Ledger(max_cost_usd=settings.max_cost_usd, max_calls=settings.max_calls)
        self.cache: ResponseCache | None = (
            ResponseCache.for_project(project_dir) if settings.cache_enabled else None
        )
        self.events: list[LimiterEvent] = []
        self.limiters: dict[str, PoolLimiter] = {}
        self._clock = clock

    def limiter(self, pool: str) -> PoolLimiter:
        """The pool's limiter, created at its configured limit on first use."""
        limiter = self.limiters.get(pool)
        if limiter is None:
            limit = self.settings.concurrency.get(pool, DEFAULT_POOL_LIMIT)
            limiter = self.limiters[pool] = PoolLimiter(
                pool,
                limit,
                increase_every=self.settings.aimd_increase_every,
                clock=self._clock,
                on_event=self._on_event,
            )
        return limiter

    def rate_limits(self) -> dict[str, str]:
        """Per rate-limited pool: "rate limited 14×, concurrency 16 → 4 → 11"."""
        return {
            name: lim.state.summary()
            for name, lim in self.limiters.items()
            if lim.state.rate_limited
        }

    def limiter_events(self) -> list[dict[str, Any]]:
        return [
            {"pool": e.pool, "kind": e.kind, "limit": e.limit, "retry_after": e.retry_after}
            for e in self.events
        ]

    async def sync(self) -> None:
        """Wait until what this process recorded counts everywhere (a shared state's records
        travel; here they already do)."""

    async def aclose(self) -> None:
        """Flush the cache's hit counters and close it."""
        if self.cache is not None:
            await self.cache.aclose()

    def _on_event(self, event: LimiterEvent) -> None:
        self.events.append(event)
        log_limiter_event(event)


class BranchLedger(Ledger):
    """One part's own usage (a matrix run's variant), every record also counted by the
    command's ledger, whose budget (`--max-cost`, the call cap) admits each new call."""

    def __init__(self, parent: Ledger) -> None:
        super().__init__()
        self.parent = parent

    def start_call(self) -> None:
        self.parent.start_call()
        self.started += 1

    def record_call(self, pool: str, usage: Usage, cost: float, *, retries: int = 0) -> None:
        super().record_call(pool, usage, cost, retries=retries)
        self.parent.record_call(pool, usage, cost, retries=retries)

    def record_hit(self, pool: str, count: int = 1) -> None:
        super().record_hit(pool, count)
        self.parent.record_hit(pool, count)

    def record_error(self, pool: str, *, retries: int = 0) -> None:
        super().record_error(pool, retries=retries)
        self.parent.record_error(pool, retries=retries)


class BranchState(CallState):
    """A part of a command that shares the command's cache, limiters and budget but counts
    its own usage: each variant of a matrix run, so one `--concurrency` pool and one cache
    serve every variant while each variant's results.json shows its own calls and cost."""

    def __init__(self, parent: CallState) -> None:  # no super().__init__: nothing of its own
        self.settings = parent.settings
        self.ledger = BranchLedger(parent.ledger)
        self.cache = parent.cache
        self.events = parent.events
        self.limiters = parent.limiters
        self._clock = parent._clock
        self._parent = parent

    def limiter(self, pool: str) -> PoolLimiter:
        return self._parent.limiter(pool)

    async def aclose(self) -> None:
        """The command closes the shared state once; a branch holds nothing of its own."""
