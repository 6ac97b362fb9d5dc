"""Call-layer overhead: the same sequential chat calls through a bare `openai` client and
through `CallLayer.complete` (limiter, retry wrapper, cost, logging; cache off), against the
zero-latency fake server; plus the latency of a cache hit."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from agentopt.models.call import CallLayer
from agentopt.models.settings import CallSettings
from agentopt.models.types import ChatRequest, Message
from tests.fake_openai import FakeOpenAI

CALLS = 300


def _request(i: int) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"question {i}")], temperature=0)


async def _bare(base_url: str, n: int) -> list[float]:
    client = AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        await client.chat.completions.create(
            model="fake", messages=[{"role": "user", "content": f"question {i}"}], temperature=0
        )
        times.append(time.perf_counter() - t0)
    await client.close()
    return times


async def _layer(project: Path, base_url: str, n: int, *, cache: bool) -> list[float]:
    layer = CallLayer(project, CallSettings(cache_enabled=cache))
    model = f"compat:fake@{base_url}"
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        await layer.complete(model, _request(i))
        times.append(time.perf_counter() - t0)
    await layer.aclose()
    return times


def run(calls: int = CALLS) -> list[dict[str, Any]]:
    """Median per-call latency of each path, and the ratio layer / bare."""
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(schemas="any") as srv:
        project = Path(tmp)
        asyncio.run(_bare(srv.base_url, 20))  # warm-up: imports, connection pool
        bare = asyncio.run(_bare(srv.base_url, calls))
        layer = asyncio.run(_layer(project, srv.base_url, calls, cache=False))
        asyncio.run(_layer(project, srv.base_url, calls, cache=True))  # fill the cache
        before = srv.count()
        hits = asyncio.run(_layer(project, srv.base_url, calls, cache=True))
        assert srv.count() == before, "cache hits must not reach the server"
    b, lay, hit = (statistics.median(x) * 1000 for x in (bare, layer, hits))
    return [
        {
            "bench": "call_layer",
            "case": f"{calls} sequential calls, zero latency",
            "value": f"{lay / b:.2f}× bare openai",
            "detail": f"median {lay:.2f} ms via CallLayer vs {b:.2f} ms bare; "
            f"+{lay - b:.2f} ms/call",
        },
        {
            "bench": "call_layer",
            "case": "cache hit",
            "value": f"{hit:.3f} ms",
            "detail": f"{b / hit:.0f}× faster than a bare call to a zero-latency server",
        },
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
