"""One call state for a whole Ray cluster: a coordinator actor on the driver's node holds the
real `CallState` (the SQLite cache file, one AIMD limiter per pool, the ledger), and every
process's `CallLayer` — each worker's and the driver's — reaches it through `RemoteCallState`,
which has the surface `CallLayer` expects.

So a rerun on the cluster is served from the same cache as a local one (0 provider calls), a 429
halves the pool's concurrency for every worker at once, and `--max-cost` / `--budget-calls` count
every worker's calls. Messages per answered model call: three — the cache read, a limiter slot
(one per attempt), the cache write. Ledger records and slot releases are queued in the process
and ride along with its next message (`sync()` sends them when none is due), so the coordinator
has a call's record before the caller goes on, as a local ledger would.

Slots are leases held by a named worker: when a worker dies, the driver tells the coordinator,
which gives back every slot the dead process held, so a killed worker never shrinks a pool.
A slot is re-entrant within its context, as `PoolLimiter`'s is, and the pools a unit holds on
the driver (optimize holds an agent slot per unit) are held for it on the worker that plays it
(`held_pools` / `holding`): a unit never waits for a second slot of a pool it already holds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import ray

from agentopt.contracts.usage import Usage
from agentopt.core.errors import BudgetExceeded
from agentopt.models.cache import CacheSurface
from agentopt.models.cache_sql import Row
from agentopt.models.call_state import CallState
from agentopt.models.cost import Ledger, Totals
from agentopt.models.limiter import AIMDState
from agentopt.models.settings import CallSettings

Batch = list[tuple[str, str, dict[str, Any]]]
"""Queued records: (kind, pool, values)."""
_HELD: ContextVar[frozenset[str]] = ContextVar("agentopt_held_remote_pools", default=frozenset())
"""Pools whose slot the current context holds (here, or on the driver for this unit)."""


def held_pools() -> list[str]:
    """The pools the current context holds a slot of (sent with a unit to its worker)."""
    return sorted(_HELD.get())


@contextlib.contextmanager
def holding(pools: list[str]) -> Iterator[None]:
    """Run a unit as holding `pools` already (their slot is the driver's, for this unit)."""
    token = _HELD.set(_HELD.get() | set(pools))
    try:
        yield
    finally:
        _HELD.reset(token)


@ray.remote(num_cpus=0, max_concurrency=10_000)  # type: ignore[call-overload]
class CallCoordinator:
    """The cluster's one `CallState`, served to every process (see the module docstring).

    Every method takes `batch` first: the records the caller queued since its last message,
    applied before the method's own work (a release before the next acquire, always).
    """

    def __init__(self, project_dir: str, settings_json: str) -> None:
        settings = CallSettings.model_validate_json(settings_json)
        self.state = CallState(Path(project_dir), settings)
        self.leases: dict[int, tuple[str, str]] = {}
        self.lost: set[str] = set()
        self._next_lease = 0

    async def cache_get_many(self, batch: Batch, keys: list[str]) -> dict[str, dict[str, Any]]:
        await self._apply(batch)
        cache = self.state.cache
        return await cache.get_many(keys) if cache is not None else {}

    async def cache_put_many(
        self, batch: Batch, rows: list[tuple[str, str, str, str, dict[str, Any]]]
    ) -> None:
        await self._apply(batch)
        if self.state.cache is not None:
            await self.state.cache.put_many([tuple(r) for r in rows])  # type: ignore[misc]

    async def get_capabilities(
        self, batch: Batch, provider: str, base_url: str, model: str
    ) -> dict[str, str]:
        await self._apply(batch)
        cache = self.state.cache
        return await cache.get_capabilities(provider, base_url, model) if cache else {}

    async def put_capability(self, batch: Batch, row: tuple[str, str, str, str, str, str]) -> None:
        await self._apply(batch)
        if self.state.cache is not None:
            await self.state.cache.put_capability(*row)

    async def acquire(self, batch: Batch, pool: str, worker: str) -> tuple[int, int, float, int]:
        """A slot of `pool` for `worker`: (generation, lease, cluster spend, calls started)."""
        await self._apply(batch)
        limiter = self.state.limiter(pool)
        generation = await limiter.acquire()
        ledger = self.state.ledger
        if worker in self.lost:  # granted after its holder died: give it straight back
            await limiter.release()
            return generation, -1, ledger.spent_usd, ledger.started
        lease = self._next_lease
        self._next_lease += 1
        self.leases[lease] = (pool, worker)
        return generation, lease, ledger.spent_usd, ledger.started

    async def rate_limited(
        self, batch: Batch, pool: str, retry_after: float | None, generation: int
    ) -> None:
        await self._apply(batch)
        await self.state.limiter(pool).rate_limited(retry_after, generation)

    async def flush(self, batch: Batch) -> None:
        await self._apply(batch)

    async def worker_lost(self, worker: str) -> int:
        """Give back every slot `worker` held; returns how many."""
        self.lost.add(worker)
        held = [lease for lease, (_, w) in self.leases.items() if w == worker]
        for lease in held:
            await self._release(lease)
        return len(held)

    async def snapshot(self, batch: Batch) -> dict[str, Any]:
        """The cluster's totals, for the driver's run summary, progress and budgets."""
        await self._apply(batch)
        ledger = self.state.ledger
        return {
            "pools": {name: t.model_dump() for name, t in ledger.pools.items()},
            "started": ledger.started,
            "unpriced": sorted(ledger.unpriced),
            "rate_limits": self.state.rate_limits(),
            "events": self.state.limiter_events(),
        }

    async def aclose(self) -> None:
        await self.state.aclose()

    async def _apply(self, batch: Batch) -> None:
        ledger = self.state.ledger
        for kind, pool, values in batch:
            if kind == "release":
                await self._release(int(values["lease"]))
            elif kind == "succeeded":
                await self.state.limiter(pool).succeeded()
            elif kind == "start":
                ledger.started += 1
            elif kind == "call":
                usage = Usage.model_validate(values["usage"])
                ledger.record_call(pool, usage, float(values["cost"]), retries=values["retries"])
            elif kind == "hit":
                ledger.record_hit(pool, int(values.get("count", 1)))
            elif kind == "error":
                ledger.record_error(pool, retries=int(values["retries"]))
            elif kind == "unpriced":
                ledger.unpriced.add(str(values["model"]))

    async def _release(self, lease: int) -> None:
        held = self.leases.pop(lease, None)
        if held is not None:
            await self.state.limiter(held[0]).release()


class _Queue:
    """Records waiting for this process's next message to the coordinator."""

    def __init__(self) -> None:
        self.items: Batch = []

    def send(self, kind: str, pool: str = "", **values: Any) -> None:
        self.items.append((kind, pool, values))

    def take(self) -> Batch:
        items, self.items = self.items, []
        return items


class _UnpricedSet(set[str]):
    def __init__(self, queue: _Queue) -> None:
        super().__init__()
        self._queue = queue

    def add(self, model: str) -> None:
        if model not in self:
            self._queue.send("unpriced", model=model)
        super().add(model)


class SharedLedger(Ledger):
    """This process's view of the cluster's ledger: records go to the coordinator; totals are
    the coordinator's last snapshot plus what this process recorded since; budgets are checked
    against the cluster's spend (at most the calls in flight elsewhere behind, as locally)."""

    def __init__(self, queue: _Queue, settings: CallSettings) -> None:
        super().__init__(max_cost_usd=settings.max_cost_usd, max_calls=settings.max_calls)
        self._queue = queue
        self.unpriced = _UnpricedSet(queue)
        self.cluster_spent = 0.0
        self.cluster_started = 0

    @property
    def spent_usd(self) -> float:
        return max(self.cluster_spent, super().spent_usd)

    def start_call(self) -> None:
        self.started = max(self.started, self.cluster_started)
        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
            raise BudgetExceeded(
                f"cost budget reached: ${self.spent_usd:.4f} spent of --max-cost "
                f"${self.max_cost_usd:.4f} on the cluster; no new model calls were started",
                hint="raise --max-cost, or resume the run later (cached answers cost nothing)",
            )
        super().start_call()
        self.cluster_started += 1
        self._queue.send("start")

    def record_call(self, pool: str, usage: Usage, cost: float, *, retries: int = 0) -> None:
        super().record_call(pool, usage, cost, retries=retries)
        self.cluster_spent += cost
        self._queue.send(
            "call", pool, usage=usage.model_dump(mode="json"), cost=cost, retries=retries
        )

    def record_hit(self, pool: str, count: int = 1) -> None:
        super().record_hit(pool, count)
        self._queue.send("hit", pool, count=count)

    def record_error(self, pool: str, *, retries: int = 0) -> None:
        super().record_error(pool, retries=retries)
        self._queue.send("error", pool, retries=retries)

    def adopt(self, snapshot: dict[str, Any]) -> None:
        """Take the coordinator's totals as this process's view."""
        self.pools = {name: Totals.model_validate(t) for name, t in snapshot["pools"].items()}
        self.cluster_started = int(snapshot["started"])
        self.cluster_spent = sum(t.cost_usd for t in self.pools.values())
        set.update(self.unpriced, snapshot["unpriced"])


class RemoteCache(CacheSurface):
    """The `ResponseCache` surface `CallLayer` uses, served by the coordinator."""

    def __init__(self, owner: RemoteCallState) -> None:
        self.owner = owner

    async def get_many(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        if not keys:
            return {}
        batch = self.owner.queue.take()
        found: dict[str, dict[str, Any]] = await self.owner.coordinator.cache_get_many.remote(
            batch, keys
        )
        return found

    async def put_many(self, rows: list[Row]) -> None:
        # Awaited: a worker killed right after its call must still leave the answer cached.
        # A serialised `text` given to `put` is not used: the coordinator's cache serialises
        # the payload it receives.
        if rows:
            batch = self.owner.queue.take()
            await self.owner.coordinator.cache_put_many.remote(batch, rows)

    async def get_capabilities(self, provider: str, base_url: str, model: str) -> dict[str, str]:
        """What a server was found to accept: probed once per cache file, cluster-wide."""
        found: dict[str, str] = await self.owner.coordinator.get_capabilities.remote(
            self.owner.queue.take(), provider, base_url, model
        )
        return found

    async def put_capability(
        self, provider: str, base_url: str, model: str, feature: str, value: str, reason: str
    ) -> None:
        row = (provider, base_url, model, feature, value, reason)
        await self.owner.coordinator.put_capability.remote(self.owner.queue.take(), row)

    async def aclose(self) -> None:
        """The coordinator owns the file: nothing to close here."""


class RemoteLimiter:
    """The `PoolLimiter` surface `run_attempts` uses, with slots leased from the coordinator."""

    def __init__(self, owner: RemoteCallState, pool: str) -> None:
        self.owner = owner
        self.pool = pool
        self.state = AIMDState(pool=pool, limit=owner.settings.concurrency.get(pool, 4))

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        if self.pool in _HELD.get():
            yield self.state.generation
            return
        owner = self.owner
        ref = owner.coordinator.acquire.remote(owner.queue.take(), self.pool, owner.worker)
        try:
            generation, lease, spent, started = await ref
        except asyncio.CancelledError:
            # The coordinator may still grant the slot: give it back when it does.
            owner.background(self._give_back(ref))
            raise
        owner.ledger.cluster_spent = max(owner.ledger.cluster_spent, spent)
        owner.ledger.cluster_started = max(owner.ledger.cluster_started, started)
        self.state.generation = generation
        token = _HELD.set(_HELD.get() | {self.pool})
        try:
            yield generation
        finally:
            _HELD.reset(token)
            owner.queue.send("release", lease=lease)
            owner.flush_soon()

    async def _give_back(self, ref: Any) -> None:
        _, lease, _, _ = await ref
        self.owner.queue.send("release", lease=lease)
        await self.owner.sync()

    async def rate_limited(self, retry_after: float | None, generation: int) -> None:
        owner = self.owner
        await owner.coordinator.rate_limited.remote(
            owner.queue.take(), self.pool, retry_after, generation
        )

    async def succeeded(self) -> None:
        self.owner.queue.send("succeeded", self.pool)


class RemoteCallState(CallState):
    """A `CallState` whose cache, limiters and ledger are the coordinator's.

    Args:
        coordinator: the `CallCoordinator` actor handle.
        settings: the command's call settings (the same on every process).
        worker: who holds the slots this process leases ("driver" or a worker id).
    """

    def __init__(self, coordinator: Any, settings: CallSettings, worker: str) -> None:
        self.settings = settings
        self.coordinator = coordinator
        self.worker = worker
        self.queue = _Queue()
        self.ledger: SharedLedger = SharedLedger(self.queue, settings)
        self.cache = RemoteCache(self) if settings.cache_enabled else None  # type: ignore[assignment]
        self.events = []
        self.limiters = {}
        self._remote_limiters: dict[str, RemoteLimiter] = {}
        self._snapshot: dict[str, Any] = {"rate_limits": {}, "events": []}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._flush_due = False

    def limiter(self, pool: str) -> RemoteLimiter:  # type: ignore[override]
        limiter = self._remote_limiters.get(pool)
        if limiter is None:
            limiter = self._remote_limiters[pool] = RemoteLimiter(self, pool)
        return limiter

    def rate_limits(self) -> dict[str, str]:
        return dict(self._snapshot["rate_limits"])

    def limiter_events(self) -> list[dict[str, Any]]:
        return list(self._snapshot["events"])

    def background(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def flush_soon(self) -> None:
        """A slot was given back: make sure the coordinator hears of it soon. Usually the
        caller's next message (the cache write) carries it before this runs; on a failed
        attempt nothing else would, and a slot held by an idle worker would starve the pool."""
        if not self._flush_due:
            self._flush_due = True
            self.background(self._deferred_flush())

    async def _deferred_flush(self) -> None:
        await asyncio.sleep(0)  # let the caller's next message take the queue first
        self._flush_due = False
        await self.sync()

    async def sync(self) -> None:
        """Send the queued records now (after a call whose records no message carried)."""
        batch = self.queue.take()
        if batch:
            await self.coordinator.flush.remote(batch)

    async def refresh(self) -> dict[str, Any]:
        """Send what is queued, then take the cluster's totals as this process's view."""
        snapshot: dict[str, Any] = await self.coordinator.snapshot.remote(self.queue.take())
        self._snapshot = snapshot
        self.ledger.adopt(snapshot)
        return snapshot

    async def aclose(self) -> None:
        """Send every queued record and slot release to the coordinator."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.sync()
