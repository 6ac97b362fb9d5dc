"""Adaptive concurrency per pool (AIMD, models.md §3).

Each pool starts at its limit. A 429 halves the pool's current concurrency (floor 1) and pauses
the pool for the `Retry-After` time when one was given; every `increase_every` successes add one
slot back, up to the limit. Requests that were already in flight when the limit dropped carry
the old "generation": their 429s are counted but do not halve again, so one burst of rejections
costs one halving, not one per request (TCP-style, one decrease per window).

`AIMDState` is the pure, clock-injected state machine (unit-tested deterministically);
`PoolLimiter` wraps it with asyncio waiting.

A slot is re-entrant within its context: an agent run holds one agent slot for all its turns,
and the model calls it makes (in the same task or in tasks it starts, which copy the context)
run inside that slot instead of waiting for a second one — so one limit bounds agent runs of
every target, remote or local, and a local agent cannot deadlock on its own pool.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import suppress
from contextvars import ContextVar, Token
from dataclasses import dataclass, field

_HELD: ContextVar[frozenset[int]] = ContextVar("agentopt_held_slots", default=frozenset())
"""ids of the limiters whose slot the current context holds."""


@dataclass(frozen=True)
class LimiterEvent:
    """One change of a pool's state, for the debug log and the run summary."""

    at: float
    pool: str
    kind: str
    """"rate_limited" (a 429 arrived), "decrease", "increase", or "pause"."""
    limit: int
    """The pool's current concurrency after the event."""
    retry_after: float | None = None


@dataclass
class AIMDState:
    """Additive-increase / multiplicative-decrease bookkeeping of one pool."""

    pool: str
    limit: int
    increase_every: int = 20
    current: int = 0
    generation: int = 0
    successes: int = 0
    paused_until: float = 0.0
    rate_limited: int = 0
    min_seen: int = 0
    events: list[LimiterEvent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.limit = max(1, self.limit)
        self.current = self.current or self.limit
        self.min_seen = self.current

    def on_rate_limit(
        self, now: float, retry_after: float | None = None, generation: int | None = None
    ) -> list[LimiterEvent]:
        """A 429. `generation` is the value the request saw when it started."""
        self.rate_limited += 1
        new = [LimiterEvent(now, self.pool, "rate_limited", self.current, retry_after)]
        if generation is None or generation == self.generation:
            self.current = max(1, self.current // 2)
            self.generation += 1
            self.successes = 0
            self.min_seen = min(self.min_seen, self.current)
            new.append(LimiterEvent(now, self.pool, "decrease", self.current))
        if retry_after and now + retry_after > self.paused_until:
            self.paused_until = now + retry_after
            new.append(LimiterEvent(now, self.pool, "pause", self.current, retry_after))
        self.events.extend(new)
        return new

    def on_success(self, now: float) -> list[LimiterEvent]:
        """A completed request; every `increase_every` of them add a slot back."""
        if self.current >= self.limit:
            return []
        self.successes += 1
        if self.successes < self.increase_every:
            return []
        self.successes = 0
        self.current += 1
        event = LimiterEvent(now, self.pool, "increase", self.current)
        self.events.append(event)
        return [event]

    def wait_time(self, now: float) -> float:
        """Seconds until the pool's pause ends (0 when not paused)."""
        return max(0.0, self.paused_until - now)

    def summary(self) -> str:
        """ "rate limited 14×, concurrency 16 → 4 → 11", or "" when never rate limited."""
        if not self.rate_limited:
            return ""
        path = [self.limit]
        if self.min_seen != self.limit:
            path.append(self.min_seen)
        if self.current != path[-1]:
            path.append(self.current)
        return f"rate limited {self.rate_limited}×, concurrency " + " → ".join(map(str, path))


class PoolLimiter:
    """Bounds the concurrent attempts of one pool with an AIMD-adjusted limit."""

    def __init__(
        self,
        pool: str,
        limit: int,
        *,
        increase_every: int = 20,
        clock: Callable[[], float] = time.monotonic,
        on_event: Callable[[LimiterEvent], None] | None = None,
    ) -> None:
        self.state = AIMDState(pool=pool, limit=limit, increase_every=increase_every)
        self.in_flight = 0
        self._clock = clock
        self._on_event = on_event
        self._cond = asyncio.Condition()
        self._waiting = 0
        """Attempts waiting on `_cond` for a slot or for a pause to end."""

    def slot(self) -> _Slot:
        """`async with limiter.slot() as generation`: hold one slot (or use the one this
        context already holds); gives the generation to report a 429 with."""
        return _Slot(self)

    async def acquire(self) -> int:
        """Wait for a slot (and for a pause to end); returns the generation to report a 429 with.

        The common case, a slot free with no pause and nobody waiting, takes it without the
        condition's lock: the event loop runs one thing at a time, so nothing comes between
        the look and the count (three lock round trips a call were ~2% of a run's CPU)."""
        state = self.state
        free = not self._waiting and self.in_flight < state.current
        if free and state.wait_time(self._clock()) <= 0:
            self.in_flight += 1
            return state.generation
        async with self._cond:
            self._waiting += 1
            try:
                while True:
                    pause = self.state.wait_time(self._clock())
                    if pause > 0:
                        with suppress(TimeoutError):
                            await asyncio.wait_for(self._cond.wait(), timeout=pause)
                        continue
                    if self.in_flight < self.state.current:
                        self.in_flight += 1
                        return self.state.generation
                    await self._cond.wait()
            finally:
                self._waiting -= 1

    async def release(self) -> None:
        """Give a slot back (waking the waiters, when there are any)."""
        self.in_flight -= 1
        if self._waiting:
            async with self._cond:
                self._cond.notify_all()

    async def rate_limited(self, retry_after: float | None, generation: int) -> None:
        async with self._cond:
            self._emit(self.state.on_rate_limit(self._clock(), retry_after, generation))
            self._cond.notify_all()

    async def succeeded(self) -> None:
        events = self.state.on_success(self._clock())
        if events:
            self._emit(events)
            if self._waiting:  # the limit rose: a waiter may go
                async with self._cond:
                    self._cond.notify_all()

    def _emit(self, events: list[LimiterEvent]) -> None:
        if self._on_event is not None:
            for event in events:
                self._on_event(event)


class _Slot:
    """One hold of a pool's slot (`PoolLimiter.slot`): a class, not a generator-based context
    manager, as it is entered for every attempt."""

    __slots__ = ("_limiter", "_token")

    def __init__(self, limiter: PoolLimiter) -> None:
        self._limiter = limiter
        self._token: Token[frozenset[int]] | None = None

    async def __aenter__(self) -> int:
        limiter = self._limiter
        held = _HELD.get()
        if id(limiter) in held:
            return limiter.state.generation
        generation = await limiter.acquire()
        self._token = _HELD.set(held | {id(limiter)})
        return generation

    async def __aexit__(self, *exc: object) -> None:
        token, self._token = self._token, None
        if token is not None:
            _HELD.reset(token)
            await self._limiter.release()
