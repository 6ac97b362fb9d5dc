"""Running candidates on tasks, through the run engine (`RunEngine.run_unit`) — never a second
evaluation loop.

Errors are their own class, never a score: a unit that ends in an agent or evaluator error is
run once more (what succeeded comes from the model-call cache, so it is cheap); if it fails
again it stays an error, is left out of every mean, and is counted (`EvaluationErrors`).

Every finished unit (candidate × task) is journaled and kept in a `UnitBook`; a unit already
in the book is never run again, and two proposals that need the same unit share one run.
The call budget (`--budget-calls`, `budget.CallBudget`) admits each unit before it starts:
in-flight units finish, no new one starts once the budget cannot hold it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from agentopt.agents.base import DEFAULT_TURN_TIMEOUT_S, AgentTarget, make_target
from agentopt.contracts.optimize_job import EvaluationErrors
from agentopt.contracts.optimize_journal import ProposalEntry, UnitEntry
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task import Dataset, Task
from agentopt.contracts.task_record import TokenCount, UnitResult
from agentopt.contracts.usage import Usage
from agentopt.core.errors import BudgetExceeded, Interrupted
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.build import EvaluatorCache
from agentopt.models.call import CallLayer
from agentopt.models.providers.registry import is_free
from agentopt.workflows.events import NullSink
from agentopt.workflows.executor import Executor, LocalExecutor
from agentopt.workflows.optimize.budget import CallBudget
from agentopt.workflows.optimize.journal import JobStore
from agentopt.workflows.optimize.race import Race
from agentopt.workflows.optimize.splits import Splits
from agentopt.workflows.run.engine import EngineSpec, RunEngine, UnitRunner
from agentopt.workflows.run.simulated_user import Simulation

T = TypeVar("T")
ERROR_RERUNS = 1
"""Extra runs of a unit that ended in an error (a timeout on a loaded machine, a 429 storm)."""


@dataclass
class UnitBook:
    """(candidate id, task name) → the candidate's run of the task."""

    units: dict[tuple[str, str], UnitResult] = field(default_factory=dict)

    def get(self, cand: str, task: str) -> UnitResult | None:
        return self.units.get((cand, task))

    def put(self, cand: str, task: str, unit: UnitResult) -> None:
        self.units[(cand, task)] = unit

    def scores(self, cand: str, names: Sequence[str]) -> dict[str, TaskScore]:
        return {n: u.score for n in names if (u := self.units.get((cand, n))) is not None}

    def load(self, store: JobStore) -> dict[int, ProposalEntry]:
        """Rebuild from the journal (--resume); the journal's proposals by number, which the
        search replays (read here, once, before this session writes a line: reading the
        journal again when the search starts waited on its writer and parsed every unit)."""
        proposals: dict[int, ProposalEntry] = {}
        for e in store.entries():
            if isinstance(e, UnitEntry):
                self.put(e.candidate, e.task, e.unit)
            elif isinstance(e, ProposalEntry):
                proposals[e.number] = e
        return proposals


class StopRequested(Interrupted):
    """Ctrl-C was pressed: no new unit starts; units in flight finish and are journaled."""


def agent_cost(layer: CallLayer, model: str | None, tokens: TokenCount) -> float:
    """What a unit's agent tokens cost at list price (0 for local and unpriced models).

    Computed from token counts rather than from the calls, so a cached rerun shows the cost
    of the configuration, not of this session."""
    if not model:
        return 0.0
    try:
        ref = layer.resolve(model)
    except Exception:
        return 0.0
    if is_free(ref.type):
        return 0.0
    usage = Usage(input_tokens=tokens.input, output_tokens=tokens.output)
    return layer.prices.cost([ref.model, model], usage) or 0.0


@dataclass
class EvalContext:
    """Shared by every candidate run of a job."""

    store: JobStore
    book: UnitBook
    splits: Splits
    layer: CallLayer
    evaluators: list[EvaluatorUse]
    judge_model: str
    cache: EvaluatorCache
    budget: CallBudget
    real_tools: bool
    turn_timeout_s: float = DEFAULT_TURN_TIMEOUT_S
    executor: Executor = field(default_factory=LocalExecutor)
    """Who plays the units (this process, or Ray workers)."""
    simulation: Simulation | None = None
    """Simulated users and the evaluation level (eval.yaml options), as in eval run."""
    stop_requested: bool = False
    """Set by the first Ctrl-C."""
    inflight: dict[tuple[str, str], asyncio.Future[UnitResult]] = field(default_factory=dict)


class CandidateRun:
    """One candidate configuration, its agent target opened on first need and closed after."""

    def __init__(self, ctx: EvalContext, cand_id: str, definition: AgentDefinition) -> None:
        self.ctx = ctx
        self.cand_id = cand_id
        self.definition = definition
        self._target: AgentTarget | None = None
        self._engines: dict[int, RunEngine] = {}
        self._runners: list[UnitRunner] = []

    async def __aenter__(self) -> CandidateRun:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        runners, self._runners = self._runners, []
        for runner in runners:
            await runner.aclose()
        if self._target is not None:
            target, self._target = self._target, None
            await target.aclose()

    def _engine(self, dataset: Dataset) -> RunEngine:
        key = id(dataset)
        engine = self._engines.get(key)
        if engine is None:
            if self._target is None:
                self._target = make_target(self.definition.target, self.definition)
            spec = EngineSpec(
                project_dir=self.ctx.store.project,
                dataset=dataset,
                tasks=[],
                agent=self.definition,
                evaluators=self.ctx.evaluators,
                judge_model=self.ctx.judge_model,
                real_tools=self.ctx.real_tools,
                turn_timeout_s=self.ctx.turn_timeout_s,
                candidate_id=self.cand_id,
                simulation=self.ctx.simulation,
            )
            engine = RunEngine(spec, self._target, self.ctx.layer, None, NullSink(), self.ctx.cache)
            engine.runner = self.ctx.executor.runner(engine)
            self._runners.append(engine.runner)
            self._engines[key] = engine
        return engine

    @property
    def window(self) -> int:
        """How many of its units run at once: each holds an agent slot (`Race.window`)."""
        return self.ctx.layer.limit("agent")

    async def unit(self, name: str, *, final: bool = False) -> UnitResult:
        """The candidate on one task: from the book, a run in flight, or a new run."""
        ctx = self.ctx
        key = (self.cand_id, name)
        known = ctx.book.get(*key)
        if known is not None:
            return known
        pending = ctx.inflight.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[UnitResult] = asyncio.get_running_loop().create_future()
        ctx.inflight[key] = future
        try:
            # The unit holds an agent slot from its admission by the budget to its last judge
            # verdict; the budget counts it in flight meanwhile (budget.py).
            async with ctx.layer.slot("agent"):
                if ctx.stop_requested:
                    raise StopRequested("interrupted: no new evaluation was started")
                task, dataset = ctx.splits.task(name)
                runner = self._engine(dataset).runner
                unit = await self._admitted(runner, task, final)
                for _ in range(ERROR_RERUNS):
                    if not unit.score.errors() or ctx.stop_requested:
                        break
                    try:
                        unit = await self._admitted(runner, task, final)
                    except BudgetExceeded:
                        break  # no room for a second try: the error stays (and is counted)
            ctx.store.append(UnitEntry.of(self.cand_id, name, unit))
            ctx.book.put(*key, unit)
            future.set_result(unit)
            return unit
        except BaseException as exc:
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            ctx.inflight.pop(key, None)

    async def _admitted(self, runner: UnitRunner, task: Task, final: bool) -> UnitResult:
        """One run of the unit (here or on a cluster worker), admitted by the call budget
        first (and counted in flight)."""
        budget = self.ctx.budget
        await budget.admit(final=final)
        try:
            if self.ctx.stop_requested:
                raise StopRequested("interrupted: no new evaluation was started")
            return await runner.run_unit(task, 0)
        finally:
            await budget.release()

    async def evaluate(self, names: Sequence[str], *, final: bool = False) -> dict[str, UnitResult]:
        """Every named task (concurrently, bounded by the job's agent slots), in order."""
        results = await gather_settled([self.unit(n, final=final) for n in names])
        return dict(zip(names, results, strict=True))

    async def race(self, names: Sequence[str], race: Race) -> dict[str, UnitResult]:
        """Like `evaluate`, but tasks that `race` no longer admits are skipped: the result
        holds the tasks that ran."""

        async def one(index: int, name: str) -> UnitResult | None:
            unit = None
            try:
                if await race.admits(index):
                    unit = await self.unit(name)
                return unit
            finally:
                race.settle(index, unit)

        results = await gather_settled([one(i, n) for i, n in enumerate(names)])
        return {n: u for n, u in zip(names, results, strict=True) if u is not None}


async def gather_settled(coros: Sequence[Awaitable[T]]) -> list[T]:
    """Results in order; when some fail, the others still finish (and are journaled) before
    the first failure is raised — in-flight work is never thrown away."""
    results = await asyncio.gather(*coros, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return list(results)  # type: ignore[arg-type]


def mean_without_errors(units: Sequence[UnitResult | None]) -> tuple[float | None, int]:
    """(mean score of the units with a real verdict, how many ended in an error). A unit that
    failed is not a 0: it is left out and counted; None when no unit has a score."""
    done = [u for u in units if u is not None]
    errors = sum(1 for u in done if u.score.errors())
    values = [u.score.score for u in done if not u.score.errors() and u.score.score is not None]
    return (sum(values) / len(values) if values else None), errors


def error_summary(book: UnitBook) -> EvaluationErrors:
    """Every unit of the job that ended in an error, by code and candidate."""
    summary = EvaluationErrors()
    for (cand, _task), unit in sorted(book.units.items()):
        found = unit.score.errors()
        if not found:
            continue
        summary.units += 1
        if cand not in summary.candidates:
            summary.candidates.append(cand)
        for code, message in found:
            summary.by_code[code] = summary.by_code.get(code, 0) + 1
            summary.first = summary.first or message
    return summary
