"""What a run summary reports about its model calls (`CallLayer.stats`)."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from agentopt.core.lazy_model import LazyModel
from agentopt.models.cost import Totals


class CallStats(LazyModel):
    """What a run summary reports about model calls."""

    model_config = ConfigDict(extra="forbid")

    pools: dict[str, Totals] = Field(default_factory=dict)
    """Per pool: calls, cache hits, errors, retries, tokens, cost."""
    total: Totals = Field(default_factory=Totals)
    rate_limits: dict[str, str] = Field(default_factory=dict)
    """Per rate-limited pool: "rate limited 14×, concurrency 16 → 4 → 11"."""
    limiter_events: list[dict[str, Any]] = Field(default_factory=list)
    unpriced_models: list[str] = Field(default_factory=list)
    """Models the price table does not know: their cost is counted as 0."""
    notices: list[str] = Field(default_factory=list)
    capabilities: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Per `provider:model` called: the structured-output mode and tool calling used."""
