"""Tokens × price: the shipped price table, per-pool and per-run totals, budgets, dry-run estimates.

Prices are USD per 1M tokens from `prices.json` (list prices, dated in the file), overridden by
eval.yaml `options.prices`. Models served by local:, mock: and ollama: cost nothing. A model the
table does not know costs 0 and is listed in `Ledger.unpriced`, so a report can say the total is
a lower bound instead of pretending.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from typing import TypedDict

from pydantic import ConfigDict

from agentopt.contracts.usage import Usage
from agentopt.core.errors import BudgetExceeded
from agentopt.core.lazy_model import LazyModel
from agentopt.models.providers.registry import is_free, is_provider_type
from agentopt.models.settings import Price
from agentopt.models.types import ChatRequest

DEFAULT_OUTPUT_TOKENS = 256
# Dated snapshots use their family's price: gpt-4.1-mini-2025-04-14, gpt-4-0613, o1-20241217.
_SNAPSHOT_RE = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")


@lru_cache(maxsize=1)
def shipped_prices() -> dict[str, Price]:
    """The price table shipped with agentopt (`agentopt/models/prices.json`)."""
    text = resources.files("agentopt.models").joinpath("prices.json").read_text(encoding="utf-8")
    return {k.lower(): Price(**v) for k, v in json.loads(text)["models"].items()}


FOUND_MAX = 1024
"""Model names whose price (or its absence) a `PriceTable` remembers."""


class PriceTable:
    """Shipped prices plus overrides; lookups are case-insensitive.

    `shipped=False` keeps the overrides only: a model served by the user's own server (a
    compat/ollama/vllm server, or any provider pointed at loopback) is not billed at the vendor's
    list price just because it carries the vendor's model name.
    """

    def __init__(
        self, overrides: Mapping[str, Price] | None = None, *, shipped: bool = True
    ) -> None:
        self._prices = dict(shipped_prices()) if shipped else {}
        for name, price in (overrides or {}).items():
            self._prices[name.lower()] = price if isinstance(price, Price) else Price(**price)
        self._found: dict[str, Price | None] = {}
        """Each model name asked for, as found (every call asks for its model's price)."""

    def lookup(self, model: str) -> Price | None:
        """The price of `model`, of its snapshot family, or None when unknown."""
        try:
            return self._found[model]
        except KeyError:
            pass
        name = model.lower().rsplit("/", 1)[-1]
        found = self._prices.get(name)
        if found is None and name not in self._prices:
            found = self._prices.get(_SNAPSHOT_RE.sub("", name))
        if len(self._found) < FOUND_MAX:
            self._found[model] = found
        return found

    def cost(self, models: Iterable[str], usage: Usage) -> float | None:
        """Cost of `usage` priced as the first of `models` the table knows (None: unknown)."""
        for model in models:
            price = self.lookup(model) if model else None
            if price is not None:
                return (usage.input_tokens * price.input + usage.output_tokens * price.output) / 1e6
        return None


class Totals(LazyModel):
    """Accounting of one pool, or of the whole run."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    """Provider calls that returned an answer (cache hits excluded)."""
    cache_hits: int = 0
    errors: int = 0
    """Calls that failed for good."""
    retries: int = 0
    """Extra attempts after retryable failures."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class Ledger:
    """Per-pool and per-run totals, and the `--max-cost` / `--budget-calls` gates."""

    def __init__(self, *, max_cost_usd: float | None = None, max_calls: int | None = None) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_calls = max_calls
        self.pools: dict[str, Totals] = {}
        self.started = 0
        self.unpriced: set[str] = set()

    def pool(self, name: str) -> Totals:
        found = self.pools.get(name)
        if found is None:  # not `setdefault`: that builds a Totals on every call
            found = self.pools[name] = Totals()
        return found

    @property
    def total(self) -> Totals:
        out = Totals()
        for t in self.pools.values():
            for field in Totals.model_fields:
                setattr(out, field, getattr(out, field) + getattr(t, field))
        return out

    @property
    def spent_usd(self) -> float:
        return sum(t.cost_usd for t in self.pools.values())

    def start_call(self) -> None:
        """Admit one new provider call, or raise BudgetExceeded (in-flight calls go on)."""
        spent = self.spent_usd
        if self.max_cost_usd is not None and spent >= self.max_cost_usd:
            raise BudgetExceeded(
                f"cost budget reached: ${spent:.4f} spent of --max-cost ${self.max_cost_usd:.4f}; "
                "no new model calls were started",
                hint="raise --max-cost, or resume the run later (cached answers cost nothing)",
            )
        if self.max_calls is not None and self.started >= self.max_calls:
            raise BudgetExceeded(
                f"call budget reached: {self.started} model calls made of {self.max_calls} allowed",
                hint="raise the call budget, or resume the run later (cached answers are reused)",
            )
        self.started += 1

    def record_call(self, pool: str, usage: Usage, cost: float, *, retries: int = 0) -> None:
        t = self.pool(pool)
        t.calls += 1
        t.retries += retries
        t.input_tokens += usage.input_tokens
        t.output_tokens += usage.output_tokens
        t.cost_usd += cost

    def record_hit(self, pool: str, count: int = 1) -> None:
        self.pool(pool).cache_hits += count

    def record_error(self, pool: str, *, retries: int = 0) -> None:
        t = self.pool(pool)
        t.errors += 1
        t.retries += retries


class CostEstimate(TypedDict):
    """What `--dry-run` prints for one model."""

    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    priced: bool
    """False when the model's price is unknown (cost_usd is then 0)."""


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: characters / 4 (OpenAI's rule of thumb for English)."""
    return (len(text) + 3) // 4 if text else 0


def request_input_tokens(request: ChatRequest) -> int:
    """Estimated prompt tokens of a request: message text, tool calls and tool schemas."""
    chars = 0
    for m in request.messages:
        chars += len(m.content or "") + 4 * 4  # per-message overhead of the chat format
        for tc in m.tool_calls or []:
            chars += len(tc.function.name) + len(tc.function.arguments)
    for tool in request.tools or []:
        chars += len(json.dumps(tool.function))
    if request.response_format:
        chars += len(json.dumps(request.response_format))
    return (chars + 3) // 4


def estimate(
    model: str,
    work: Iterable[ChatRequest] | tuple[int, int, int],
    *,
    prices: Mapping[str, Price] | None = None,
    avg_output_tokens: int = DEFAULT_OUTPUT_TOKENS,
    shipped: bool = True,
) -> CostEstimate:
    """Dry-run estimate of calls, tokens and cost, sending nothing.

    Args:
        model: `[provider:]model` as the user wrote it.
        work: the requests that would be sent, or `(count, avg_input_tokens, avg_output_tokens)`.
        prices: price overrides (eval.yaml options.prices).
        avg_output_tokens: output tokens assumed for a request without max_tokens.
        shipped: price from the shipped table too (False: a self-hosted or local server,
            priced only by `prices`).
    """
    if isinstance(work, tuple):
        count, avg_in, avg_out = work
        calls, tokens_in, tokens_out = count, count * avg_in, count * avg_out
    else:
        calls = tokens_in = tokens_out = 0
        for request in work:
            calls += 1
            tokens_in += request_input_tokens(request)
            tokens_out += request.max_tokens or avg_output_tokens
    provider, sep, name = model.partition(":")
    if not sep or not is_provider_type(provider):
        provider, name = "", model
    name = name.split("@", 1)[0]
    if is_free(provider):
        return CostEstimate(
            calls=calls, input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=0.0, priced=True
        )
    table = PriceTable(prices, shipped=shipped)
    cost = table.cost([name], Usage(input_tokens=tokens_in, output_tokens=tokens_out))
    return CostEstimate(
        calls=calls,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=round(cost or 0.0, 6),
        priced=cost is not None,
    )
