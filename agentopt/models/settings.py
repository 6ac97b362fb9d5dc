"""Settings of the call layer: CLI flags and eval.yaml `options` map onto these models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ProviderType = Literal["openai", "azure", "foundry", "ollama", "compat", "local", "mock"]
PROVIDER_TYPES: tuple[str, ...] = (
    "openai",
    "azure",
    "foundry",
    "ollama",
    "compat",
    "local",
    "mock",
)


class ProviderConfig(BaseModel):
    """One entry of eval.yaml `options.providers` (`{mylab: {type: compat, base_url: ...}}`)."""

    model_config = ConfigDict(extra="forbid")

    type: ProviderType
    """Which adapter serves this provider."""
    base_url: str | None = None
    """OpenAI-style base URL (compat/ollama/openai), Azure OpenAI endpoint (azure), or Foundry
    project endpoint (foundry). Default: the provider's usual environment variable."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key (never the key itself)."""
    api_version: str | None = None
    """Azure OpenAI API version; default `OPENAI_API_VERSION`, then a recent GA version."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers: header name → name of the environment variable holding its value
    (gateways that want their own key header). Values are redacted like keys."""
    reasoning: bool | None = None
    """True: every model of this provider is a reasoning model (max_completion_tokens, no
    temperature); False: never; None: decided by the model table."""
    default: bool = False
    """Bare model names go to this provider (else to the first declared one)."""


class Price(BaseModel):
    """USD per 1M tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = 0.0
    output: float = 0.0


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
