"""The run's record at its two ends: run.json when it starts (or resumes), and run.json's end
plus results.json once the last unit is journaled (shared by local and `--remote` runs)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from agentopt import __version__
from agentopt.agents.base import default_target
from agentopt.contracts.run_results import (
    AgentInfo,
    DatasetInfo,
    EvaluatorSummary,
    ModelsInfo,
    RunInfo,
    RunRecord,
    RunResults,
    RunSummary,
    UsageBucket,
)
from agentopt.contracts.task_record import TaskOutcome
from agentopt.core import heap
from agentopt.core.errors import AgentoptError
from agentopt.core.ids import utc_now_iso
from agentopt.core.lazy_model import build_in_background
from agentopt.evaluators.registry import canonical_name
from agentopt.evaluators.run_stats import RunStats
from agentopt.evaluators.stats import ConfidenceInterval
from agentopt.models.call import CallLayer
from agentopt.models.call_stats import CallStats
from agentopt.models.resolve import shown_model
from agentopt.models.types import POOLS
from agentopt.reports.formatting import SummaryTasks
from agentopt.workflows.run.engine import EngineSpec
from agentopt.workflows.run.inputs import ResolvedInputs, RunOptions, snapshot
from agentopt.workflows.run.results import RESULT_MODELS, write_results
from agentopt.workflows.run.store import RunStore


def new_run_info(
    store: RunStore,
    opts: RunOptions,
    inputs: ResolvedInputs,
    spec: EngineSpec,
    seed: int,
    layer: CallLayer | None = None,
) -> RunRecord:
    """run.json at the start. `models` holds the resolved identities (`ModelRef.identity`:
    provider, model and the user's own server), which every view shows as they are."""
    if store.run_json.exists():
        return store.read_run().model_copy(update={"status": "running"})
    ds = inputs.dataset
    return RunRecord(
        id=store.run_id,
        name=inputs.suite["name"],
        started_at=utc_now_iso(),
        finished_at=None,
        status="running",
        config=snapshot(opts),
        agent=AgentInfo(
            name=spec.agent.name,
            target=spec.agent.target or "local",
            model=spec.agent.model,
            config_id=spec.agent.config_id,
        ),
        dataset=DatasetInfo(
            name=ds.name, version=ds.version, sha256=ds.sha256, source=ds.source, format=ds.format
        ),
        evaluators=[canonical_name(u.name) for u in inputs.evaluators],
        models=ModelsInfo(
            agent=shown_model(
                _identity(layer, spec.agent.model) if _local(spec) else spec.agent.model
            ),
            judge=shown_model(_identity(layer, inputs.judge_model)),
        ),
        repeat=spec.repeat,
        seed=seed,
        cli_version=__version__,
    )


def _local(spec: EngineSpec) -> bool:
    return (spec.agent.target or default_target(spec.agent)) == "local"


def _identity(layer: CallLayer | None, model: str | None) -> str | None:
    if layer is None or not model:
        return model
    try:
        return layer.identity(model)
    except AgentoptError:
        return model  # an unresolvable name fails the run where it is called, with its message


OPTIONAL_POOLS = frozenset({"simulator"})
"""Pools listed in run.json / results.json only when a run used them."""


def _usage(layer: CallLayer | None, before: dict[str, UsageBucket]) -> dict[str, UsageBucket]:
    """Per pool, this session's calls plus the earlier sessions' (`--resume`)."""
    pools = layer.stats().pools if layer is not None else {}
    usage: dict[str, UsageBucket] = {}
    for pool in POOLS:
        now = UsageBucket.model_validate(pools[pool].model_dump()) if pool in pools else None
        prev = before.get(pool) or UsageBucket()
        if (
            pool in OPTIONAL_POOLS
            and pool not in before
            and not (now and (now.calls or now.cache_hits))
        ):
            continue  # a pool added later is listed once it is used (older files stay as they were)
        usage[pool] = UsageBucket(
            calls=prev.calls + (now.calls if now else 0),
            input_tokens=prev.input_tokens + (now.input_tokens if now else 0),
            output_tokens=prev.output_tokens + (now.output_tokens if now else 0),
            cost_usd=prev.cost_usd + (now.cost_usd if now else 0.0),
            cache_hits=prev.cache_hits + (now.cache_hits if now else 0),
        )
    return usage


SUMMARY_MODELS = (RunStats, ConfidenceInterval, EvaluatorSummary, RunSummary, RunInfo, CallStats)
"""What the summary is made of, besides results.json's own (`RESULT_MODELS`)."""


def prebuild_finish_models() -> threading.Thread:
    """Build the models the end of a run makes, on a thread, while the run's calls are waited
    on: each model is built on its first use (`core.lazy_model`), and these are first used
    after the last answer, where the time is the user's (~15 ms for ten models)."""
    return build_in_background(*SUMMARY_MODELS, *RESULT_MODELS, RunResults, UsageBucket)


def finish_results(
    store: RunStore,
    run_info: RunRecord,
    spec: EngineSpec,
    layer: CallLayer | None,
    seed: int,
    status: str,
    started: float,
    *,
    keep_all: bool = False,
) -> tuple[Path, RunResults]:
    """Write run.json's end and results.json once, from the store's tally and journal.

    Returns the results.json path and the results as written, holding every task when
    `keep_all` (reports, a baseline comparison), else the terminal summary's few."""
    heap.trim()  # what the engine freed, before the summary and results.json are built
    usage = _usage(layer, run_info.usage_before)
    if (spec.agent.target or default_target(spec.agent)) not in ("local", "captured"):
        # As the answers reported it (the journal's every session, resumed ones too); a
        # replayed (evaluate-only) run asked no agent at all.
        usage["agent"] = usage["agent"].model_copy(update=store.agent_usage())
    if not store.tally.judged:
        models = run_info.models.model_copy(update={"judge": None})
        run_info = run_info.model_copy(update={"models": models})
    stats = store.tally.stats(
        tokens_by_pool=usage, cost_by_pool={p: u.cost_usd for p, u in usage.items()}, seed=seed
    )
    limits = layer.stats().rate_limits if layer is not None else {}
    elapsed = time.monotonic() - started if started else 0.0
    duration = elapsed + run_info.duration_s
    run_info = run_info.model_copy(
        update={
            "status": status,
            "finished_at": utc_now_iso(),
            "usage_before": usage,
            "duration_s": round(duration, 3),
            # How each server was spoken to: structured-output mode, native or prompted tools.
            "model_capabilities": (layer.stats().capabilities or None) if layer else None,
        }
    )
    store.write_run(run_info)
    summary = stats.summary(
        usage, limiter="; ".join(f"{p}: {t}" for p, t in limits.items()), duration_s=duration
    )
    repeat_stats = {r.name: r for r in stats.repeats}
    kept: list[TaskOutcome] = []
    shown = SummaryTasks()
    info = run_info.info()
    keep = kept.append if keep_all else shown.add
    path = write_results(store, spec.tasks, repeat_stats, info, summary, keep=keep)
    store.close()
    return path, RunResults(run=info, summary=summary, tasks=kept if keep_all else shown.tasks())
