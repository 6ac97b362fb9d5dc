"""Streaming only where the stall rule can matter (issue 31, item "wall time ≤ GEPA's").

A self-hosted server's answer streams so the stall rule can cut one that stops producing
tokens; parsing the stream costs the client. Once this command has seen the server answer
whole well inside the stall window, a call is asked plainly, under the window a stream gets
before its first token. The fake server records whether each request asked to stream, so these
tests count what the client really sent; none of them asserts on elapsed time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentopt.core.errors import ModelCallError
from agentopt.models import CallLayer, CallSettings, ChatRequest, Message, deadlines
from agentopt.models.settings import ProviderConfig
from agentopt.models.types import ToolDef
from tests.fake_openai import FakeOpenAI, RecordedRequest, slow, text, tool_calls, trickle
from tests.models.helpers import fast_settings

LOOKUP = ToolDef(
    function={
        "name": "lookup",
        "description": "Find an order",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    }
)


def streamed(req: RecordedRequest) -> bool:
    return isinstance(req.body, dict) and req.body.get("stream") is True


def kinds(fake: FakeOpenAI) -> list[str]:
    """ "stream" or "plain" for every chat request the server received, in order."""
    return ["stream" if streamed(r) else "plain" for r in fake.chat_requests]


def calls(project: Path, settings: CallSettings, requests: list[ChatRequest]) -> list[Any]:
    """The requests one after the other on one layer: each answer, or the error it raised."""

    async def main() -> list[Any]:
        out: list[Any] = []
        async with CallLayer(project, settings) as layer:
            for request in requests:
                try:
                    out.append(await layer.complete("fake:m", request, pool="judge"))
                except ModelCallError as exc:
                    out.append(exc)
        return out

    return asyncio.run(main())


def ask(content: str, *, max_tokens: int | None = 16, tools: bool = False) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="user", content=content)],
        max_tokens=max_tokens,
        tools=[LOOKUP] if tools else None,
    )


def test_a_fast_server_is_asked_plainly_once_its_speed_is_known(
    fake: FakeOpenAI, project: Path
) -> None:
    """The first call streams (nothing measured yet); the next ones, a tool-calling one
    included, are asked plainly and read as before."""
    fake.queue(
        text("first answer", usage=(100, 20)),
        tool_calls([("lookup", {"id": "42"})], usage=(100, 20)),
        text("third answer", usage=(100, 20)),
    )
    out = calls(
        project,
        fast_settings(fake, cache_enabled=False),
        [ask("one"), ask("two", tools=True), ask("three")],
    )
    assert [getattr(r, "text", None) for r in out] == ["first answer", "", "third answer"]
    call = out[1].tool_calls[0].function
    assert call.name == "lookup" and call.parsed_arguments() == {"id": "42"}
    assert kinds(fake) == ["stream", "plain", "plain"]


def test_a_hosted_api_is_never_asked_to_stream(fake: FakeOpenAI, project: Path) -> None:
    """The rule only drops streams: a provider that never streamed sends what it always did."""
    fake.queue(*[text("hosted", usage=(100, 20))] * 2)
    provider = ProviderConfig(type="openai", base_url=fake.base_url, api_key_env="FAKE_KEY")
    settings = fast_settings(fake, cache_enabled=False, providers={"fake": provider})

    async def main() -> None:
        async with CallLayer(project, settings, environ={"FAKE_KEY": "k"}) as layer:
            for content in ("one", "two"):
                await layer.complete("fake:m", ask(content), pool="judge")

    asyncio.run(main())
    assert kinds(fake) == ["plain", "plain"]
    assert all("stream_options" not in (r.body or {}) for r in fake.chat_requests)


def test_a_slow_server_keeps_streaming_and_its_stall_is_cut_by_the_stall_rule(
    fake: FakeOpenAI, project: Path
) -> None:
    """20 words one every 50 ms: ~20 tokens/s, so 512 tokens would take far more than a
    quarter of the 1 s stall window. The next call streams, and when it stops after its first
    word the stall rule cuts it."""
    words = " ".join(f"w{i}" for i in range(20))
    fake.queue(trickle(words, 0.05), trickle("stuck answer", 0.0, stall=30))
    settings = fast_settings(fake, cache_enabled=False, stall_timeout_s=1.0, max_attempts=1)
    first, second = calls(project, settings, [ask("one", max_tokens=None)] * 2)
    assert getattr(first, "text", None) == words
    assert isinstance(second, ModelCallError) and second.kind == "timeout", second
    assert "sent no token for" in second.message  # the stall rule, not a plain attempt's limit
    assert kinds(fake) == ["stream", "stream"]


def test_a_server_that_hangs_on_a_plain_request_is_cut_at_the_first_token_window(
    fake: FakeOpenAI, project: Path
) -> None:
    """Asked plainly, the server says nothing: the attempt is cut at the window a silent
    stream would have had (the stall window here: the prompt is a few tokens), with an error
    that says what happened."""
    fake.queue(text("fast", usage=(100, 20)), slow(30, text("too late")))
    settings = fast_settings(fake, cache_enabled=False, stall_timeout_s=1.0, max_attempts=1)
    first, second = calls(project, settings, [ask("one"), ask("two")])
    assert getattr(first, "text", None) == "fast"
    assert isinstance(second, ModelCallError) and second.kind == "timeout", second
    assert "gave no answer within 1 s" in second.message, second.message
    assert "sent no token" not in second.message and "call deadline" not in second.message
    assert "asked without streaming" in (second.hint or "")
    assert kinds(fake) == ["stream", "plain"]


def test_after_a_cut_plain_attempt_the_retry_and_later_calls_stream(
    fake: FakeOpenAI, project: Path
) -> None:
    fake.queue(
        text("fast", usage=(100, 20)),
        slow(30, text("too late")),
        text("retried", usage=(100, 20)),
        text("later", usage=(100, 20)),
    )
    settings = fast_settings(fake, cache_enabled=False, stall_timeout_s=1.0)
    out = calls(project, settings, [ask("one"), ask("two"), ask("three")])
    assert [getattr(r, "text", None) for r in out] == ["fast", "retried", "later"]
    assert kinds(fake) == ["stream", "plain", "stream", "stream"]


def test_a_rerun_hits_the_cache_whichever_way_the_answer_was_asked(
    fake: FakeOpenAI, project: Path
) -> None:
    """The cache key is the request's, not the wire's: a call first asked plainly is found
    by a rerun that would stream it (a new command streams until it has measured)."""
    fake.queue(*[text(f"answer {i}", usage=(100, 20)) for i in range(2)])
    settings = fast_settings(fake)
    requests = [ask("one"), ask("two")]
    first = calls(project, settings, requests)
    assert kinds(fake) == ["stream", "plain"]
    again = calls(project, settings, requests)
    assert [r.text for r in again] == [r.text for r in first] == ["answer 0", "answer 1"]
    assert fake.count() == 2  # both from the cache


def test_the_plain_window_is_the_first_token_window_and_only_when_the_answer_fits(
    fake: FakeOpenAI,
) -> None:
    """`deadlines.windows` on its own: no measure, a slow measure, a deadline the user set or
    a hosted API all stream; a fast measure gets exactly the first token's window."""
    settings = fast_settings(fake, stall_timeout_s=60.0)
    request = ask("hello", max_tokens=100)
    speed = deadlines.ModelSpeed("compat", ("compat", fake.base_url, "m"), None)
    assert deadlines.windows("compat", settings, request, speed).plain_s is None
    speed.prove(1000, 5, 1.0)  # 5 tokens/s: 100 tokens take 20 s, more than a quarter of 60
    assert deadlines.windows("compat", settings, request, speed).plain_s is None
    fast = deadlines.ModelSpeed("compat", ("compat", fake.base_url, "m"), None)
    fast.prove(1000, 200, 1.0)
    limits = deadlines.windows("compat", settings, request, fast)
    assert limits.plain_s is not None and limits.plain_s == limits.first_token_s
    assert limits.first_token_s is not None and limits.first_token_s >= 60.0
    user = fast_settings(fake, stall_timeout_s=60.0, call_timeout_s=300.0)
    assert deadlines.windows("compat", user, request, fast).plain_s is None
    assert deadlines.windows("openai", settings, request, fast).plain_s is None
    fast.streams_only = True
    assert deadlines.windows("compat", settings, request, fast).plain_s is None
