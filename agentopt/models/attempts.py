"""One logical call = attempts under the pool's limiter, retried by policy, bounded by deadlines.

Each attempt takes a slot from the pool's `PoolLimiter` and gives it back before any back-off,
so a retry obeys a lowered limit and a `Retry-After` pause like every other request of the pool.
The per-call deadline runs from the first attempt and covers attempts and back-off; the run
deadline bounds everything. Each attempt also has its own, shorter timeout: an attempt that
hangs past it is a `timeout` failure, retried like a dropped connection, instead of holding the
call until its deadline. A failure that exhausts the attempts, or for which the deadline
leaves no room, raises the last classified `ModelCallError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from agentopt.core.errors import AgentoptError, ModelCallError
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


async def run_attempts(
    send: Callable[[], Awaitable[T]],
    *,
    target: CallTarget,
    limiter: PoolLimiter,
    policy: RetryPolicy,
    call_timeout_s: float,
    run_deadline: float | None,
    attempt_timeout_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Outcome[T]:
    """Send until success, a non-retryable error, the attempt limit, or a deadline.

    Raises:
        AttemptFailed: wrapping the final ModelCallError.
        AgentoptError: configuration or budget errors from the provider, unchanged.
    """
    deadline: float | None = None
    attempt = bad_gateways = 0
    while True:
        attempt += 1
        async with limiter.slot() as generation:
            now = clock()
            if deadline is None:
                deadline = now + call_timeout_s
            limit, by_run = _effective_deadline(deadline, run_deadline)
            remaining = limit - now
            if remaining <= 0:
                raise AttemptFailed(_deadline_error(target, by_run, call_timeout_s), attempt - 1)
            # The attempt's own timeout applies when it ends before the deadline does (with a
            # margin, so an attempt timeout equal to the deadline stays a deadline error).
            per_attempt = attempt_timeout_s is not None and attempt_timeout_s + 1e-3 < remaining
            started = clock()
            try:
                async with asyncio.timeout(attempt_timeout_s if per_attempt else remaining):
                    value = await send()
            except TimeoutError:
                if per_attempt:
                    error = _attempt_timeout_error(target, attempt_timeout_s or 0.0)
                else:
                    error = _deadline_error(target, by_run, call_timeout_s)
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
                return Outcome(value=value, retries=attempt - 1, latency_s=clock() - started)
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
        limit, by_run = _effective_deadline(deadline, run_deadline)
        if clock() + delay >= limit:
            which = "run deadline (--timeout)" if by_run else f"{call_timeout_s:g} s call deadline"
            raise AttemptFailed(
                _with_note(error, f"the {which} leaves no time for attempt {attempt + 1}"),
                attempt - 1,
            )
        await sleep(delay)


def _effective_deadline(call_deadline: float, run_deadline: float | None) -> tuple[float, bool]:
    if run_deadline is not None and run_deadline < call_deadline:
        return run_deadline, True
    return call_deadline, False


def _deadline_error(target: CallTarget, by_run: bool, call_timeout_s: float) -> ModelCallError:
    if by_run:
        return ModelCallError(
            f"{target.provider} model '{target.model}': the run deadline (--timeout) was reached",
            kind="deadline",
            provider=target.provider,
            model=target.model,
            hint="raise --timeout, or resume the run (finished calls are cached)",
        )
    return ModelCallError(
        f"{target.provider} model '{target.model}' gave no answer within the "
        f"{call_timeout_s:g} s call deadline",
        kind="deadline",
        provider=target.provider,
        model=target.model,
        hint="the server is slow or overloaded; retry later or use a faster model",
    )


def _attempt_timeout_error(target: CallTarget, seconds: float) -> ModelCallError:
    return ModelCallError(
        f"{target.provider} model '{target.model}' gave no answer within the {seconds:g} s "
        "attempt timeout",
        kind="timeout",
        provider=target.provider,
        model=target.model,
        retryable=True,
        hint="the server is slow or a connection hung; raise options.attempt_timeout_seconds "
        "for slow models",
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
