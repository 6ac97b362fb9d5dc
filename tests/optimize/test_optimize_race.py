"""Racing a candidate's validation against the best's score: stop only when even a perfect
rest cannot reach it — never on a tie, never while an error is unexplained — and at the same
task whatever order the units finish in."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

from agentopt.workflows.optimize.race import Race


def unit(score: float | None, error: bool = False) -> Any:
    errors = [("agent_error", "boom")] if error else []
    return SimpleNamespace(score=SimpleNamespace(score=score, errors=lambda: errors))


def settled(race: Race, *units: Any) -> Race:
    for i, u in enumerate(units):
        race.settle(i, u)
    return race


def test_a_candidate_is_out_once_a_perfect_rest_cannot_reach_the_bar() -> None:
    race = settled(Race(4, lambda: ("cand_02", 0.75)), unit(1.0), unit(0.0), unit(0.5))
    assert not race.lost(2)  # 1 + 0 + 1 + 1 = 3 of 4: it can still tie the best
    assert race.lost(3) and race.stopped == ("cand_02", 0.75, 0.625)
    assert not race.lost(2)  # each unit is decided on its own units, whoever asked first


def test_no_bar_or_an_error_keeps_the_candidate_running() -> None:
    assert not settled(Race(2, lambda: None), unit(0.0)).lost(1)
    race = settled(Race(4, lambda: ("baseline", 1.0)), unit(None, error=True), unit(0.0))
    assert not race.lost(2)  # an error is left out of the mean: no bound can be drawn


def test_the_bar_is_read_at_each_check() -> None:
    bar = {"now": ("baseline", 0.5)}
    race = settled(Race(4, lambda: bar["now"]), unit(0.0), unit(0.0))
    assert not race.lost(2)  # at most 0.5: ties the baseline
    bar["now"] = ("cand_03", 0.75)  # another proposal became the best meanwhile
    assert race.lost(2) and race.stopped is not None and race.stopped[0] == "cand_03"


def run_race(scores: list[float], finish_order: list[int], window: int) -> tuple[list[int], Any]:
    """Race 10 units with `window` at once, the units finishing in `finish_order` (as fast
    or slow replies would have them); which units ran, and where the race stopped."""
    race = Race(len(scores), lambda: ("baseline", 0.7), window=window)
    ran: list[int] = []

    async def main() -> None:
        slots = asyncio.Semaphore(window)
        rank = {u: r for r, u in enumerate(finish_order)}

        async def one(i: int) -> None:
            result = None
            try:
                if await race.admits(i):
                    async with slots:
                        ran.append(i)
                        for _ in range(rank[i] + 1):  # later in the order: more turns
                            await asyncio.sleep(0)
                        result = unit(scores[i])
            finally:
                race.settle(i, result)

        await asyncio.gather(*(one(i) for i in range(len(scores))))

    asyncio.run(main())
    return sorted(ran), race.stopped


def test_the_race_stops_at_the_same_unit_whatever_order_units_finish_in() -> None:
    # Failing the first units, the candidate cannot reach 0.7 once 4 of 10 failed.
    scores = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    in_order = run_race(scores, list(range(10)), window=3)
    assert in_order == ([0, 1, 2, 3, 4, 5, 6, 7], ("baseline", 0.7, 0.6))
    shuffled = random.Random(7)
    for _ in range(20):
        order = list(range(10))
        shuffled.shuffle(order)
        assert run_race(scores, order, window=3) == in_order
