"""`agentopt eval run`: resolve inputs → plan → run the engine → results.json → reports →
gates. The CLI calls `run_eval` once and renders what comes back."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentopt import __version__
from agentopt.agents.base import AgentTarget, make_target
from agentopt.contracts.matrix import VariantTag
from agentopt.contracts.record import problems_of
from agentopt.contracts.run_results import (
    RunResults,
    load_results,
)
from agentopt.core import trust
from agentopt.core.aio import run_loop
from agentopt.core.errors import (
    AgentoptError,
    BudgetExceeded,
    ConfigError,
    InputError,
    Interrupted,
)
from agentopt.core.heap import freeze_long_lived
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.build import EvaluatorCache
from agentopt.evaluators.stats import paired_bootstrap_ci, prefetch_numpy
from agentopt.models.call import CallLayer
from agentopt.models.settings import CallSettings, call_settings
from agentopt.reports.outputs import OutputFile, check_output_paths, write_outputs
from agentopt.workflows.events import Progress, ProgressSink
from agentopt.workflows.executor import Executor, ExecutorSettings, open_executor
from agentopt.workflows.resolve_suite import call_flags
from agentopt.workflows.run.cpu_pool import CpuPool, pool_from_env
from agentopt.workflows.run.embedded import plays_on_the_embedded_model
from agentopt.workflows.run.engine import EngineSpec, RunEngine
from agentopt.workflows.run.finish import finish_results, new_run_info, prebuild_finish_models
from agentopt.workflows.run.gates import GateOutcome, GateSettings, check_gates, compare_to_baseline
from agentopt.workflows.run.inputs import ResolvedInputs, RunOptions, resolve_inputs
from agentopt.workflows.run.plan import RunPlan, plan_run
from agentopt.workflows.run.simulated_user import simulation_of
from agentopt.workflows.run.store import RunStore, list_run_ids, resolve_run_ref
from agentopt.workflows.run.task_filter import tasks_to_run
from agentopt.workflows.run.unit_replay import UnitReplay, replayed_notice

PREFETCH_AFTER_S = 0.5
RUNEVALS_CONCURRENCY = 5
"""runevals runs 1–5 prompts at once (`--concurrency` is clamped to 5): so do M365 documents."""


@dataclass
class RunOutcome:
    """What `run_eval` hands back to the CLI."""

    inputs: ResolvedInputs
    plan: RunPlan | None = None
    run_id: str | None = None
    results_path: Path | None = None
    results: RunResults | None = None
    """results.json's run and summary; `tasks` holds every task when --output reports or a
    --baseline comparison needed them all, else the few the terminal summary names (the
    worst, the slowest, the flaky): `load_results(results_path)` reads them all."""
    outputs: list[OutputFile] = field(default_factory=list)
    gate: GateOutcome | None = None
    notices: list[str] = field(default_factory=list)
    remote: dict[str, Any] | None = None
    """`--remote`: the Foundry evaluation and run ids, status and report URL."""

    @property
    def exit_code(self) -> int:
        return self.gate.exit_code if self.gate else 0


def restore_options(opts: RunOptions, store: RunStore) -> RunOptions:
    """--resume: the interrupted run's options win for what defines the work; output and
    gate flags of the resuming command still apply."""
    saved = store.read_run().config
    keep = {
        "outputs",
        "fail_under",
        "min_pass_rate",
        "baseline",
        "max_errors",
        "max_cost",
        "resume",
        "retry_errors",
        "dry_run",
        "timeout",
        "no_wait",
        "executor",
        "ray_address",
    }
    values = {k: v for k, v in vars(opts).items() if k in keep}
    restored = {k: v for k, v in saved.items() if k not in keep and hasattr(opts, k)}
    try:  # run.json is a saved record: its options are checked against their types
        checked = TypeAdapter(RunOptions).validate_python({**vars(RunOptions()), **restored})
    except ValidationError as exc:
        raise InputError(
            problems=problems_of(exc, str(store.run_json), "config."),
            hint="run.json was changed by hand or damaged; start a new run",
        ) from None
    values = {**{k: getattr(checked, k) for k in restored}, **values}
    return RunOptions(**{**vars(RunOptions()), **values})


@dataclass
class PreparedRun:
    """Everything resolved and validated before the first call (errors here exit 2)."""

    opts: RunOptions
    inputs: ResolvedInputs
    spec: EngineSpec
    settings: CallSettings
    plan: RunPlan
    outputs: list[Path]
    seed: int
    store: RunStore | None
    notices: list[str]
    target: AgentTarget
    """Built before anything is written, so a bad target is exit 2 with no run folder."""
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)


def prepare_run(
    opts: RunOptions, cwd: Path, ask: Callable[[str, bool], bool] | None
) -> PreparedRun:
    """Resolve inputs, select tasks, build every evaluator and estimate the plan."""
    freeze_long_lived()  # the imports are done (core/heap.py)
    store: RunStore | None = None
    if opts.retry_errors and not opts.resume:
        ids = list_run_ids(cwd)
        if not ids:
            raise ConfigError("--retry-errors: no run yet", hint="run `agentopt eval run` first")
        opts = replace(opts, resume=ids[-1])
    if opts.resume:
        store = RunStore.open_existing(cwd, opts.resume)
        opts = restore_options(opts, store)
    outputs = [p if p.is_absolute() else cwd / p for p in check_output_paths(opts.outputs)]
    try:
        inputs = resolve_inputs(opts, cwd, ask)
        try:
            return _prepare(opts, cwd, store, outputs, inputs)
        except InputError as err:
            raise err.after([*inputs.warnings, *inputs.dataset.warnings]) from None
    except InputError as err:
        if store is None:
            raise
        raise _resumed(err, store) from None


def _resumed(err: InputError, store: RunStore) -> InputError:
    """A problem with what --resume restored names the file it came from (run.json)."""
    where = f"--resume reads the run's options from {store.run_json}"
    hint = f"{err.hint}; {where}" if err.hint else where
    return type(err)(err.message, problems=err.problems, hint=hint)


def _prepare(
    opts: RunOptions,
    cwd: Path,
    store: RunStore | None,
    outputs: list[Path],
    inputs: ResolvedInputs,
) -> PreparedRun:
    project = inputs.project_dir
    if opts.resume and store is not None and project.resolve() != cwd.resolve():
        store = RunStore.open_existing(project, opts.resume)
    tasks = tasks_to_run(inputs.dataset.tasks, opts.filter, opts.limit)
    options = inputs.options
    suite = inputs.suite
    repeat, seed = suite["repeat"], suite["seed"]
    settings = call_settings(options, call_flags(suite, dry_run=opts.dry_run))
    executor = ExecutorSettings.of(suite["executor"], None, opts.ray_address)
    notices: list[str] = list(inputs.notices)
    planner = CallLayer(
        project, settings.model_copy(update={"cache_enabled": False}), on_notice=notices.append
    )
    asked = suite["agent_concurrency"] if suite.given("agent_concurrency") else None
    if inputs.dataset.format == "m365" and settings.concurrency["agent"] > RUNEVALS_CONCURRENCY:
        settings.concurrency["agent"] = RUNEVALS_CONCURRENCY
        if asked:
            notices.append(
                f"agent concurrency {asked} → {RUNEVALS_CONCURRENCY}: an M365 eval document "
                f"runs at most {RUNEVALS_CONCURRENCY} prompts at once, as runevals does (JSONL "
                "and CSV datasets take any --concurrency)"
            )
    if not asked and plays_on_the_embedded_model(inputs.agent, planner):
        settings.concurrency["agent"] = 1
    simulation = simulation_of(options, inputs.judge_model, seed)
    if opts.evaluate_only:  # captured answers are scored as they are: nobody to talk to
        simulation = dataclasses.replace(simulation, users=False)
    # Building every evaluator up front (in the plan's pass over the tasks) turns a bad
    # name into exit 2 before any call. Code evaluators are checked here, not imported: no
    # code from an eval file runs before a real run (and never on --dry-run); the run's own
    # cache imports them.
    evaluators = EvaluatorCache(
        BuildContext(
            judge_model=inputs.judge_model, layer=planner, project_dir=project, run_code=False
        )
    )
    plan = plan_run(
        tasks,
        inputs.dataset,
        inputs.agent,
        inputs.evaluators,
        inputs.judge_model,
        repeat,
        planner,
        simulation,
        prepare=evaluators.get,
    )
    spec = EngineSpec.of(
        inputs,
        tasks,
        repeat=repeat,
        turn_timeout_s=suite["turn_timeout_s"],
        stop_after_errors=opts.max_errors,
        simulation=simulation,
    )
    target = make_target(spec.agent.target, spec.agent)
    return PreparedRun(
        opts, inputs, spec, settings, plan, outputs, seed, store, notices, target, executor
    )


def run_prepared(prepared: PreparedRun, sink: ProgressSink) -> RunOutcome:
    """Run a prepared suite (one event loop per command).

    Ctrl-C normally arrives as a cancellation handled inside the loop; a KeyboardInterrupt
    that escapes it (raised from a thread or a second Ctrl-C) still saves what finished.
    """
    pool = pool_from_env()  # a bad AGENTOPT_EVALUATOR_PROCESSES fails before any file
    store = prepared.store = prepared.store or RunStore(prepared.spec.project_dir)
    try:
        return run_loop(_run(prepared, sink, pool))
    except KeyboardInterrupt:
        if store.run_json.exists():
            run_info = store.read_run()
            finish_results(store, run_info, prepared.spec, None, prepared.seed, "interrupted", 0.0)
        store.close()
        raise Interrupted(
            "interrupted: finished tasks are saved",
            hint=f"resume with `agentopt eval run --resume {store.run_id}`",
        ) from None


async def _run(prepared: PreparedRun, sink: ProgressSink, pool: CpuPool | None) -> RunOutcome:
    spec = prepared.spec
    try:
        executor = await open_executor(
            prepared.executor,
            spec.project_dir,
            prepared.settings,
            agent=spec.agent,
            on_notice=sink.notice,
        )
    except BaseException:
        _drop_if_empty(prepared.store)  # a cluster that refused the run leaves no run folder
        if pool is not None:
            pool.close()
        raise
    try:
        layer = CallLayer(
            spec.project_dir,
            prepared.settings,
            on_notice=prepared.notices.append,
            state=executor.call_state,
        )
        outcome = RunOutcome(inputs=prepared.inputs, plan=prepared.plan, notices=prepared.notices)
        cache = EvaluatorCache(
            BuildContext(
                judge_model=spec.judge_model,
                layer=layer,
                project_dir=spec.project_dir,
                offload=pool,
            )
        )
        try:
            with trust.watch(spec.project_dir, sink.notice):
                await _execute(
                    outcome,
                    prepared.target,
                    prepared.opts,
                    spec,
                    cache,
                    layer,
                    prepared.store,
                    sink,
                    prepared.seed,
                    prepared.outputs,
                    executor,
                )
        finally:
            await layer.aclose()
    finally:
        if pool is not None:
            pool.close()
        await executor.aclose()
    return outcome


def _drop_if_empty(store: RunStore | None) -> None:
    if store is not None and store.dir.is_dir() and not any(store.dir.iterdir()):
        store.dir.rmdir()


async def _execute(
    outcome: RunOutcome,
    target: AgentTarget,
    opts: RunOptions,
    spec: EngineSpec,
    cache: EvaluatorCache,
    layer: CallLayer,
    store: RunStore | None,
    sink: ProgressSink,
    seed: int,
    outputs: list[Path],
    executor: Executor,
    *,
    variant: VariantTag | None = None,
) -> None:
    inputs = outcome.inputs
    store = store or RunStore(spec.project_dir)
    outcome.run_id = store.run_id
    run_info = new_run_info(store, opts, inputs, spec, seed, layer)
    if variant is not None:  # one variant of a matrix run (workflows/run/matrix.py)
        run_info = run_info.model_copy(update={"variant": variant})
    store.write_run(run_info)
    started = time.monotonic()
    total = len(spec.tasks) * spec.repeat
    done = len(store.done_keys())
    progress = Progress(total=total, done=done, skipped=done, counts=store.tally.counts)
    engine = RunEngine(spec, target, layer, store, sink, cache)
    engine.runner = executor.runner(engine)
    if engine.runner is engine:
        engine.replay = UnitReplay.for_run(
            layer,
            target,
            tasks=spec.tasks,
            parts=spec.replay_parts(),
            evaluators=[use.model_dump(mode="json") for use in spec.evaluators],
        )
    if total > 1:
        # The bootstrap at the end needs numpy once the scores differ (or to compare with a
        # --baseline), and the end's models are built on first use: load and build them
        # while calls are waited on, once the first requests are out (the import would
        # otherwise hold the GIL during the ramp).
        _prefetch_when_needed(store, bool(opts.baseline))
    sink.start(progress, f"Running {len(spec.tasks)} tasks × {spec.repeat}")
    status: str = "completed"
    failure: AgentoptError | None = None
    try:
        await engine.run(progress)
    except (KeyboardInterrupt, asyncio.CancelledError):
        status, failure = (
            "interrupted",
            Interrupted(
                f"interrupted: {progress.done}/{total} finished and saved",
                hint=f"resume with `agentopt eval run --resume {store.run_id}`",
            ),
        )
    except Interrupted as err:
        status, failure = "interrupted", err
    except AgentoptError as err:
        status = "budget_exhausted" if isinstance(err, BudgetExceeded) else "stopped"
        err.hint = (err.hint + "; " if err.hint else "") + (
            f"finished tasks are saved: `agentopt eval run --resume {store.run_id}`"
        )
        failure = err
    finally:
        sink.finish(progress)
        await engine.runner.aclose()
        await target.aclose()
    if engine.replay is not None and engine.replay.replayed:
        outcome.notices.append(replayed_notice(engine.replay.replayed, total))
    outcome.results_path, outcome.results = finish_results(
        store, run_info, spec, layer, seed, status, started, keep_all=bool(outputs or opts.baseline)
    )
    if failure is not None:
        raise failure
    conclude(outcome, opts, spec, seed, outputs)


def _prefetch_when_needed(store: RunStore, baseline: bool) -> None:
    loop = asyncio.get_running_loop()
    loop.call_later(PREFETCH_AFTER_S, prebuild_finish_models)

    def check() -> None:
        if baseline or store.tally.varied:
            prefetch_numpy()
        else:
            loop.call_later(PREFETCH_AFTER_S, check)

    loop.call_later(PREFETCH_AFTER_S, check)


def conclude(
    outcome: RunOutcome, opts: RunOptions, spec: EngineSpec, seed: int, outputs: list[Path]
) -> None:
    """After results.json: the --output files, the --baseline comparison and the gates (the
    same for a local and a remote run)."""
    inputs = outcome.inputs
    assert outcome.results is not None
    outcome.outputs = write_outputs(
        outcome.results,
        outputs,
        m365_document=inputs.dataset.document if inputs.dataset.format == "m365" else None,
        agent_name=spec.agent.name,
        cli_version=__version__,
    )
    regression = None
    if opts.baseline:
        base_path = resolve_run_ref(spec.project_dir, opts.baseline)
        regression = compare_to_baseline(
            outcome.results, load_results(base_path), opts.baseline, _paired, seed
        )
    outcome.gate = check_gates(
        outcome.results.summary, _gate_settings(opts, outcome.inputs), regression=regression
    )


def _gate_settings(opts: RunOptions, inputs: ResolvedInputs) -> GateSettings:
    """Flags win; eval.yaml `options.fail_under` / `min_pass_rate` / `max_errors` apply else."""
    suite = inputs.suite
    return GateSettings(suite["fail_under"], suite["min_pass_rate"], suite["max_errors"])


def _paired(
    current: Sequence[float], base: Sequence[float], seed: int
) -> tuple[float, float, float]:
    delta = paired_bootstrap_ci(base, current, seed)
    assert delta is not None
    return delta.mean, delta.low, delta.high
