"""A matrix run: the same tasks against every variant of the agent in one command
(`eval run --agent-model A --agent-model B --instructions @a.md --instructions @b.md`, or
eval.yaml `variants:`).

Each variant is an ordinary run — its own run folder, journal, results.json, tagged
`run.variant` — so `eval show`, `--baseline` and `view` read it like any run. What the variants
share is the command's: one call state (`models.call_state.BranchState`), so one cache answers
every variant (a rerun makes no call) and one agent pool bounds them all; one event loop plays
them side by side. `matrix.json` then names the runs and the best variant, with the paired
noise rule (evaluators/stats.py), and the `--output` files show one row per task and one column
per variant.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.agents.base import make_target
from agentopt.contracts.matrix import (
    BestVariant,
    MatrixRecord,
    VariantScore,
    VariantSpec,
    VariantTag,
    load_matrix,
)
from agentopt.contracts.outcomes import OutcomeCounts
from agentopt.contracts.run_results import RunResults, load_results
from agentopt.core.aio import run_loop
from agentopt.core.atomic import write_json_atomic
from agentopt.core.errors import AgentoptError, ConfigError, Interrupted
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.ids import new_id, utc_now_iso
from agentopt.core.paths import inside_project, state_dir
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.build import EvaluatorCache
from agentopt.evaluators.stats import paired_bootstrap_ci
from agentopt.models.call import CallLayer
from agentopt.models.call_state import BranchState, CallState
from agentopt.reports.matrix import MatrixReport, build_matrix_report, write_matrix_outputs
from agentopt.reports.outputs import OutputFile
from agentopt.workflows.events import Progress, ProgressSink
from agentopt.workflows.executor import LocalExecutor
from agentopt.workflows.run.eval_run import PreparedRun, RunOutcome, _execute, prepare_run
from agentopt.workflows.run.gates import GateOutcome
from agentopt.workflows.run.inputs import RunOptions
from agentopt.workflows.run.plan import plan_run
from agentopt.workflows.run.store import RunStore

MATRICES = "matrices"
REFUSED = {
    "resume": "--resume",
    "retry_errors": "--retry-errors",
    "remote": "--remote",
    "evaluate_only": "--evaluate-only",
    "baseline": "--baseline",
}
"""Flags a matrix run does not take, with why in `_refuse`."""


def matrices_dir(project: Path) -> Path:
    return inside_project(project, state_dir(project) / MATRICES, "the matrices folder")


def list_matrix_ids(project: Path) -> list[str]:
    folder = Path(project) / ".agentopt" / MATRICES
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / "matrix.json").is_file())


@dataclass
class PreparedMatrix:
    """Every variant resolved and planned before the first call (errors here exit 2)."""

    base: PreparedRun
    variants: list[VariantSpec]
    runs: list[PreparedRun]


@dataclass
class MatrixOutcome:
    """What `run_matrix` hands back to the CLI."""

    record: MatrixRecord
    path: Path
    report: MatrixReport
    outcomes: list[RunOutcome] = field(default_factory=list)
    outputs: list[OutputFile] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The worst of the variants' gates (0 ok, 1 a gate failed, 3 errors)."""
        codes = [o.gate.exit_code for o in self.outcomes if o.gate is not None]
        return 3 if 3 in codes else max(codes, default=0)

    @property
    def gates(self) -> list[tuple[str, GateOutcome]]:
        """(variant label, its gate verdicts), for the variants that reached their gates."""
        pairs = zip(self.record.variants, self.outcomes, strict=False)
        return [(v.label, o.gate) for v, o in pairs if o.gate is not None]


def _refuse(opts: RunOptions) -> None:
    for key, flag in REFUSED.items():
        if getattr(opts, key):
            raise ConfigError(
                f"{flag} does not apply to a matrix run (several --agent-model/--instructions, "
                "or eval.yaml `variants:`)",
                hint="run one variant at a time for it, or drop the flag",
            )
    if opts.executor not in (None, "local"):
        raise ConfigError.at("", "--executor", "a matrix run plays on this machine only")


def prepare_matrix(
    opts: RunOptions,
    variants: list[VariantSpec],
    cwd: Path,
    ask: Callable[[str, bool], bool] | None,
    base: PreparedRun | None = None,
) -> PreparedMatrix:
    """Resolve the suite once, then one prepared run per variant (its own agent, target and
    plan; the tasks, evaluators and settings shared)."""
    _refuse(opts)
    first = variants[0]
    if base is None:
        base = prepare_run(
            dataclasses.replace(
                opts, agent_model=first.model or opts.agent_model, instructions=_flag(first, opts)
            ),
            cwd,
            ask,
        )
    agent = base.spec.agent
    if (agent.target or "local") != "local":
        raise ConfigError.at(
            "",
            "variants",
            f"agent '{agent.name}' runs as target '{agent.target}': variants change the model "
            "or instructions of a prompt agent (target local)",
        )
    runs = []
    planner = CallLayer(
        base.spec.project_dir, base.settings.model_copy(update={"cache_enabled": False})
    )
    for variant in variants:
        update: dict[str, object] = {}
        if variant.model:
            update["model"] = variant.model
        if variant.instructions is not None:
            update["instructions"] = variant.instructions
        v_agent = agent.model_copy(update=update)
        spec = dataclasses.replace(base.spec, agent=v_agent)
        plan = plan_run(
            spec.tasks,
            spec.dataset,
            v_agent,
            spec.evaluators,
            spec.judge_model or "",
            spec.repeat,
            planner,
            spec.simulation,
        )
        runs.append(
            dataclasses.replace(
                base,
                opts=dataclasses.replace(base.opts, outputs=[], agent_model=v_agent.model),
                spec=spec,
                plan=plan,
                store=None,
                notices=[],
                target=make_target(v_agent.target, v_agent),
            )
        )
    return PreparedMatrix(base=base, variants=variants, runs=runs)


def _flag(variant: VariantSpec, opts: RunOptions) -> str | None:
    """The `--instructions` value that resolves the base agent as the variant's own flag would
    (an ad-hoc agent, as one `--instructions` makes)."""
    source = variant.instructions_source
    if source is None:
        return opts.instructions
    return source if source.startswith("@") else variant.instructions


class _VariantSink:
    """One variant's progress, folded into the command's one progress line."""

    def __init__(self, shared: _MatrixProgress, label: str) -> None:
        self.shared = shared
        self.label = label
        self.progress: Progress | None = None

    def start(self, progress: Progress, title: str) -> None:
        self.progress = progress
        self.shared.started(self)

    def update(self, progress: Progress, last: str) -> None:
        self.progress = progress
        self.shared.update(f"{self.label}: {last}")

    def notice(self, message: str) -> None:
        self.shared.sink.notice(message)

    def finish(self, progress: Progress) -> None:
        self.progress = progress
        self.shared.finished(self)


class _MatrixProgress:
    def __init__(
        self, sink: ProgressSink, variants: int, tasks: int, units: int, state: CallState
    ) -> None:
        self.sink = sink
        self.parts: list[_VariantSink] = []
        self.total = Progress(total=units)
        self.units = units
        self.variants = variants
        self.tasks = tasks
        self.state = state
        self.open = 0

    def part(self, label: str) -> _VariantSink:
        part = _VariantSink(self, label)
        self.parts.append(part)
        return part

    def _sum(self) -> None:
        ps = [p.progress for p in self.parts if p.progress is not None]
        self.total.total = max(self.units, sum(p.total for p in ps))
        self.total.done = sum(p.done for p in ps)
        self.total.counts = OutcomeCounts.total(p.counts for p in ps)
        self.total.skipped = sum(p.skipped for p in ps)
        self.total.cost_usd = self.state.ledger.spent_usd

    def started(self, part: _VariantSink) -> None:
        self.open += 1
        self._sum()
        if self.open == 1:
            title = f"Running {self.tasks} tasks × {self.variants} variants"
            self.sink.start(self.total, title)

    def update(self, last: str) -> None:
        self._sum()
        self.sink.update(self.total, last)

    def finished(self, part: _VariantSink) -> None:
        self.open -= 1
        self._sum()
        if self.open == 0:
            self.sink.finish(self.total)


def run_matrix(prepared: PreparedMatrix, sink: ProgressSink) -> MatrixOutcome:
    """Play every variant in one event loop, then write matrix.json and the --output files."""
    return run_loop(_run(prepared, sink))


async def _run(prepared: PreparedMatrix, sink: ProgressSink) -> MatrixOutcome:
    base = prepared.base
    project = base.spec.project_dir
    matrix_id = new_id()
    folder = matrices_dir(project) / matrix_id
    folder.mkdir(parents=True, exist_ok=True)
    record = MatrixRecord(
        id=matrix_id,
        name=base.inputs.suite["name"],
        started_at=utc_now_iso(),
        variants=prepared.variants,
    )
    write_json_atomic(folder / "matrix.json", record.model_dump(mode="json"))
    shared = CallState(project, base.settings)
    units = sum(len(r.spec.tasks) * r.spec.repeat for r in prepared.runs)
    progress = _MatrixProgress(sink, len(prepared.runs), len(base.spec.tasks), units, shared)
    outcomes = [RunOutcome(inputs=run.inputs, plan=run.plan) for run in prepared.runs]
    try:
        jobs = [
            _variant(run, variant, outcome, matrix_id, shared, progress.part(variant.label))
            for run, variant, outcome in zip(
                prepared.runs, prepared.variants, outcomes, strict=True
            )
        ]
        failures = await asyncio.gather(*jobs, return_exceptions=True)
    finally:
        await shared.aclose()
    failure = next((f for f in failures if isinstance(f, BaseException)), None)
    results = [
        load_results(o.results_path) if o.results_path is not None else None for o in outcomes
    ]
    record = _finished(record, results, base.seed, failure)
    write_json_atomic(folder / "matrix.json", record.model_dump(mode="json"))
    report = build_matrix_report(record, results)
    done = MatrixOutcome(record, folder / "matrix.json", report, outcomes)
    if failure is not None:
        if isinstance(failure, AgentoptError):
            raise failure
        if isinstance(failure, asyncio.CancelledError | KeyboardInterrupt):
            raise Interrupted("interrupted: finished tasks of every variant are saved")
        raise failure
    done.outputs = write_matrix_outputs(report, base.outputs)
    return done


async def _variant(
    run: PreparedRun,
    variant: VariantSpec,
    outcome: RunOutcome,
    matrix_id: str,
    shared: CallState,
    sink: ProgressSink,
) -> None:
    spec = run.spec
    layer = CallLayer(
        spec.project_dir, run.settings, on_notice=outcome.notices.append, state=BranchState(shared)
    )
    cache = EvaluatorCache(
        BuildContext(judge_model=spec.judge_model, layer=layer, project_dir=spec.project_dir)
    )
    store = RunStore(spec.project_dir)
    try:
        await _execute(
            outcome,
            run.target,
            run.opts,
            spec,
            cache,
            layer,
            store,
            sink,
            run.seed,
            [],
            LocalExecutor(),
            variant=VariantTag(matrix=matrix_id, label=variant.label),
        )
    finally:
        await layer.aclose()


def _score(task_mean: float | None, task_score: float | None) -> float | None:
    return task_mean if task_mean is not None else task_score


def best_variant(
    labels: list[str], results: list[RunResults | None], seed: int = 0
) -> BestVariant | None:
    """The variant with the highest run score, and the paired interval of its lead over the
    runner-up on the tasks both scored (beyond noise when the interval excludes 0)."""
    scored = [
        (r.summary.score, i)
        for i, r in enumerate(results)
        if r is not None and r.summary.score is not None
    ]
    if not scored:
        return None
    ranked = sorted(scored, key=lambda s: (-s[0], s[1]))
    best_i = ranked[0][1]
    if len(ranked) < 2:
        return BestVariant(label=labels[best_i])
    second_i = ranked[1][1]
    best, second = results[best_i], results[second_i]
    assert best is not None and second is not None
    a = {t.name: s for t in second.tasks if (s := _score(t.mean, t.score)) is not None}
    b = {t.name: s for t in best.tasks if (s := _score(t.mean, t.score)) is not None}
    delta = paired_bootstrap_ci(a, b, seed)
    if delta is None:
        return BestVariant(label=labels[best_i], runner_up=labels[second_i])
    return BestVariant(
        label=labels[best_i],
        runner_up=labels[second_i],
        delta=delta.mean,
        ci=[delta.low, delta.high],
        shared=len(set(a) & set(b)),
        beyond_noise=delta.low > 0,
    )


def _finished(
    record: MatrixRecord,
    results: list[RunResults | None],
    seed: int,
    failure: BaseException | None,
) -> MatrixRecord:
    runs = []
    for variant, res in zip(record.variants, results, strict=True):
        if res is None:
            continue
        runs.append(VariantScore.of(variant.label, res))  # copied, never recounted
    status = "completed" if failure is None else "interrupted"
    return record.model_copy(
        update={
            "runs": runs,
            "status": status,
            "finished_at": utc_now_iso(),
            "best": best_variant([v.label for v in record.variants], results, seed),
        }
    )


def start_from_best_variant(
    project: Path, ref: str, agent: AgentDefinition, notices: list[str]
) -> AgentDefinition:
    """The agent with the best variant's model and instructions (`optimize --from-matrix`)."""
    ids = list_matrix_ids(project)
    matrix_id = ids[-1] if ref == "latest" and ids else ref
    folder = Path(project) / ".agentopt" / MATRICES / matrix_id
    if matrix_id not in ids:
        known = ", ".join(ids[-5:]) or "none"
        raise ConfigError.at(
            "", "--from-matrix", f"no matrix run '{ref}' in {folder.parent} (recent: {known})"
        )
    record = load_matrix(folder / "matrix.json")
    best = record.best
    spec = record.spec_of(best.label) if best is not None else None
    if best is None or spec is None:
        raise ConfigError.at(
            "", "--from-matrix", f"matrix {matrix_id} has no best variant (no variant scored)"
        )
    update: dict[str, object] = {}
    if spec.model:
        update["model"] = spec.model
    if spec.instructions is not None:
        update["instructions"] = spec.instructions
    notices.append(f"Starting from variant '{spec.label}' of matrix {matrix_id}. {best.line()}")
    return agent.model_copy(update=update)
