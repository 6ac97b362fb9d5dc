"""Adaptive per-pool concurrency (AIMD, models.md §3)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from agentopt.models import AIMDState, CallLayer, ChatRequest, Message, PoolLimiter
from tests.fake_openai import FakeOpenAI
from tests.models.helpers import fast_settings


def test_a_429_halves_and_successes_add_back_one_slot_per_20() -> None:
    s = AIMDState(pool="judge", limit=16, increase_every=20)
    s.on_rate_limit(0.0, generation=s.generation)
    assert s.current == 8
    s.on_rate_limit(0.0, generation=s.generation)
    assert s.current == 4
    for _ in range(19):
        s.on_success(1.0)
    assert s.current == 4
    s.on_success(1.0)
    assert s.current == 5
    for _ in range(20 * 6):
        s.on_success(2.0)
    assert s.current == 11
    assert s.summary() == "rate limited 2×, concurrency 16 → 4 → 11"
    for _ in range(20 * 10):
        s.on_success(3.0)
    assert s.current == 16  # never above the configured limit


def test_one_burst_of_429s_costs_one_halving() -> None:
    s = AIMDState(pool="agent", limit=16)
    started_under = s.generation  # 16 requests in flight, all sent under the same limit
    for _ in range(16):
        s.on_rate_limit(0.0, generation=started_under)
    assert s.current == 8 and s.rate_limited == 16
    assert [e.kind for e in s.events].count("decrease") == 1


def test_concurrency_never_drops_below_one() -> None:
    s = AIMDState(pool="agent", limit=3)
    for _ in range(5):
        s.on_rate_limit(0.0, generation=s.generation)
    assert s.current == 1
    assert s.summary() == "rate limited 5×, concurrency 3 → 1"


def test_retry_after_pauses_the_pool() -> None:
    s = AIMDState(pool="judge", limit=4)
    s.on_rate_limit(100.0, retry_after=2.0, generation=s.generation)
    assert s.wait_time(100.5) == 1.5
    assert s.wait_time(102.0) == 0.0
    s.on_rate_limit(100.6, retry_after=0.5, generation=s.generation)  # shorter: keeps the later end
    assert s.wait_time(100.6) == pytest.approx(1.4)
    assert [e.kind for e in s.events] == [
        "rate_limited",
        "decrease",
        "pause",
        "rate_limited",
        "decrease",
    ]


def test_pool_limiter_bounds_in_flight_attempts() -> None:
    async def main() -> int:
        limiter = PoolLimiter("agent", 3)
        peak = 0

        async def work() -> None:
            nonlocal peak
            async with limiter.slot():
                peak = max(peak, limiter.in_flight)
                await asyncio.sleep(0.01)

        await asyncio.gather(*(work() for _ in range(20)))
        return peak

    assert asyncio.run(main()) == 3


def test_pool_limiter_waits_out_a_pause() -> None:
    async def main() -> float:
        limiter = PoolLimiter("judge", 4)
        async with limiter.slot() as generation:
            pass
        await limiter.rate_limited(0.2, generation)
        started = time.monotonic()
        async with limiter.slot():
            return time.monotonic() - started

    assert asyncio.run(main()) >= 0.19


def test_pools_adapt_to_a_rate_limited_server(project: Path) -> None:
    """A server that accepts 2 requests at a time: the judge pool (limit 8) shrinks to fit,
    every call still succeeds, and the run summary says what happened."""
    with FakeOpenAI(latency=0.02, max_in_flight=2) as srv:

        async def main() -> tuple[list[str], str, dict[str, int]]:
            settings = fast_settings(srv, cache_enabled=False, concurrency={"judge": 8, "agent": 8})
            async with CallLayer(project, settings) as layer:
                requests = [
                    ChatRequest(messages=[Message(role="user", content=f"q{i}")]) for i in range(20)
                ]
                answers = await asyncio.gather(
                    *(layer.complete("fake:m", r, pool="judge") for r in requests)
                )
                limits = {p: lim.state.current for p, lim in layer.state.limiters.items()}
                return [a.text for a in answers], layer.limiter_summary(), limits

        texts, summary, limits = asyncio.run(main())
        assert texts == [f"q{i}" for i in range(20)]
        assert srv.rejected > 0
        assert summary.startswith("judge: rate limited ")
        assert "concurrency 8 → " in summary
        assert limits["judge"] < 8
