"""Failure classification and retries against the local server (models.md §3)."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from agentopt.core.errors import ModelCallError
from agentopt.models import (
    CallLayer,
    CallSettings,
    ChatRequest,
    Message,
    RetryPolicy,
    parse_retry_after,
)
from tests.fake_openai import FakeOpenAI, error, rate_limited, slow, text
from tests.models.helpers import fast_settings

REQUEST = ChatRequest(messages=[Message(role="user", content="ping")])


def run(project: Path, model: str, settings: CallSettings) -> tuple[Any, Any]:
    """(response or ModelCallError, stats) of one call."""

    async def main() -> tuple[Any, Any]:
        async with CallLayer(project, settings) as layer:
            try:
                result: Any = await layer.complete(model, REQUEST, pool="judge")
            except ModelCallError as exc:
                result = exc
            return result, layer.stats()

    return asyncio.run(main())


def gaps(srv: FakeOpenAI) -> list[float]:
    times = [r.at for r in srv.chat_requests]
    return [b - a for a, b in itertools.pairwise(times)]


def test_429_retry_after_is_honoured(fake: FakeOpenAI, project: Path) -> None:
    fake.queue(rate_limited(retry_after=0.2), text("ok"))
    resp, stats = run(project, "fake:gpt-4.1-mini", fast_settings(fake, cache_enabled=False))
    assert resp.text == "ok"
    assert fake.count() == 2
    assert gaps(fake)[0] >= 0.2
    assert stats.pools["judge"].retries == 1
    assert stats.rate_limits == {"judge": "rate limited 1×, concurrency 16 → 8"}


def test_retry_after_ms_is_honoured(fake: FakeOpenAI, project: Path) -> None:
    fake.queue(rate_limited(retry_after_ms=150), text("ok"))
    resp, _ = run(project, "fake:m", fast_settings(fake, cache_enabled=False))
    assert resp.text == "ok" and gaps(fake)[0] >= 0.15


def test_server_errors_are_retried_then_succeed(fake: FakeOpenAI, project: Path) -> None:
    fake.queue(error(500, "boom", type_="server_error"), error(503, "busy"), text("finally"))
    resp, stats = run(project, "fake:m", fast_settings(fake, cache_enabled=False))
    assert resp.text == "finally" and fake.count() == 3
    assert stats.pools["judge"].retries == 2 and stats.pools["judge"].errors == 0


def test_retries_give_up_after_max_attempts(fake: FakeOpenAI, project: Path) -> None:
    fake.queue(*[error(500, "boom")] * 5)
    err, stats = run(project, "fake:m", fast_settings(fake, cache_enabled=False, max_attempts=3))
    assert isinstance(err, ModelCallError)
    assert (err.kind, err.retryable, err.status_code) == ("server", True, 500)
    assert "gave up after 3 attempts" in err.message
    assert fake.count() == 3
    assert stats.pools["judge"].errors == 1 and stats.pools["judge"].retries == 2


@pytest.mark.parametrize(
    ("reply", "kind", "cause"),
    [
        (error(401, "Incorrect API key provided", code="invalid_api_key"), "auth", "HTTP 401"),
        (error(403, "forbidden"), "auth", "HTTP 403"),
        (
            error(404, "The model `nope` does not exist", code="model_not_found"),
            "not_found",
            "HTTP 404",
        ),
        (error(400, "bad param", code="invalid_value"), "bad_request", "HTTP 400"),
        (
            error(
                400,
                "This model's maximum context length is 128000 tokens",
                code="context_length_exceeded",
            ),
            "context_length",
            "context_length_exceeded",
        ),
        (
            error(
                400,
                "The response was filtered due to the prompt triggering Azure OpenAI's "
                "content management policy",
                code="content_filter",
            ),
            "content_filter",
            "content_filter",
        ),
        (
            error(
                429,
                "You exceeded your current quota",
                code="insufficient_quota",
                type_="insufficient_quota",
            ),
            "quota",
            "insufficient_quota",
        ),
    ],
)
def test_permanent_failures_are_not_retried(
    fake: FakeOpenAI, project: Path, reply: Any, kind: str, cause: str
) -> None:
    fake.queue(reply)
    err, _ = run(project, "fake:gpt-x", fast_settings(fake, cache_enabled=False))
    assert isinstance(err, ModelCallError)
    assert err.kind == kind and not err.retryable
    assert fake.count() == 1
    assert err.provider == "fake" and err.model == "gpt-x"
    assert "fake model 'gpt-x'" in err.message and cause in err.message


def test_auth_error_hint_names_the_key_variable(openai_env: FakeOpenAI, project: Path) -> None:
    openai_env.queue(error(401, "Incorrect API key provided", code="invalid_api_key"))
    err, _ = run(project, "openai:gpt-4.1", fast_settings(cache_enabled=False))
    assert err.kind == "auth" and "OPENAI_API_KEY" in str(err)


def test_slow_server_hits_the_call_deadline(fake: FakeOpenAI, project: Path) -> None:
    # The server would take 6 s; the 0.3 s deadline ends the call (a `deadline` error: the
    # server's answer never arrived), and not before it was reached.
    fake.queue(slow(6.0))
    started = time.monotonic()
    err, _ = run(project, "fake:m", fast_settings(fake, cache_enabled=False, call_timeout_s=0.3))
    assert isinstance(err, ModelCallError) and err.kind == "deadline"
    assert "0.3 s call deadline" in err.message
    assert time.monotonic() - started >= 0.3


def test_run_deadline_bounds_every_call(fake: FakeOpenAI, project: Path) -> None:
    fake.queue(slow(1.0))
    settings = fast_settings(fake, cache_enabled=False, run_deadline_s=0.25)
    err, _ = run(project, "fake:m", settings)
    assert err.kind == "deadline" and "--timeout" in err.message


def test_retry_after_beyond_the_deadline_fails_fast(fake: FakeOpenAI, project: Path) -> None:
    fake.queue(rate_limited(retry_after=30))
    started = time.monotonic()
    err, _ = run(project, "fake:m", fast_settings(fake, cache_enabled=False, call_timeout_s=2))
    assert err.kind == "rate_limit" and "leaves no time for attempt 2" in err.message
    assert time.monotonic() - started < 10.0  # it did not sleep the 30 s Retry-After
    assert fake.count() == 1


def test_connection_errors_are_retried(project: Path) -> None:
    with FakeOpenAI() as srv:
        dead_url = srv.base_url  # a port that nothing listens on once the server stops
    settings = fast_settings(cache_enabled=False, max_attempts=3)
    err, stats = run(project, f"compat:m@{dead_url}", settings)
    assert err.kind == "connection" and "could not connect" in err.message
    assert "gave up after 3 attempts" in err.message
    assert stats.pools["judge"].retries == 2


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    now = time.time()
    date = formatdate(now + 30, usegmt=True)
    assert 28 <= (parse_retry_after({"Retry-After": date}, now=now) or 0) <= 31
    assert parse_retry_after({"Retry-After": formatdate(now - 60, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_full_jitter_backoff_stays_within_its_ceiling() -> None:
    policy = RetryPolicy(base_s=1.0, cap_s=60.0, rng=random.Random(1))
    for n in range(12):
        ceiling = min(60.0, 2.0**n)
        waits = [policy.backoff(n) for _ in range(200)]
        assert all(0.0 <= w <= ceiling for w in waits)
        assert max(waits) > ceiling * 0.8  # jitter spreads over the whole range
    err = ModelCallError("x", kind="rate_limit", retryable=True, retry_after=7.5)
    assert policy.delay(err, 0) == 7.5
