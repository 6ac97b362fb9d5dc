"""The attempt watchdog (`models.attempts`) runs the attempt in the caller's task: no task of
its own per call (issue 31: a task and an `asyncio.wait` per call were the call layer's
overhead in the optimizer's tool worlds), and still cuts, and lets the caller cancel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentopt.models.attempts import AttemptFailed, CallTarget, run_attempts
from agentopt.models.call_progress import CURRENT_PROGRESS, CallProgress
from agentopt.models.limiter import PoolLimiter
from agentopt.models.retry import RetryPolicy

TARGET = CallTarget(provider="fake", model="m", pool="judge")


def _attempts(send: Any, **windows: Any) -> Any:
    return run_attempts(
        send,
        target=TARGET,
        limiter=PoolLimiter("judge", 4),
        policy=RetryPolicy(max_attempts=windows.pop("max_attempts", 1)),
        call_timeout_s=windows.pop("call_timeout_s", 30.0),
        run_deadline=None,
        **windows,
    )


def test_a_call_creates_no_task_and_its_attempt_sees_the_progress() -> None:
    created: list[object] = []

    async def send() -> str:
        await asyncio.sleep(0)
        progress = CURRENT_PROGRESS.get()
        assert progress is not None
        progress.tick(1)
        return "answer"

    async def main() -> tuple[str, list[object]]:
        loop = asyncio.get_running_loop()

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
            created.append(coro)
            return asyncio.Task(coro, loop=loop, **kw)

        loop.set_task_factory(factory)
        outcome = await _attempts(send, attempt_timeout_s=5.0, stall_s=5.0)
        during = list(created)
        loop.set_task_factory(None)
        assert CURRENT_PROGRESS.get() is None  # reset once the attempt is over
        return outcome.value, during

    assert asyncio.run(main()) == ("answer", [])


def test_a_hung_attempt_is_cut_and_the_next_one_answers() -> None:
    calls: list[int] = []

    async def send() -> str:
        calls.append(1)
        if len(calls) == 1:
            await asyncio.sleep(30)
        return "second"

    async def main() -> tuple[str, int]:
        outcome = await _attempts(send, attempt_timeout_s=0.05, max_attempts=2)
        task = asyncio.current_task()
        assert task is not None
        return outcome.value, task.cancelling()

    assert asyncio.run(main()) == ("second", 0)  # the cut's cancellation is not left on the task


def test_a_stalled_stream_is_cut_with_a_timeout_error() -> None:
    async def send() -> str:
        progress = CURRENT_PROGRESS.get()
        assert progress is not None
        progress.streaming()
        progress.tick(1)
        await asyncio.sleep(30)
        return "never"

    with pytest.raises(AttemptFailed) as failed:
        asyncio.run(_attempts(send, stall_s=0.05, first_token_s=0.05))
    assert failed.value.error.kind == "timeout"
    assert "sent no token" in failed.value.error.message


def test_the_callers_cancellation_reaches_the_attempt_and_marks_it_cancelled() -> None:
    progress = CallProgress()
    started = asyncio.Event()

    async def send() -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    async def main() -> None:
        call = asyncio.ensure_future(_attempts(send, attempt_timeout_s=10.0, progress=progress))
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(main())
    assert progress.cancelled.is_set()
