"""Settings of the call layer: CLI flags and eval.yaml `options` map onto these models."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ConfigDict, Field

# One model per file section: eval.yaml `options.providers` / `options.prices` are parsed by
# core.files.eval_yaml and used here as they are.
from agentopt.core.files.eval_yaml import Options, Price, ProviderConfig, ProviderType
from agentopt.core.lazy_model import LazyModel

MIN_ATTEMPT_TIMEOUT_S = 10.0
"""A slow but healthy answer (a long generation on a loaded server) must fit in one attempt."""
DEFAULT_CALL_TIMEOUT_S = 120.0
DEFAULT_STALL_TIMEOUT_S = 60.0

__all__ = ["CallFlags", "CallSettings", "Price", "ProviderConfig", "ProviderType", "call_settings"]


DEFAULT_CONCURRENCY = {"agent": 8, "judge": 16, "generator": 4, "optimizer": 2, "simulator": 8}
"""Each pool's limit when no flag or eval.yaml option sets it (read, never changed)."""


class CallSettings(LazyModel):
    """Knobs of the call layer; CLI flags and eval.yaml `options` map onto these."""

    model_config = ConfigDict(extra="forbid")

    concurrency: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_CONCURRENCY))
    """Concurrency limit per pool, the only one there is: the agent pool bounds agent runs
    in flight (every target, and the run engine's workers, ask it), the others model calls."""
    use_cache: bool = True
    """False = `--no-cache`: bypass reads, still write."""
    cache_enabled: bool = True
    """False = no cache file at all (tests, --dry-run)."""
    max_attempts: int = 6
    """Attempts per call, the first included."""
    call_timeout_s: float | None = None
    """Deadline of one call set by the user (`--call-timeout`, `options.call_timeout_seconds`)
    or a caller: exactly that. None: `default_call_timeout_s`, which the embedded model and
    self-hosted servers raise to the time the tokens asked need at the speed measured on this
    machine (`models.deadlines`), so a slow but progressing call is not killed. Either way
    it covers retries and back-off and counts from when the model starts on the call (time
    queued for the embedded model's one slot is not counted)."""
    default_call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    """The deadline when none is set (a field so tests can scale every duration)."""
    attempt_timeout_s: float | None = None
    """Timeout of one attempt whose progress cannot be watched (eval.yaml
    `options.attempt_timeout_seconds`); None = see `attempt_timeout`."""
    min_attempt_timeout_s: float = MIN_ATTEMPT_TIMEOUT_S
    """Floor of the default attempt timeout (a field so tests can scale every duration)."""
    stall_timeout_s: float = DEFAULT_STALL_TIMEOUT_S
    """An attempt whose answer streams (the embedded model, self-hosted servers) is cut and
    retried when no token arrives for this long (`options.stall_timeout_seconds`); the first
    token's window also allows for reading the prompt at the measured speed."""
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
    max_answer_bytes: int | None = None
    """eval.yaml `options.max_answer_bytes`: the cap on one answer, tool result or judge
    reply (None: `core.limits.DEFAULT_MAX_ANSWER_BYTES`, 1 MiB)."""

    @property
    def call_deadline_s(self) -> float:
        """The call deadline before any fitting to the model: the one set, else the default."""
        return self.default_call_timeout_s if self.call_timeout_s is None else self.call_timeout_s

    def attempt_timeout(self) -> float:
        """Seconds one attempt may take when its progress cannot be watched: the configured
        value; else, under a call deadline the user set, the whole deadline (they said calls
        are that slow: a 150 s answer under `call_timeout_seconds: 300` must arrive); else the
        default deadline divided by the attempts (at least `min_attempt_timeout_s`), so one
        hung connection is retried instead of spending the whole deadline. Never more than
        the deadline."""
        deadline = self.call_deadline_s
        if self.attempt_timeout_s is not None:
            return min(self.attempt_timeout_s, deadline)
        if self.call_timeout_s is not None:
            return deadline
        share = deadline / max(1, self.max_attempts)
        return min(deadline, max(self.min_attempt_timeout_s, share))


@dataclass(frozen=True)
class CallFlags:
    """The command-line flags that shape the call layer; None / False = not given."""

    concurrency: int | None = None
    """`--concurrency`: the agent pool."""
    judge_concurrency: int | None = None
    """`--judge-concurrency`."""
    max_cost: float | None = None
    """`--max-cost` (what is left of it, on `optimize --resume`)."""
    timeout_s: float | None = None
    """`--timeout`: deadline of the whole run."""
    call_timeout_s: float | None = None
    """`--call-timeout`: deadline of one model call."""
    project_endpoint: str | None = None
    """`--project-endpoint`."""
    no_cache: bool = False
    """`--no-cache`: bypass cache reads."""
    dry_run: bool = False
    """`--dry-run`: no cache file at all."""


def call_settings(options: Options | None, flags: CallFlags | None = None) -> CallSettings:
    """The call layer's settings for one command: flags over eval.yaml `options` over the
    defaults. Every command builds its settings here, so each setting has one owner."""
    f = flags or CallFlags()
    o = options or Options()
    settings = CallSettings(cache_enabled=not f.dry_run, use_cache=not f.no_cache)
    agent = f.concurrency or o.max_concurrent_agent_runs
    judge = f.judge_concurrency or o.judge_concurrency
    if agent:
        settings.concurrency["agent"] = agent
    if judge:
        settings.concurrency["judge"] = judge
    settings.max_cost_usd = f.max_cost if f.max_cost is not None else o.max_cost
    settings.run_deadline_s = f.timeout_s
    settings.project_endpoint = f.project_endpoint
    # eval.yaml's provider and price models are the call layer's own (one model per section).
    settings.providers = dict(o.providers)
    settings.prices = dict(o.prices)
    settings.attempt_timeout_s = o.attempt_timeout_seconds
    call_timeout = f.call_timeout_s if f.call_timeout_s is not None else o.call_timeout_seconds
    if call_timeout is not None:
        settings.call_timeout_s = call_timeout
    if o.stall_timeout_seconds is not None:
        settings.stall_timeout_s = o.stall_timeout_seconds
    settings.max_answer_bytes = o.max_answer_bytes
    return settings
