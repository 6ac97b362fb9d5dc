"""One logical call = attempts under the pool's limiter, retried by policy, bounded by deadlines.

Each attempt takes a slot from the pool's `PoolLimiter` and gives it back before any back-off,
so a retry obeys a lowered limit and a `Retry-After` pause like every other request of the pool.
The per-call deadline runs from the first attempt and covers attempts and back-off (time
queued for the embedded model's one slot excluded: `call_progress`); the run deadline bounds
everything. Within it an attempt is cut in one of two ways, whichever applies:
- its answer streams (the provider ticks the call's `CallProgress`): when no token arrived for
  the stall window (the first token's window allows for reading the prompt) — a slow but
  progressing answer is never cut by the wall clock short of the deadline;
- it does not: after its own attempt timeout, retried like a dropped connection, instead of
  holding the call until its deadline;
- it was asked plainly because the server answers fast (`deadlines.plain_window`): after the
  window a stream would have had for its first token; the retry streams.
A failure that exhausts the attempts, or for which the deadline leaves no room, raises the
last classified `ModelCallError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from agentopt.core import alarms
from agentopt.core.errors import AgentoptError, ModelCallError
from agentopt.models.call_progress import CURRENT_PROGRESS, CallProgress
from agentopt.models.calllog import log_failure
from agentopt.models.classify import classify
from agentopt.models.limiter import PoolLimiter
from agentopt.models.retry import RetryPolicy

T = TypeVar("T")

BAD_GATEWAY_RETRIES = 1
"""A 200 that is not a chat completion is retried once (issue 38): one proxy hiccup must not
cost a task, and a server that always answers so is reported after two attempts."""


@dataclass
class Outcome(Generic[T]):
    """A successful call: its value, how many retries it took, and the last attempt's latency."""

    value: T
    retries: int
    latency_s: float


@dataclass
class CallTarget:
    """Who is called, for messages and redaction."""

    provider: str
    model: str
    pool: str
    base_url: str = ""
    secrets: tuple[str, ...] = ()


class AttemptFailed(Exception):
    """A call failed for good; carries the classified error and the retries made."""

    def __init__(self, error: ModelCallError, retries: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.retries = retries


@dataclass(frozen=True)
class Windows:
    """How long an attempt may go without an answer (None = no such limit)."""

    attempt_s: float | None = None
    """Wall time of an attempt until its tokens flow (the whole attempt, when it does not
    stream)."""
    stall_s: float | None = None
    """No token for this long, once tokens flow, cuts a streaming attempt."""
    first_token_s: float | None = None
    """The window before the first token of a streaming attempt (reading the prompt)."""


async def run_attempts(
    send: Callable[[], Awaitable[T]],
    *,
    target: CallTarget,
    limiter: PoolLimiter,
    policy: RetryPolicy,
    call_timeout_s: float,
    run_deadline: float | None,
    attempt_timeout_s: float | None = None,
    stall_s: float | None = None,
    first_token_s: float | None = None,
    progress: CallProgress | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Outcome[T]:
    """Send until success, a non-retryable error, the attempt limit, or a deadline.

    Raises:
        AttemptFailed: wrapping the final ModelCallError.
        AgentoptError: configuration or budget errors from the provider, unchanged.
    """
    progress = progress or CallProgress(clock=clock)
    windows = Windows(attempt_timeout_s, stall_s, first_token_s)
    deadline: float | None = None
    attempt = bad_gateways = 0
    while True:
        attempt += 1
        async with limiter.slot() as generation:
            now = clock()
            if deadline is None:
                deadline = now + call_timeout_s
            limit, by_run = _effective_deadline(deadline + progress.waiting_s(now), run_deadline)
            if limit - now <= 0:
                raise AttemptFailed(_deadline_error(target, by_run, call_timeout_s), attempt - 1)
            started = clock()
            try:
                value = await _watched(send, progress, windows, deadline, run_deadline, clock=clock)
            except _Cut as cut:
                error = _cut_error(target, cut, call_timeout_s)
            except ModelCallError as exc:
                error = exc
            except AgentoptError:
                raise
            except Exception as exc:
                error = classify(
                    exc,
                    provider=target.provider,
                    model=target.model,
                    base_url=target.base_url,
                    secrets=list(target.secrets),
                )
            else:
                await limiter.succeeded()
                latency = clock() - started
                return Outcome(value=value, retries=attempt - 1, latency_s=latency)
        if progress.plain:
            progress.plain_s = None  # a plain attempt failed: the retries stream
        log_failure(
            provider=target.provider,
            model=target.model,
            pool=target.pool,
            attempt=attempt,
            error=error,
            secrets=list(target.secrets),
        )
        if error.kind == "rate_limit":
            await limiter.rate_limited(error.retry_after, generation)
        if error.kind == "bad_gateway":
            bad_gateways += 1
        if (
            error.kind == "deadline"
            or not policy.should_retry(error, attempt)
            or bad_gateways > BAD_GATEWAY_RETRIES
        ):
            if error.retryable and error.kind != "deadline":
                error = _with_note(error, f"gave up after {attempt} attempts")
            raise AttemptFailed(error, attempt - 1)
        delay = policy.delay(error, attempt - 1)
        limit, by_run = _effective_deadline(deadline + progress.waiting_s(clock()), run_deadline)
        if clock() + delay >= limit:
            which = "run deadline (--timeout)" if by_run else f"{call_timeout_s:g} s call deadline"
            raise AttemptFailed(
                _with_note(error, f"the {which} leaves no time for attempt {attempt + 1}"),
                attempt - 1,
            )
        await sleep(delay)


class _Cut(Exception):
    """Why the watchdog abandoned an attempt: deadline | run_deadline | attempt | stall |
    plain (an attempt asked without streaming: `deadlines.plain_window`)."""

    def __init__(self, rule: str, seconds: float) -> None:
        super().__init__(rule)
        self.rule = rule
        self.seconds = seconds


async def _watched(
    send: Callable[[], Awaitable[T]],
    progress: CallProgress,
    windows: Windows,
    deadline: float,
    run_deadline: float | None,
    *,
    clock: Callable[[], float],
) -> T:
    """`send()` awaited in this task under a watchdog that cuts it (raising `_Cut`) when a
    rule says so.

    `send()` sees `progress` as the current call's (`CURRENT_PROGRESS`). The watchdog is a
    watch on the loop's one timer (`core.alarms`): asked when the nearest limit falls due, it
    checks again (a token may have moved it), and at a cut cancels this task. It was a task
    per attempt for `send()` and an `asyncio.wait` per wake, then a timer of its own per
    attempt."""
    progress.new_attempt()
    started, queued_before = clock(), progress.waiting_s(clock())

    def due() -> tuple[float, str, float]:
        """The nearest limit: seconds until it falls due, and the rule and window of the cut
        it makes (the `_Cut` is made only when one is: a call checks once or twice)."""
        now = clock()
        queued = progress.waiting_s(now)
        limit, by_run = _effective_deadline(deadline + queued, run_deadline)
        checks = [(limit - now, "run_deadline" if by_run else "deadline", 0.0)]
        if progress.queued_since is None:
            flowing = progress.streams and progress.tokens > 0
            if flowing and windows.stall_s is not None:
                window = windows.stall_s
                checks.append((progress.last + window - now, "stall", window))
            elif progress.streams and windows.first_token_s is not None:
                window = windows.first_token_s
                checks.append((progress.last + window - now, "stall", window))
            elapsed = now - started - (queued - queued_before)
            attempt_s = windows.attempt_s
            if not flowing and attempt_s is not None and attempt_s + 1e-3 < limit - started:
                checks.append((attempt_s - elapsed, "attempt", attempt_s))
            plain_s = progress.plain_s
            if progress.plain and plain_s is not None:
                checks.append((plain_s - elapsed, "plain", plain_s))
        return min(checks, key=lambda c: c[0])

    wait, rule, window = due()
    if wait <= 0:
        raise _Cut(rule, window)
    task = asyncio.current_task()
    assert task is not None
    fired: list[_Cut] = []
    # A stream may start, or stop, at any moment: it is looked at every so often.
    every = None if windows.stall_s is None else max(0.01, min(1.0, windows.stall_s / 8))

    def check() -> float | None:
        wait, rule, window = due()
        if wait > 0:
            return wait if every is None else min(wait, every)
        fired.append(_Cut(rule, window))
        progress.cancelled.set()
        task.cancel()
        return None

    watched = alarms.watch(check, wait if every is None else min(wait, every))
    token = CURRENT_PROGRESS.set(progress)
    try:
        value = await send()
    except BaseException as exc:
        cancelled = isinstance(exc, asyncio.CancelledError)
        if not fired:
            if cancelled:
                progress.cancelled.set()  # the caller's cancellation: the attempt ends with it
            raise
        if task.uncancel() > 0 and cancelled:
            raise  # the caller cancelled too
        raise fired[0] from None
    finally:
        alarms.unwatch(watched)
        CURRENT_PROGRESS.reset(token)
    if fired:  # the attempt swallowed the cut's cancellation and finished anyway
        task.uncancel()
        raise fired[0]
    return value


def _cut_error(target: CallTarget, cut: _Cut, call_timeout_s: float) -> ModelCallError:
    if cut.rule == "stall":
        return _target_error(
            target,
            f" sent no token for {cut.seconds:.0f} s",
            "timeout",
            retryable=True,
            hint="the model stopped making progress; raise options.stall_timeout_seconds "
            "if it is only slow",
        )
    if cut.rule == "plain":
        return _target_error(
            target,
            f" gave no answer within {cut.seconds:.0f} s",
            "timeout",
            retryable=True,
            hint="its answers had come fast, so it was asked without streaming and given the "
            "stall window; it is asked streaming from now on, so a slow answer is not cut "
            "while its tokens flow",
        )
    if cut.rule == "attempt":
        return _attempt_timeout_error(target, cut.seconds)
    return _deadline_error(target, cut.rule == "run_deadline", call_timeout_s)


def _effective_deadline(call_deadline: float, run_deadline: float | None) -> tuple[float, bool]:
    if run_deadline is not None and run_deadline < call_deadline:
        return run_deadline, True
    return call_deadline, False


def _deadline_error(target: CallTarget, by_run: bool, call_timeout_s: float) -> ModelCallError:
    if by_run:
        return _target_error(
            target,
            ": the run deadline (--timeout) was reached",
            "deadline",
            hint="raise --timeout, or resume the run (finished calls are cached)",
        )
    return _target_error(
        target,
        f" gave no answer within the {call_timeout_s:g} s call deadline",
        "deadline",
        hint=(
            "the embedded model is slow on this machine; raise --call-timeout or "
            "options.call_timeout_seconds"
            if target.provider == "local"
            else "the server is slow or overloaded; raise --call-timeout or "
            "options.call_timeout_seconds, retry later or use a faster model"
        ),
    )


def _attempt_timeout_error(target: CallTarget, seconds: float) -> ModelCallError:
    return _target_error(
        target,
        f" gave no answer within the {seconds:g} s attempt timeout",
        "timeout",
        retryable=True,
        hint="the server is slow or a connection hung; for a slow model set --call-timeout or "
        "options.call_timeout_seconds (an attempt may then take all of it), or raise "
        "options.attempt_timeout_seconds",
    )


def _target_error(
    target: CallTarget, says: str, kind: str, *, hint: str, retryable: bool = False
) -> ModelCallError:
    """A call to `target` that was cut: "<provider> model '<model>'" and what it `says`."""
    return ModelCallError(
        f"{target.provider} model '{target.model}'{says}",
        kind=kind,
        provider=target.provider,
        model=target.model,
        retryable=retryable,
        hint=hint,
    )


def _with_note(error: ModelCallError, note: str) -> ModelCallError:
    return ModelCallError(
        f"{error.message} ({note})",
        kind=error.kind,
        provider=error.provider,
        model=error.model,
        retryable=error.retryable,
        status_code=error.status_code,
        retry_after=error.retry_after,
        hint=error.hint,
    )
