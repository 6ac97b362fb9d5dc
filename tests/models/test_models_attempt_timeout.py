"""A hung attempt is retried (issue 14 item 3): each attempt has its own timeout, well below the
call deadline, so one stuck connection costs one attempt, not the whole call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentopt.core.errors import ModelCallError
from agentopt.models import CallLayer, CallSettings, ChatRequest, Message
from tests.fake_openai import FakeOpenAI, slow, text
from tests.models.helpers import fast_settings


def ask(project: Path, settings: CallSettings, n: int = 1) -> tuple[list[object], object]:
    """`n` concurrent calls, after one warm-up call (the SDK client is built lazily on the
    first call, and its import must not count against a sub-second attempt timeout)."""

    async def main() -> tuple[list[object], object]:
        async with CallLayer(project, settings) as layer:
            warm = ChatRequest(messages=[Message(role="user", content="warm-up")])
            await layer.complete("fake:m", warm, pool="agent")

            async def one(i: int) -> object:
                request = ChatRequest(messages=[Message(role="user", content=f"q{i}")])
                try:
                    return await layer.complete("fake:m", request, pool="judge")
                except ModelCallError as exc:
                    return exc

            results = await asyncio.gather(*(one(i) for i in range(n)))
            return list(results), layer.stats()

    return asyncio.run(main())


def test_a_hung_attempt_is_retried_within_the_call_deadline(fake: FakeOpenAI, project: Path):
    fake.queue(text("warm"), slow(5.0), text("ok"))
    settings = fast_settings(fake, cache_enabled=False, call_timeout_s=10, attempt_timeout_s=0.5)
    (resp,), stats = ask(project, settings)
    # The hung attempt was cut and retried: had it been waited out, its own answer would have
    # come back after 5 s from 2 requests.
    assert getattr(resp, "text", None) == "ok", resp
    assert fake.count() == 3
    assert stats.pools["judge"].retries == 1  # type: ignore[attr-defined]


def test_several_hung_connections_do_not_become_errors(fake: FakeOpenAI, project: Path):
    """The issue's case in small: 12 requests, 3 of them hang; all 12 get their answer."""
    fake.queue(text("warm"), slow(5.0), slow(5.0), slow(5.0))
    settings = fast_settings(fake, cache_enabled=False, call_timeout_s=10, attempt_timeout_s=0.5)
    results, stats = ask(project, settings, n=12)
    assert [type(r).__name__ for r in results] == ["ChatResponse"] * 12
    assert stats.pools["judge"].errors == 0  # type: ignore[attr-defined]
    assert fake.count() == 16


def test_every_attempt_hanging_ends_in_a_timeout_error_naming_the_attempts(
    fake: FakeOpenAI, project: Path
):
    fake.queue(text("warm"), *[slow(5.0)] * 3)
    settings = fast_settings(
        fake, cache_enabled=False, call_timeout_s=10, attempt_timeout_s=0.3, max_attempts=3
    )
    (err,), _ = ask(project, settings)
    assert isinstance(err, ModelCallError) and err.kind == "timeout"
    assert "0.3 s attempt timeout" in err.message and "gave up after 3 attempts" in err.message


def test_default_attempt_timeout_is_the_deadline_shared_by_the_attempts():
    assert CallSettings().attempt_timeout() == 20.0  # 120 s / 6 attempts
    assert CallSettings(max_attempts=20).attempt_timeout() == 10.0  # never below 10 s
    assert CallSettings(call_timeout_s=5).attempt_timeout() == 5.0  # never above the deadline
    assert CallSettings(attempt_timeout_s=45).attempt_timeout() == 45.0
