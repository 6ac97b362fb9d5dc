"""`agentopt optimize`, before anything is sent: resolve the inputs (or restore them for
--resume), split the data, choose targets and strategies, build every evaluator and estimate
the plan. Every problem found here is a ConfigError (exit 2) naming what to set."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from agentopt.contracts.optimize_job import JobRecord, OptimizePlan
from agentopt.core.heap import freeze_long_lived
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.build import EvaluatorCache
from agentopt.models.call import CallLayer
from agentopt.models.settings import CallSettings, call_settings
from agentopt.workflows.executor import ExecutorSettings
from agentopt.workflows.optimize.inputs import Ask, OptimizeInputs, resolve_optimize_inputs
from agentopt.workflows.optimize.journal import JobStore
from agentopt.workflows.optimize.options import OptimizeOptions, OptimizeSettings, resolve_settings
from agentopt.workflows.optimize.plan import plan_optimize
from agentopt.workflows.optimize.splits import Splits, make_splits, splits_from_info
from agentopt.workflows.optimize.targets import (
    TargetPlan,
    reflection_model,
    resolve_model_name,
    resolve_targets,
)
from agentopt.workflows.resolve_suite import call_flags
from agentopt.workflows.run.embedded import plays_on_the_embedded_model
from agentopt.workflows.run.engine import EngineSpec, prepare_evaluators
from agentopt.workflows.run.simulated_user import simulation_of

RESUME_OVERRIDES = ("budget_calls", "max_cost", "require_improvement", "executor", "ray_address")
"""Flags of the resuming command that win over the job's recorded ones."""


@dataclass
class PreparedJob:
    """Resolved and validated; nothing sent yet."""

    opts: OptimizeOptions
    inputs: OptimizeInputs
    settings: OptimizeSettings
    splits: Splits
    targets: TargetPlan
    plan: OptimizePlan
    call_settings: CallSettings
    store: JobStore
    resumed: JobRecord | None = None
    notices: list[str] = field(default_factory=list)
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)


def _restore(opts: OptimizeOptions, cwd: Path) -> tuple[OptimizeOptions, JobStore, JobRecord]:
    assert opts.resume is not None
    store = JobStore.open_existing(cwd, opts.resume)
    job = store.read_job()
    restored = OptimizeOptions.from_snapshot(job.config.get("options") or {})
    for key in RESUME_OVERRIDES:
        value = getattr(opts, key)
        if value not in (None, False):
            setattr(restored, key, value)
    restored.resume, restored.dry_run = opts.resume, opts.dry_run
    return restored, store, job


def prepare_optimize(opts: OptimizeOptions, cwd: Path, ask: Ask | None) -> PreparedJob:
    """Resolve inputs, split, choose targets and estimate the plan (ConfigError → exit 2)."""
    freeze_long_lived()  # the imports are done (core/heap.py)
    resumed: JobRecord | None = None
    store: JobStore | None = None
    if opts.resume:
        opts, store, resumed = _restore(opts, cwd)
        ask = None
    inputs = resolve_optimize_inputs(opts, cwd, ask)
    options = inputs.options
    settings = resolve_settings(inputs.suite)
    notices = list(inputs.notices)
    planner = CallLayer(
        inputs.project_dir,
        call_settings(options, call_flags(inputs.suite, dry_run=True)),
        on_notice=notices.append,
    )
    notes: list[str] = []
    optimization = reflection_model(planner, inputs.optimization_model, notes)
    resolve_model_name(planner, inputs.judge_model, "-m/--eval-model / options.eval_model")
    if inputs.agent.model:
        resolve_model_name(planner, inputs.agent.model, "agent model (metadata.yaml `model`)")
    for model in settings.model_search_space:
        resolve_model_name(planner, model, "--model-search-space")
    targets = resolve_targets(
        inputs.agent, inputs.explicit_targets, settings.model_search_space, optimization, notes
    )
    settings.targets = targets.targets
    if inputs.agent.target == "hosted" and settings.parallel_proposals > 1:
        # One process per candidate on the agent's one port: candidates take turns.
        settings.parallel_proposals = 1
        notes.append("hosted agent: candidates run one at a time (--parallel-proposals 1)")
    if resumed is not None:
        splits = splits_from_info(
            resumed.splits, inputs.dataset, validation=inputs.validation, test=inputs.test
        )
    else:
        splits = make_splits(
            inputs.dataset, settings.seed, validation=inputs.validation, test=inputs.test
        )
    simulation = simulation_of(options, inputs.judge_model, settings.seed)
    tasks = [t for s in (splits.train, splits.validation, splits.test) if s for t in s.tasks]
    spec = EngineSpec.of(inputs, tasks, simulation=simulation)
    prepare_evaluators(
        spec,
        EvaluatorCache(  # checked, not imported: user code runs only in a real run
            BuildContext(
                judge_model=inputs.judge_model,
                layer=planner,
                project_dir=inputs.project_dir,
                run_code=False,
            )
        ),
    )
    plan = plan_optimize(
        inputs.agent,
        splits,
        inputs.evaluators,
        inputs.judge_model,
        targets,
        settings,
        planner,
        simulation,
    )
    before_cost = sum(p.get("cost_usd", 0.0) for p in (resumed.usage if resumed else {}).values())
    remaining = None if settings.max_cost is None else max(settings.max_cost - before_cost, 0.0)
    calls = call_settings(options, replace(call_flags(inputs.suite), max_cost=remaining))
    asked = inputs.suite.given("agent_concurrency")
    if not asked and plays_on_the_embedded_model(inputs.agent, planner):
        calls.concurrency["agent"] = 1  # the embedded model serves one request at a time
    settings.concurrency = calls.concurrency["agent"]
    if store is None or store.project.resolve() != inputs.project_dir.resolve():
        store = JobStore(inputs.project_dir, opts.resume)
    executor = ExecutorSettings.of(inputs.suite["executor"], None, opts.ray_address)
    return PreparedJob(
        opts, inputs, settings, splits, targets, plan, calls, store, resumed, notices, executor
    )
