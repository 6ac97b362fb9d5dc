"""`agentopt optimize`, the run: baseline → search → test split → report, with Ctrl-C
saving the job. `prepare.prepare_optimize` comes first (everything that can fail on bad
input, before any call); the CLI renders the plan, then calls `run_optimize` once.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord, JobRecord, Termination
from agentopt.contracts.task_record import RepeatOutcome
from agentopt.core import trust
from agentopt.core.aio import run_loop
from agentopt.core.errors import BudgetExceeded, ConfigError, Interrupted, TooManyErrors
from agentopt.core.ids import utc_now_iso
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.build import EvaluatorCache
from agentopt.models.call import CallLayer
from agentopt.workflows.executor import Executor, open_executor
from agentopt.workflows.optimize.budget import EVAL_POOLS, CallBudget
from agentopt.workflows.optimize.candidates import fill_validation
from agentopt.workflows.optimize.evaluation import (
    CandidateRun,
    EvalContext,
    StopRequested,
    UnitBook,
    error_summary,
)
from agentopt.workflows.optimize.events import OptimizeSink
from agentopt.workflows.optimize.journal import JobStore
from agentopt.workflows.optimize.prepare import PreparedJob
from agentopt.workflows.optimize.rotation import Rotation
from agentopt.workflows.optimize.search import Search
from agentopt.workflows.optimize.state import JobContext
from agentopt.workflows.optimize.test_split import evaluate_test_split
from agentopt.workflows.run.simulated_user import simulation_of


@dataclass
class OptimizeOutcome:
    """What the CLI renders."""

    job: JobRecord
    store: JobStore
    report_path: Path
    instructions: dict[str, str] = field(default_factory=dict)
    """Candidate id → instructions (for the diff in the final report)."""
    require_improvement: bool = False
    max_errors: int = 0
    """Failed evaluations tolerated before exit 3 (`options.max_errors`)."""

    @property
    def too_many_errors(self) -> bool:
        """The decision rests on more failed evaluations than tolerated."""
        return self.job.errors.units > self.max_errors

    @property
    def exit_code(self) -> int:
        """3 when errors left the verdict unknown or a budget stopped the search (the job is
        saved and resumable), 1 when --require-improvement found none, else 0 (cli.md)."""
        if self.too_many_errors or self.job.termination_reason == "budget_exhausted":
            return 3
        return 1 if self.require_improvement and self.job.outcome != "improved" else 0


def _new_job(prepared: PreparedJob) -> JobRecord:
    inputs, settings = prepared.inputs, prepared.settings
    return JobRecord(
        id=prepared.store.job_id,
        started_at=utc_now_iso(),
        config={
            "options": prepared.opts.snapshot(),
            "settings": settings.model_dump(mode="json"),
            "agent": {
                "name": inputs.agent.name,
                "model": inputs.agent.model,
                "target": inputs.agent.target,
                "source": inputs.agent.source,
            },
            "eval_model": inputs.judge_model,
            "optimization_model": prepared.targets.optimization_model,
            "evaluators": [u.name for u in inputs.evaluators],
            **{
                key: {"name": d.name, "version": d.version, "source": d.source, "sha256": d.sha256}
                for key, d in (
                    ("dataset", inputs.dataset),
                    ("validation_dataset", inputs.validation),
                    ("test_dataset", inputs.test),
                )
                if d is not None
            },
            "eval_config": str(inputs.config_path) if inputs.config_path else None,
        },
        plan=prepared.plan,
        splits=prepared.splits.info,
        warnings=[str(w) for w in inputs.warnings]
        + ([prepared.splits.info.warning] if prepared.splits.info.warning else []),
        notes=list(prepared.targets.notes),
    )


def _context(
    prepared: PreparedJob, layer: CallLayer, sink: OptimizeSink, executor: Executor
) -> JobContext:
    inputs, settings = prepared.inputs, prepared.settings
    resumed = prepared.resumed
    job = _new_job(prepared)
    if resumed is not None:
        job.started_at = resumed.started_at
        job.phase_calls = dict(resumed.phase_calls)
    before = resumed.usage if resumed else {}
    test_units = 2 * len(prepared.splits.test.tasks) if prepared.splits.test else 0
    budget = CallBudget(
        layer,
        settings.budget_calls,
        before=int(sum(before.get(p, {}).get("calls", 0) for p in EVAL_POOLS)),
        unit_calls=prepared.plan.test_split.calls / test_units if test_units else 2.0,
        sync=executor.sync,
    )
    if settings.budget_calls is not None and test_units:
        # At most a third of the budget: a tiny budget still leaves room to search.
        budget.reserve_units = min(test_units, round(settings.budget_calls / 3 / budget.per_unit))
    book = UnitBook()
    replay = book.load(prepared.store)
    options = inputs.options
    evaluation = EvalContext(
        store=prepared.store,
        book=book,
        splits=prepared.splits,
        layer=layer,
        evaluators=inputs.evaluators,
        judge_model=inputs.judge_model,
        cache=EvaluatorCache(
            BuildContext(
                judge_model=inputs.judge_model, layer=layer, project_dir=inputs.project_dir
            )
        ),
        budget=budget,
        real_tools=settings.real_tools,
        turn_timeout_s=inputs.suite["turn_timeout_s"],
        executor=executor,
        simulation=simulation_of(options, inputs.judge_model, settings.seed),
    )
    return JobContext(
        job=job,
        store=prepared.store,
        splits=prepared.splits,
        settings=settings,
        layer=layer,
        eval=evaluation,
        sink=sink,
        optimization_model=prepared.targets.optimization_model,
        definitions={BASELINE_ID: inputs.agent},
        usage_before=before,
        replay=replay,
    )


def _require_scores(ctx: JobContext, names: list[str]) -> None:
    """A baseline with no scored validation task means the agent or the judge cannot be
    reached: optimizing against that would only measure the failure."""
    units = [u for n in names if (u := ctx.book.get(BASELINE_ID, n)) is not None]
    if any(u.score.score is not None for u in units):
        return
    first = next((_first_error(u.record) for u in units if _first_error(u.record)), "unknown")
    raise TooManyErrors(
        f"the baseline could not be scored: all {len(names)} validation tasks failed "
        f"(first error: {first})",
        hint="fix the agent or judge model (`agentopt eval run` shows every error), then "
        "start the job again",
    )


def _first_error(record: RepeatOutcome) -> str:
    if record.error is not None and record.error.message:
        return record.error.message
    return next((r.error.message for r in record.evaluators if r.error is not None), "")


async def _baseline(ctx: JobContext) -> None:
    """Step 1: the baseline on validation (its score). Not on the whole train split: each
    proposal runs its parent on its own minibatch first, which is all the traces reflection
    needs (GEPA's economy; the first proposals sample the minibatch at random)."""
    agent = ctx.definitions[BASELINE_ID]
    record = CandidateRecord(
        id=BASELINE_ID,
        status="baseline",
        model=agent.model,
        config_dir=f"candidates/{BASELINE_ID}",
        created_at=ctx.job.started_at,
    )
    ctx.job.candidates.append(record)
    ctx.write_folder(BASELINE_ID, agent)
    names = list(ctx.splits.validation.names)
    ctx.sink.status(f"baseline: evaluating on {len(names)} validation tasks")
    async with CandidateRun(ctx.eval, BASELINE_ID, agent) as run:
        await run.evaluate(names)
    validation = ctx.splits.validation.names
    _require_scores(ctx, validation)
    fill_validation(
        record, ctx.book_units(BASELINE_ID, validation), validation, ctx.layer, ctx.settings.seed
    )
    ctx.rerank()
    ctx.save()
    ctx.sink.candidate(ctx.job, record)


def _interrupted(ctx: JobContext) -> Interrupted:
    ctx.job.status, ctx.job.termination_reason = "interrupted", "interrupted"
    _finish(ctx)
    ctx.sink.finish(ctx.job)
    return Interrupted(
        "interrupted: finished candidates and evaluations are saved",
        hint=f"resume with `agentopt optimize --resume {ctx.job.id}`",
    )


def _on_ctrl_c(ctx: JobContext) -> Callable[[], None]:
    """First Ctrl-C: start nothing new, let the calls in flight finish (so they are journaled
    and cached, and --resume repeats none of them). Second Ctrl-C: stop at once."""
    main = asyncio.current_task()

    def handler() -> None:
        if ctx.eval.stop_requested and main is not None:
            main.cancel()
            return
        ctx.eval.stop_requested = True
        ctx.sink.notice("stopping: finishing the calls in flight (Ctrl-C again to stop now)")

    return handler


async def _run(prepared: PreparedJob, sink: OptimizeSink) -> OptimizeOutcome:
    executor = await open_executor(
        prepared.executor,
        prepared.inputs.project_dir,
        prepared.call_settings,
        agent=prepared.inputs.agent,
        on_notice=sink.notice,
    )
    try:
        with trust.watch(prepared.inputs.project_dir, sink.notice):
            return await _run_on(prepared, sink, executor)
    finally:
        await executor.aclose()


async def _run_on(prepared: PreparedJob, sink: OptimizeSink, executor: Executor) -> OptimizeOutcome:
    shown = set(prepared.notices)  # the planner's notices were printed with the plan
    layer = CallLayer(
        prepared.inputs.project_dir,
        prepared.call_settings,
        on_notice=lambda message: None if message in shown else sink.notice(message),
        state=executor.call_state,
    )
    sink.attach(layer.meter)  # status lines show the phase's tokens/s
    prepared.store.create()
    ctx = _context(prepared, layer, sink, executor)
    ctx.save()  # on disk before the journal's first line (JobStore._write_lines)
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, _on_ctrl_c(ctx))
        handled = True
    except (NotImplementedError, RuntimeError, ValueError):
        handled = False  # not the main thread, or a platform without loop signal handlers
    termination: Termination = "completed"
    try:
        phase, mark = "baseline", ctx.eval.budget.used()
        try:
            await _baseline(ctx)
            ctx.count_calls(phase, mark)
            phase, mark = "search", ctx.eval.budget.used()
            rotation = Rotation(prepared.targets.targets, prepared.targets.strategies)
            termination = await Search(ctx, rotation).run()
        except BudgetExceeded as exc:
            sink.notice(exc.message)
            termination = "budget_exhausted"
            ctx.job.stop_detail = exc.message
        except StopRequested:
            termination = "interrupted"
        ctx.count_calls(phase, mark)
        if termination == "interrupted":
            raise _interrupted(ctx)
        ctx.job.termination_reason = termination
        ctx.rerank()
        mark = ctx.eval.budget.used()
        await evaluate_test_split(ctx)
        ctx.count_calls("test", mark)
        if ctx.eval.stop_requested:
            raise _interrupted(ctx)
        await ctx.folders_written()
        ctx.job.status = "completed"
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise _interrupted(ctx) from None
    except Interrupted:
        raise
    except BaseException:
        ctx.job.status = "failed"
        _finish(ctx)
        raise
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGINT)
        try:
            await ctx.folders_written(raise_error=False)  # no worker outlives the job
            if ctx.job.status == "completed":
                _final_save(ctx)  # written with the journal's last batch by the close below
        finally:
            await _close(ctx, layer)  # job.json and the journal's last lines are fsync'd
    sink.finish(ctx.job)
    return OptimizeOutcome(
        job=ctx.job,
        store=ctx.store,
        report_path=ctx.store.report_html,
        instructions=ctx.instructions(),
        require_improvement=prepared.opts.require_improvement,
        max_errors=prepared.settings.max_errors,
    )


def _finish(ctx: JobContext) -> None:
    _final_save(ctx)
    ctx.store.close()  # job.json and report.html are on disk before the command returns


def _final_save(ctx: JobContext) -> None:
    ctx.job.finished_at = utc_now_iso()
    ctx.job.errors = error_summary(ctx.book)
    ctx.save()


async def _close(ctx: JobContext, layer: CallLayer) -> None:
    """The model clients and cache, and the job's files, closed side by side: the cache's
    last commit and the journal's and job.json's last fsyncs overlap (they took 12-15 ms one
    after the other at the end of a bench run). A writer's error is raised after both."""
    results = await asyncio.gather(
        layer.aclose(), asyncio.to_thread(ctx.store.close), return_exceptions=True
    )
    for result in results:
        if isinstance(result, BaseException):
            raise result


def run_optimize(prepared: PreparedJob, sink: OptimizeSink) -> OptimizeOutcome:
    """Run a prepared job (one event loop). --resume continues an interrupted, failed or
    budget-stopped job (with a larger budget); a job that completed otherwise is refused."""
    resumed = prepared.resumed
    if (
        resumed is not None
        and resumed.status == "completed"
        and resumed.termination_reason != "budget_exhausted"
    ):
        raise ConfigError(
            f"job {resumed.id} is already completed",
            hint=f"see it with `agentopt optimize status {resumed.id}`",
        )
    try:
        return run_loop(_run(prepared, sink))
    except KeyboardInterrupt:
        raise Interrupted(
            "interrupted: finished candidates and evaluations are saved",
            hint=f"resume with `agentopt optimize --resume {prepared.store.job_id}`",
        ) from None
