"""Running a command's one event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from agentopt.core.heap import settle

T = TypeVar("T")


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, except that the main task finishes holding no result.

    On Python 3.11, when the loop ends, `asyncio.run` asks `signal.getsignal(SIGINT)` whether
    its Ctrl-C handler is still installed; the signal module's enum lookup fails on the handler
    (a partial bound to the main task) and formats its repr, which includes the repr of the
    task's result: for a 1,000-task run, the whole results tree (0.2-0.8 s, O(N)). So the
    result travels beside the task instead.
    """
    settle()  # the inputs are built: they live as long as the command
    box: list[T] = []

    async def holder() -> None:
        box.append(await main)

    asyncio.run(holder())
    return box[0]
