"""The command loop hands back the main coroutine's result without ever formatting it."""

from __future__ import annotations

from agentopt.core.aio import run_loop


class Big:
    reprs = 0

    def __repr__(self) -> str:
        Big.reprs += 1
        return "Big(...)"


def test_the_result_is_returned_and_never_repr_formatted() -> None:
    async def main() -> Big:
        return Big()

    result = run_loop(main())
    assert isinstance(result, Big)
    assert Big.reprs == 0  # asyncio.run on 3.11 formats the main task's result at shutdown
