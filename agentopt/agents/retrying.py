"""Retries for requests to remote agents (hosted, endpoint, foundry) on transient failures.

Model calls are retried inside the call layer; remote agents are not model calls, so their
targets use the call layer's own classification (`agentopt.models.classify`) and back-off
policy (`agentopt.models.retry.RetryPolicy`) here: 429 (honouring `Retry-After`), 5xx,
timeouts and connection errors are retried with exponential backoff and full jitter; any
other failure is final at once. The original exception is re-raised, so the turn error keeps
the server's own words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agentopt.models.classify import classify
from agentopt.models.retry import RetryPolicy

T = TypeVar("T")

DEFAULT_ATTEMPTS = 3


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    base_delay_s: float = 0.5,
    max_delay_s: float = 8.0,
    target: str = "agent",
) -> T:
    """Await `call()`, retrying transient failures up to `attempts` times in all."""
    policy = RetryPolicy(max_attempts=attempts, base_s=base_delay_s, cap_s=max_delay_s)
    made = 0
    while True:
        try:
            return await call()
        except Exception as exc:
            made += 1
            error = classify(exc, provider=target, model="")
            if not policy.should_retry(error, made):
                raise
            await asyncio.sleep(min(policy.delay(error, made - 1), max_delay_s))
