"""The run engine: plays every (task, repeat) against the agent, scores each turn (or each
whole conversation) with the selected evaluators, and journals each finished unit (files.md §7,
evaluators.md §5–6).

A task without scripted turns that asks for a simulated user (`workflows/run/simulated_user`)
is played as a conversation: each answered turn is journaled in `turns.jsonl` as it comes, so
`--resume` puts the answered turns back into the target and goes on from the next one.

Units are pulled lazily by as many workers as the call layer's agent pool allows, so memory
holds only what is in flight; the pools themselves (agent runs, judge calls) are the call
layer's, and nothing here holds a limit of its own.
A failing task is data; systemic failures (budget, too many errors, Ctrl-C) stop new work,
let in-flight units finish or cancel cleanly, and propagate.

`run_unit` is the unit of work. Who plays it is the `UnitRunner`: the engine itself (in this
process), or a cluster runner that plays the same `run_unit` on a Ray worker (`workflows/cluster`)
— the scheduling, journal and counting above stay here on the driver either way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from agentopt.agents.base import DEFAULT_TURN_TIMEOUT_S, AgentTarget, RunConfig
from agentopt.contracts.run_journal import RunJournalEntry, TurnJournalEntry
from agentopt.contracts.simulation import SIMULATOR_FAILED, UserReply
from agentopt.contracts.task import Dataset, Task
from agentopt.contracts.task_record import UnitResult
from agentopt.contracts.transcript import Transcript, TurnError, TurnResult
from agentopt.core.errors import AgentoptError, TooManyErrors
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.evaluators.aggregate import score_transcript
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.build import EvaluatorCache
from agentopt.models.call import CallLayer
from agentopt.models.call_trail import open_trail
from agentopt.workflows.events import Progress, ProgressSink
from agentopt.workflows.run.records import repeat_record
from agentopt.workflows.run.scoring import score_unit, unit_evaluators
from agentopt.workflows.run.simulated_user import SimulatedUser, Simulation
from agentopt.workflows.run.store import Played, RunStore
from agentopt.workflows.run.unit_replay import Unit, UnitReplay
from agentopt.workflows.suite_inputs import SuiteInputs


@dataclass
class EngineSpec:
    """Everything the engine needs, already resolved and validated."""

    project_dir: Path
    dataset: Dataset
    tasks: Sequence[Task]
    agent: AgentDefinition
    evaluators: list[EvaluatorUse]
    judge_model: str | None
    repeat: int = 1
    real_tools: bool | None = None
    """None: tool mocks first, then real tools (eval run); see agents.RunConfig."""
    turn_timeout_s: float = DEFAULT_TURN_TIMEOUT_S
    stop_after_errors: int | None = None
    """Explicit --max-errors: stop scheduling once more errors than this occurred."""
    candidate_id: str = "baseline"
    simulation: Simulation | None = None
    """Simulated users and the evaluation level; None: item level, and the judge model plays
    the simulated users of tasks that ask for one."""

    @classmethod
    def of(
        cls,
        inputs: SuiteInputs,
        tasks: Sequence[Task],
        *,
        repeat: int = 1,
        turn_timeout_s: float = DEFAULT_TURN_TIMEOUT_S,
        stop_after_errors: int | None = None,
        simulation: Simulation | None = None,
    ) -> EngineSpec:
        """The spec of a run of `tasks` with the suite's agent, dataset and evaluators."""
        return cls(
            project_dir=inputs.project_dir,
            dataset=inputs.dataset,
            tasks=tasks,
            agent=inputs.agent,
            evaluators=inputs.evaluators,
            judge_model=inputs.judge_model,
            repeat=repeat,
            turn_timeout_s=turn_timeout_s,
            stop_after_errors=stop_after_errors,
            simulation=simulation,
        )

    @property
    def simulator(self) -> Simulation:
        return self.simulation or Simulation(model=self.judge_model or "")

    def replay_parts(self) -> dict[str, Any]:
        """What of this spec decides a unit besides its task (`unit_replay`), as JSON."""
        document = self.dataset.document or {}
        return {
            "agent": self.agent.model_dump(mode="json"),
            "judge_model": self.judge_model,
            "dataset": {
                "format": self.dataset.format,
                "name": self.dataset.name,
                "version": self.dataset.version,
                "default_evaluators": self.dataset.model_dump(mode="json")["default_evaluators"]
                if self.dataset.default_evaluators
                else None,
                # An M365 document's settings (its items are the tasks, keyed one by one).
                "document": {k: v for k, v in document.items() if k != "items"},
            },
            "real_tools": self.real_tools,
            "turn_timeout_s": self.turn_timeout_s,
            "candidate_id": self.candidate_id,
            "simulation": None if self.simulation is None else vars(self.simulation),
        }


@dataclass
class UnitJournal:
    """Where a simulated conversation's steps go (`turns.jsonl`) and what an earlier session
    played of it; each answered turn also shows on the progress line."""

    store: RunStore
    pos: int
    repeat: int
    played: Played
    sink: ProgressSink
    progress: Progress
    label: str = ""

    async def turn(self, number: int, turn: TurnResult) -> None:
        await self._append(
            TurnJournalEntry(task=self.pos, repeat=self.repeat, number=number, turn=turn)
        )
        self.sink.update(self.progress, f"{self.label}: turn {number} answered")

    async def reply(self, after: int, reply: UserReply) -> None:
        await self._append(
            TurnJournalEntry(task=self.pos, repeat=self.repeat, number=after, reply=reply)
        )

    async def _append(self, entry: TurnJournalEntry) -> None:
        # The fsync'd append runs off the event loop: other units keep going meanwhile.
        await asyncio.to_thread(self.store.append_turn, entry)


class UnitRunner(Protocol):
    """Plays units: `RunEngine` in this process, or a cluster runner on Ray workers."""

    async def run_unit(
        self, task: Task, repeat: int, answered: Transcript | None = None
    ) -> UnitResult: ...

    async def aclose(self) -> None: ...


def prepare_evaluators(spec: EngineSpec, cache: EvaluatorCache) -> None:
    """Build every evaluator any task will use before the first call, so a bad name or
    definition is a configuration error (exit 2) rather than a failure mid-run."""
    sim = spec.simulator
    for task in spec.tasks:
        simulated = sim.plays(task)
        turns = sim.turns_for(task) if simulated else len(task.turns)
        for uses in unit_evaluators(
            task, spec.evaluators, spec.dataset, level=sim.level, simulated=simulated, turns=turns
        ):
            for use in uses:
                cache.get(use)


class RunEngine:
    """Runs units and journals them."""

    def __init__(
        self,
        spec: EngineSpec,
        target: AgentTarget,
        layer: CallLayer,
        store: RunStore | None,
        sink: ProgressSink,
        evaluators: EvaluatorCache,
        runner: UnitRunner | None = None,
    ) -> None:
        self.spec = spec
        self.target = target
        self.layer = layer
        self.store = store
        self.sink = sink
        self.evaluators = evaluators
        self.cancel = asyncio.Event()
        self.runner: UnitRunner = runner or self
        self._errors = 0
        self._live: Progress | None = None
        """The run's progress while `run` runs: what is answering or judging right now."""
        self.replay: UnitReplay | None = None
        """Set by `eval run` when units of the run may be replayed (`unit_replay`)."""

    @contextlib.contextmanager
    def _phase(self, name: Literal["answering", "judging"]) -> Iterator[None]:
        """Count a unit in `name` while it is there, so the progress line can say what a
        silent minute is spent on (a slow judge, a slow agent)."""
        live = self._live
        if live is not None:
            setattr(live, name, getattr(live, name) + 1)
        try:
            yield
        finally:
            if live is not None:
                setattr(live, name, getattr(live, name) - 1)

    def units(
        self, done: set[tuple[int, int]], answered: dict[tuple[int, int], Transcript] | None = None
    ) -> Iterator[Unit]:
        """The units still to do, each with the journaled answers when only its evaluators
        must run again (its task is read when it is played: a replayed unit needs none)."""
        answered = answered or {}
        for pos in range(len(self.spec.tasks)):
            for r in range(self.spec.repeat):
                if (pos, r) not in done:
                    yield pos, r, answered.get((pos, r))

    async def aclose(self) -> None:
        """Nothing to release as a runner: the target's owner closes the target."""

    async def run_unit(
        self,
        task: Task,
        repeat: int,
        answered: Transcript | None = None,
        *,
        journal: UnitJournal | None = None,
    ) -> UnitResult:
        """Agent → evaluators → scores → record, for one (task, repeat); with `answered` (a
        resumed unit whose evaluators failed) the agent is not asked again.

        With `journal`, a simulated conversation goes on from what an earlier session played
        and journals each step.
        """
        sim = self.spec.simulator
        simulated = sim.plays(task)
        user = None
        if simulated and answered is None:
            known = journal.played.replies if journal else None
            on_reply = journal.reply if journal else None
            user = SimulatedUser(self.layer, sim, task, repeat, known=known, on_reply=on_reply)
        config = RunConfig(
            calls=self.layer,
            repeat=repeat,
            turn_timeout_s=self.spec.turn_timeout_s,
            real_tools=self.spec.real_tools,
            candidate_id=self.spec.candidate_id,
            cancel=self.cancel,
            user=user,
            played=list(journal.played.turns) if journal else [],
            on_turn=journal.turn if journal else None,
        )
        if answered is not None:
            transcript = answered
        else:
            with self._phase("answering"):
                transcript = await self.target.run(task, config)
        if user is not None:
            transcript = _ended(transcript, user)
        with self._phase("judging"):
            score = await score_unit(
                task,
                transcript,
                repeat=repeat,
                configured=self.spec.evaluators,
                dataset=self.spec.dataset,
                cache=self.evaluators,
                level=sim.level,
                simulated=simulated,
                agent_name=self.spec.agent.name,
            )
        record = repeat_record(task, transcript, score, level=sim.level)
        return UnitResult(score=score, record=record, transcript=transcript)

    def failed_unit(self, task: Task, repeat: int, code: str, message: str) -> UnitResult:
        """A unit that could not be played at all, as an agent error on its first turn (an
        error, never a score; --resume runs it again)."""
        error = TurnError(code=code, message=message)
        turn = TurnResult(query=task.turns[0].query if task.turns else "", error=error)
        transcript = Transcript(turns=[turn], target=self.target.name)
        score = score_transcript(
            task.name, transcript, [[]], n_turns=len(task.turns), repeat=repeat
        )
        return UnitResult(
            score=score, record=repeat_record(task, transcript, score), transcript=transcript
        )

    async def run(self, progress: Progress) -> None:
        """Run every unit not yet in the journal; the store counts each as it is journaled
        (`RunStore.tally`), so nothing per unit stays in memory here."""
        if self.store is None:
            raise ValueError("RunEngine.run needs a RunStore (run_unit alone does not)")
        store = self.store
        progress.meter = self.layer.meter
        self._live = progress
        pending = self.units(store.done_keys(), store.reusable_transcripts())
        replay = self.replay if self.runner is self else None
        replayable: AsyncIterator[Unit] | None = None
        if replay is not None:

            def replayed(count: int) -> None:
                progress.done += count
                progress.counts = store.tally.counts
                self.sink.update(progress, f"{count} units replayed from the cache")

            replayable = replay.playable(pending, store.append_lines, self.layer.ledger, replayed)
        played = store.played()
        sim = self.spec.simulator
        lock = asyncio.Lock()
        stop: list[BaseException] = []

        async def worker() -> None:
            while not stop and not self.cancel.is_set():
                async with lock:
                    if replayable is None:
                        next_unit = next(pending, None)
                    else:
                        next_unit = await anext(replayable, None)
                if next_unit is None:
                    return
                pos, r, answered = next_unit
                task = self.spec.tasks[pos]
                # A trail per unit (never the last unit's): only a unit the agent answered
                # here is kept, not one whose journaled answers are re-scored.
                trail = open_trail() if replay is not None else None
                journal = None
                if sim.plays(task) and answered is None:
                    before = played.get((pos, r)) or Played()
                    journal = UnitJournal(store, pos, r, before, self.sink, progress, task.name)
                try:
                    if self.runner is self:
                        unit = await self.run_unit(task, r, answered, journal=journal)
                    else:
                        # On a cluster a simulated conversation is journaled as one unit:
                        # --resume plays it again from its start (its calls cached).
                        unit = await self.runner.run_unit(task, r, answered)
                except AgentoptError as err:
                    stop.append(err)
                    self.cancel.set()
                    return
                # Queued for the writer threads: the loop goes on at once.
                line, at = store.append(RunJournalEntry.of(pos, r, unit))
                if trail is not None and replay is not None and answered is None:
                    replay.keep(replay.key(pos, r), store.run_id, at, line, unit, trail)
                score = unit.score
                if unit.transcript is not None and score.errors() and not score.agent_failed:
                    # What --resume re-scores: only a unit whose evaluators failed needs it.
                    store.append_answer(pos, r, unit.transcript)
                self._errors += len(score.errors())
                progress.done += 1
                progress.counts = store.tally.counts
                progress.cost_usd = self.layer.ledger.spent_usd
                self.sink.update(progress, f"{task.name}: {score.status}")
                limit = self.spec.stop_after_errors
                if limit is not None and self._errors > limit:
                    stop.append(
                        TooManyErrors(
                            f"{self._errors} agent/evaluator errors exceed --max-errors {limit}",
                            hint="fix the failing calls (see the errors above) or raise "
                            "--max-errors",
                        )
                    )
                    self.cancel.set()
                    return

        workers = max(1, min(self.layer.limit("agent"), progress.total - progress.done or 1))
        async with asyncio.TaskGroup() as group:
            for _ in range(workers):
                group.create_task(worker())
        if stop:
            raise stop[0]


def _ended(transcript: Transcript, user: SimulatedUser) -> Transcript:
    """The transcript with how its simulated conversation ended. A simulated user that gave no
    usable reply leaves the conversation unfinished: a failed last turn (`simulatorFailed`), so
    the unit is an error (never scored) and `--resume` goes on from the turns before it."""
    end = user.end(transcript.turns)
    turns = list(transcript.turns)
    if end.reason == "simulator_error":
        failed = TurnError(code=SIMULATOR_FAILED, message=end.explanation)
        turns.append(TurnResult(query="", simulated=True, error=failed))
    return transcript.model_copy(update={"turns": turns, "simulation": end})
