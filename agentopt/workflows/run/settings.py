"""Flags and eval.yaml `options` → the call layer's settings."""

from __future__ import annotations

from agentopt.core.files.eval_yaml import Options
from agentopt.models.settings import CallSettings
from agentopt.workflows.run.inputs import RunOptions


def call_settings(
    opts: RunOptions, options: Options | None, *, dry_run: bool = False
) -> CallSettings:
    """Concurrency, cache, budget and providers for one command."""
    settings = CallSettings(cache_enabled=not dry_run, use_cache=not opts.no_cache)
    agent = opts.concurrency or (options.max_concurrent_agent_runs if options else None)
    judge = opts.judge_concurrency or (options.judge_concurrency if options else None)
    if agent:
        settings.concurrency["agent"] = agent
    if judge:
        settings.concurrency["judge"] = judge
    max_cost = (
        opts.max_cost if opts.max_cost is not None else (options.max_cost if options else None)
    )
    settings.max_cost_usd = max_cost
    settings.run_deadline_s = opts.timeout
    settings.project_endpoint = opts.project_endpoint
    if options is not None:
        settings.providers = dict(options.providers)
        settings.prices = dict(options.prices)
    return settings
