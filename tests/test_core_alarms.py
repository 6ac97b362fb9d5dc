"""The loop's one timer for every watch (`core.alarms`): a watch is asked when it falls due
and as often as it asks, a sooner watch is not kept waiting behind a later one, an ended watch
is never asked, and many watches in flight hold one timer between them."""

from __future__ import annotations

import asyncio
import itertools

from agentopt.core import alarms


def test_a_sooner_watch_is_asked_first_and_an_ended_one_never() -> None:
    asked: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        alarms.watch(lambda: asked.append("late") or None, 0.2)  # type: ignore[func-returns-value]
        ended = alarms.watch(lambda: asked.append("ended") or None, 0.05)  # type: ignore[func-returns-value]
        alarms.watch(lambda: asked.append("soon") or None, 0.02)  # type: ignore[func-returns-value]
        alarms.unwatch(ended)
        started = loop.time()
        while len(asked) < 2:
            await asyncio.sleep(0.01)
        assert loop.time() - started >= 0.19

    asyncio.run(main())
    assert asked == ["soon", "late"]


def test_a_watch_is_asked_again_as_it_says_until_it_is_done() -> None:
    times: list[float] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def check() -> float | None:
            times.append(loop.time())
            if len(times) == 3:
                done.set_result(None)
                return None
            return 0.03

        alarms.watch(check, 0.01)
        await done
        await asyncio.sleep(0.1)  # a finished watch is not asked again

    asyncio.run(main())
    assert len(times) == 3
    assert all(b - a >= 0.029 for a, b in itertools.pairwise(times))


def test_many_watches_in_flight_share_one_timer() -> None:
    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        before = len(loop._scheduled)  # type: ignore[attr-defined]
        keys = [alarms.watch(lambda: None, 30.0 + i) for i in range(100)]
        during = len(loop._scheduled) - before  # type: ignore[attr-defined]
        for key in keys:
            alarms.unwatch(key)
        return during, len(keys)

    assert asyncio.run(main()) == (1, 100)


def test_a_check_that_fails_is_reported_and_the_other_watches_still_fire() -> None:
    asked: list[str] = []
    reported: list[str] = []

    def broken() -> float | None:
        raise ValueError("broken check")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(
            lambda _loop, context: reported.append(str(context["exception"]))
        )
        alarms.watch(broken, 0.01)
        done = loop.create_future()
        alarms.watch(lambda: asked.append("after") or done.set_result(None), 0.01)  # type: ignore[func-returns-value]
        await asyncio.wait_for(done, 2)

    asyncio.run(main())
    assert (asked, reported) == (["after"], ["broken check"])
