"""Retries for requests to remote agents (hosted, endpoint, foundry) on transient failures.

Model calls are retried by the call layer; agent targets that speak HTTP themselves get the
same policy in small (agents.md §6, models.md §3): 429 (honouring `Retry-After`), 5xx,
timeouts and connection errors are retried with exponential backoff and full jitter; any
other failure is final at once.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_ATTEMPTS = 3
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    base_delay_s: float = 0.5,
    max_delay_s: float = 8.0,
) -> T:
    """Await `call()`, retrying transient failures up to `attempts` times in all."""
    attempt = 1
    while True:
        try:
            return await call()
        except Exception as exc:
            if attempt >= attempts or not is_transient(exc):
                raise
            delay = retry_after_s(exc)
            if delay is None:
                delay = random.uniform(0, min(max_delay_s, base_delay_s * 2 ** (attempt - 1)))
            await asyncio.sleep(min(delay, max_delay_s))
            attempt += 1


def is_transient(exc: BaseException) -> bool:
    """True for failures worth another try: throttling, server errors, network trouble."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUS
    return isinstance(exc, ConnectionError)


def retry_after_s(exc: BaseException) -> float | None:
    """The server's requested wait (`retry-after-ms` or `Retry-After` seconds), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None
