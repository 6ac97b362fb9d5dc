"""The flags `eval run` and `optimize` share, declared once: each picks the same suite
(eval.yaml or an azure.eval.yaml eval), agent, evaluators and call limits, and `resolve_suite`
reads them by these names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class SuiteFlags:
    """The shared flags (None = not given, so eval.yaml can fill it)."""

    config: Path | None = None
    eval_name: str | None = None
    """`--eval NAME`: the eval of an azure.eval.yaml to use (workflows.azure_eval)."""
    agent: str | None = None
    environment: str | None = None
    """`-e/--environment`: the azd environment."""
    project_endpoint: str | None = None
    """`-p/--project-endpoint` (or azd's `--endpoint`): the Foundry project (--remote)."""
    eval_model: str | None = None
    evaluators: list[str] | None = None
    concurrency: int | None = None
    """`--concurrency`: the agent pool."""
    call_timeout: float | None = None
    """`--call-timeout`: deadline of one model call."""
    max_cost: float | None = None
    seed: int | None = None
    resume: str | None = None
    dry_run: bool = False
    executor: str | None = None
    """`--executor local|ray` (None: eval.yaml `options.executor`, else local)."""
    ray_address: str | None = None
    """`--ray-address` (None: RAY_ADDRESS, else a local Ray instance)."""
