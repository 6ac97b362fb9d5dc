"""Cost accounting, budgets and dry-run estimates (models.md §3)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agentopt.core.errors import BudgetExceeded
from agentopt.models import (
    CallLayer,
    CallSettings,
    ChatRequest,
    Message,
    Price,
    PriceTable,
    Usage,
    estimate,
)
from tests.fake_openai import FakeOpenAI, text
from tests.models.helpers import fast_settings


def ask(content: str = "hello") -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=content)])


def run_calls(project: Path, settings: CallSettings, calls: list[tuple[str, str, str]]) -> Any:
    """[(model, content, pool)] one after another → (responses, stats)."""

    async def main() -> Any:
        async with CallLayer(project, settings) as layer:
            out = [await layer.complete(m, ask(c), pool=p) for m, c, p in calls]  # type: ignore[arg-type]
            return out, layer.stats()

    return asyncio.run(main())


def test_tokens_times_list_price_per_pool_and_total(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An Azure deployment (the fake stands in for the vendor's endpoint): list prices apply.
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-000000")
    fake.queue(text("a", usage=(1000, 500)), text("b", usage=(2000, 0)))
    (r1, r2), stats = run_calls(
        project,
        fast_settings(),
        [("azure:gpt-4.1-mini", "x", "agent"), ("azure:gpt-4.1-mini", "y", "judge")],
    )
    assert r1.cost_usd == pytest.approx(1000 * 0.4 / 1e6 + 500 * 1.6 / 1e6)
    assert r2.cost_usd == pytest.approx(2000 * 0.4 / 1e6)
    assert stats.pools["agent"].cost_usd == pytest.approx(r1.cost_usd)
    assert stats.pools["judge"].input_tokens == 2000
    assert stats.total.cost_usd == pytest.approx(r1.cost_usd + r2.cost_usd)
    assert stats.total.calls == 2 and stats.unpriced_models == []


def test_served_snapshot_name_prices_an_azure_deployment(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-000000")
    fake.queue(text("ok", usage=(1_000_000, 0), model="gpt-4o-2024-08-06"))
    (resp,), _ = run_calls(project, fast_settings(), [("azure:prod-chat", "x", "agent")])
    assert resp.cost_usd == pytest.approx(2.5)


def test_a_server_of_ones_own_is_not_billed_at_the_vendors_price(
    openai_env: FakeOpenAI, fake: FakeOpenAI, project: Path
) -> None:
    """OPENAI_BASE_URL on loopback, or a compat server, serving a model named like OpenAI's:
    free unless options.prices names it, never listed as unpriced, shown with its server."""
    openai_env.queue(*(text("a", usage=(1_000_000, 0)) for _ in range(4)))

    async def main(settings: CallSettings) -> tuple[list[Any], Any, list[str]]:
        async with CallLayer(project, settings) as layer:
            out = [
                await layer.complete(m, ask(m), pool="agent")
                for m in ("gpt-4.1-mini", f"compat:gpt-4.1-mini@{fake.base_url}")
            ]
            names = [layer.identity("gpt-4.1-mini"), layer.identity(f"compat:x@{fake.base_url}")]
            return out, layer.stats(), names

    (bare, compat), stats, names = asyncio.run(main(fast_settings(cache_enabled=False)))
    assert bare.cost_usd == 0 and compat.cost_usd == 0 and stats.unpriced_models == []
    assert names == [f"openai:gpt-4.1-mini@{fake.base_url}", f"compat:x@{fake.base_url}"]
    priced = fast_settings(cache_enabled=False, prices={"gpt-4.1-mini": Price(input=2, output=0)})
    (bare, compat), _, _ = asyncio.run(main(priced))
    assert bare.cost_usd == pytest.approx(2.0) and compat.cost_usd == pytest.approx(2.0)


def test_unknown_models_cost_zero_and_are_listed(
    fake: FakeOpenAI, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake.url)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-000000")
    fake.queue(text("a", usage=(1_000_000, 1_000_000)), text("b", usage=(1_000_000, 0)))
    settings = fast_settings(prices={"house-model": Price(input=1.0, output=3.0)})
    (priced, unpriced), stats = run_calls(
        project,
        settings,
        [("azure:house-model", "x", "agent"), ("azure:mystery-1", "y", "agent")],
    )
    assert priced.cost_usd == pytest.approx(4.0)
    assert unpriced.cost_usd == 0.0
    assert stats.unpriced_models == ["azure:mystery-1"]


def test_local_and_mock_models_are_free(project: Path) -> None:
    (resp,), stats = run_calls(project, fast_settings(), [("mock:echo", "x" * 4000, "agent")])
    assert resp.usage.input_tokens > 0 and resp.cost_usd == 0 and stats.unpriced_models == []


def test_max_cost_stops_new_calls_and_lets_in_flight_ones_finish(project: Path) -> None:
    # Each answer costs 1000 input tokens × $10/M = $0.01; the budget is $0.025.
    with FakeOpenAI(usage=(1000, 0), latency=0.05) as srv:
        settings = fast_settings(
            srv, max_cost_usd=0.025, prices={"m": Price(input=10.0, output=0.0)}
        )

        async def main() -> Any:
            async with CallLayer(project, settings) as layer:
                first = await asyncio.gather(
                    *(layer.complete("fake:m", ask(f"q{i}")) for i in range(4))
                )
                with pytest.raises(BudgetExceeded) as info:
                    await layer.complete("fake:m", ask("one more"))
                cached = await layer.complete("fake:m", ask("q0"))  # costs nothing: allowed
                return first, str(info.value), cached, layer.stats()

        first, message, cached, stats = asyncio.run(main())
        assert [r.text for r in first] == ["q0", "q1", "q2", "q3"]  # all four were in flight
        assert srv.count() == 4
        assert "cost budget reached" in message and "$0.0400" in message
        assert cached.cached
        assert stats.total.cost_usd == pytest.approx(0.04)


def test_max_calls_budget(fake: FakeOpenAI, project: Path) -> None:
    async def main() -> str:
        async with CallLayer(project, fast_settings(fake, max_calls=2)) as layer:
            await layer.complete("fake:m", ask("a"))
            await layer.complete("fake:m", ask("b"))
            with pytest.raises(BudgetExceeded) as info:
                await layer.complete("fake:m", ask("c"))
            return str(info.value)

    assert "2 model calls made of 2 allowed" in asyncio.run(main())
    assert fake.count() == 2


def test_estimate_from_averages_and_from_requests() -> None:
    est = estimate("gpt-4.1-mini", (100, 1000, 200))
    assert est == {
        "calls": 100,
        "input_tokens": 100_000,
        "output_tokens": 20_000,
        "cost_usd": pytest.approx(0.1 * 0.4 + 0.02 * 1.6),
        "priced": True,
    }
    requests = [
        ChatRequest(messages=[Message(role="user", content="x" * 400)], max_tokens=50),
        ChatRequest(messages=[Message(role="user", content="y" * 800)]),
    ]
    est = estimate("azure:gpt-4.1", requests, avg_output_tokens=100)
    assert est["calls"] == 2
    assert 300 <= est["input_tokens"] <= 330  # chars/4 plus a little per-message overhead
    assert est["output_tokens"] == 150
    assert est["priced"] and est["cost_usd"] > 0
    assert estimate("local:smollm2-135m", (10, 100, 100))["cost_usd"] == 0.0
    assert estimate("ollama:llama3.2", (10, 100, 100))["priced"] is True
    assert estimate("mystery-model", (10, 100, 100))["priced"] is False


def test_layer_estimate_follows_resolution(project: Path) -> None:
    layer = CallLayer(project, fast_settings(cache_enabled=False), on_notice=lambda _: None)
    assert layer.estimate("gpt-4.1-mini", (10, 1000, 100))["cost_usd"] == 0.0  # falls back to local


def test_price_table_lookup() -> None:
    table = PriceTable({"GPT-4.1": Price(input=9.0, output=9.0)})
    assert table.lookup("gpt-4.1") == Price(input=9.0, output=9.0)  # override, case-insensitive
    assert table.lookup("gpt-4.1-mini-2025-04-14") == Price(input=0.4, output=1.6)
    assert table.lookup("gpt-4-0613") is None
    assert table.lookup("gpt-4.1-mini-custom") is None  # no guessing from a prefix
    assert table.cost(["my-deployment", "gpt-4o-mini"], Usage(input_tokens=1_000_000)) == 0.15
