"""Debug logging of model calls, redacted (models.md §3).

Everything goes to the `agentopt.models` logger; requests and responses at DEBUG (the CLI's
`--debug` turns that on), limiter events too. Every line passes through
`agentopt.core.redaction` with the provider's own credential values added, so a key held in an
env var with an unusual name is masked too. A body may be given as a function returning it, so
it is only built when DEBUG is on.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agentopt.core.redaction import redact, redact_data
from agentopt.models.limiter import LimiterEvent

log = logging.getLogger("agentopt.models")


def _dump(data: Any, secrets: list[str]) -> str:
    if callable(data):  # built only when the line is logged: a hot call skips the work
        data = data()
    return redact(json.dumps(redact_data(data, secrets), ensure_ascii=False, default=str), secrets)


def log_request(
    *, provider: str, model: str, pool: str, attempt: int, body: Any, secrets: list[str]
) -> None:
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "request %s:%s pool=%s attempt=%d body=%s",
            provider,
            model,
            pool,
            attempt,
            _dump(body, secrets),
        )


def log_response(
    *, provider: str, model: str, pool: str, latency_s: float, body: Any, secrets: list[str]
) -> None:
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "response %s:%s pool=%s latency=%.3fs body=%s",
            provider,
            model,
            pool,
            latency_s,
            _dump(body, secrets),
        )


def log_failure(
    *, provider: str, model: str, pool: str, attempt: int, error: Exception, secrets: list[str]
) -> None:
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "failure %s:%s pool=%s attempt=%d error=%s",
            provider,
            model,
            pool,
            attempt,
            redact(str(error), secrets),
        )


def log_limiter_event(event: LimiterEvent) -> None:
    if event.kind == "rate_limited":
        log.debug("pool %s rate limited (429), retry-after=%s", event.pool, event.retry_after)
    else:
        log.debug("pool %s %s: concurrency %d", event.pool, event.kind, event.limit)
