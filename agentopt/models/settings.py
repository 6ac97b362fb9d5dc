"""Settings of the call layer: CLI flags and eval.yaml `options` map onto these models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# One model per file section: eval.yaml `options.providers` / `options.prices` are parsed by
# core.files.eval_yaml and used here as they are.
from agentopt.core.files.eval_yaml import Price, ProviderConfig, ProviderType

__all__ = ["CallSettings", "Price", "ProviderConfig", "ProviderType"]


class CallSettings(BaseModel):
    """Knobs of the call layer; CLI flags and eval.yaml `options` map onto these."""

    model_config = ConfigDict(extra="forbid")

    concurrency: dict[str, int] = Field(
        default_factory=lambda: {"agent": 8, "judge": 16, "generator": 4, "optimizer": 2}
    )
    """Concurrency limit per pool (agent, judge, generator, optimizer)."""
    use_cache: bool = True
    """False = `--no-cache`: bypass reads, still write."""
    cache_enabled: bool = True
    """False = no cache file at all (tests, --dry-run)."""
    max_attempts: int = 6
    """Attempts per call, the first included."""
    call_timeout_s: float = 120.0
    """Deadline of one call, its retries and back-off included (counted from its first attempt)."""
    run_deadline_s: float | None = None
    """Deadline of the whole run (`--timeout`), counted from the creation of the CallLayer."""
    max_cost_usd: float | None = None
    """`--max-cost`: no new provider call once the run has spent this much."""
    max_calls: int | None = None
    """`--budget-calls`: no new provider call once this many were made."""
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    """eval.yaml `options.providers`."""
    project_endpoint: str | None = None
    """`--project-endpoint`; else FOUNDRY_PROJECT_ENDPOINT, then AZURE_AI_PROJECT_ENDPOINT."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """eval.yaml `options.prices`: overrides of the shipped price table (USD per 1M tokens)."""
    reasoning_models: list[str] = Field(default_factory=list)
    """Extra glob patterns of reasoning-model names, added to the shipped model table."""
    retry_base_s: float = 1.0
    """Back-off base (full jitter: a wait is uniform in [0, min(cap, base·2^attempt)])."""
    retry_cap_s: float = 60.0
    """Back-off ceiling."""
    aimd_increase_every: int = 20
    """Successes needed to add one slot back to a rate-limited pool."""
