"""From (task, transcript, scores) to the records of the run's journal and results.json.

One journal line per finished (task, repeat) holds both the record and the `TaskScore` the
summary needs, so a resumed run rebuilds everything from the journal alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentopt.contracts.scores import TaskScore, TurnScore, worst
from agentopt.contracts.task import Task
from agentopt.contracts.task_record import RepeatOutcome, TaskOutcome, TokenCount, TurnOutcome
from agentopt.contracts.transcript import Transcript
from agentopt.evaluators.diagnostics_out import turn_diagnostics
from agentopt.evaluators.run_stats import RepeatStats


def repeat_record(
    task: Task, transcript: Transcript, score: TaskScore, *, level: str = "item"
) -> RepeatOutcome:
    """The record of one (task, repeat). Turns the agent never reached (after a failed turn)
    are kept with their query, no answer and their `turnSkipped` error. A conversation scored
    as a whole (`level` conversation, more than one turn or simulated) keeps its verdicts at
    the top and only the exchanges in `turns`."""
    turns = [
        _turn(transcript, i, ts) if i < len(transcript.turns) else _skipped(task, i, ts)
        for i, ts in enumerate(score.turns)
    ]
    single = turns[0].diagnostics if len(turns) == 1 else None
    last = turns[-1] if turns else TurnOutcome()
    conversation = task.is_multi_turn or transcript.simulation is not None
    whole = level == "conversation" and conversation
    verdicts = last.evaluators if whole or len(turns) == 1 else []
    if whole:
        turns = [t.model_copy(update={"evaluators": [], "score": None}) for t in turns]
    return RepeatOutcome(
        repeat=score.repeat,
        status=score.status,
        score=score.score,
        response=last.response,
        tool_calls=[c for t in turns for c in t.tool_calls],
        citations=[c for t in turns for c in t.citations],
        evaluators=verdicts,
        error=score.error,
        turns=turns if conversation else None,
        latency_s=round(transcript.latency_s, 4),
        tokens=TokenCount.of(transcript.usage),
        simulation=transcript.simulation,
        evaluation_level="conversation" if whole else None,
        diagnostics=None if conversation else single,
    )


def _turn(transcript: Transcript, index: int, score: TurnScore) -> TurnOutcome:
    turn = transcript.turns[index]
    return TurnOutcome(
        query=turn.query,
        response=turn.response,
        tool_calls=list(turn.tool_calls),
        citations=list(turn.citations),
        status=score.status,
        score=score.score,
        evaluators=list(score.results),
        error=turn.error,
        latency_s=round(turn.latency_s, 4),
        tokens=TokenCount.of(turn.usage),
        simulated=turn.simulated,
        diagnostics=turn_diagnostics(turn, score.results),
    )


def _skipped(task: Task, index: int, score: TurnScore) -> TurnOutcome:
    return TurnOutcome(query=task.turns[index].query, status=score.status, error=score.error)


def task_record(
    task: Task, repeats: Sequence[RepeatOutcome], stats: RepeatStats | None
) -> TaskOutcome:
    """Merge the repeats of one task into its results.json entry (the first repeat's
    transcript is shown; every repeat is kept under `repeats` when there are several)."""
    first = repeats[0]
    if len(repeats) == 1:  # nearly every task: its repeat's own figures, nothing to merge
        ordered: Sequence[RepeatOutcome] = repeats
        mean, status, tokens = first.score, first.status, first.tokens
        latency = round(first.latency_s, 4)
    else:
        ordered = sorted(repeats, key=lambda r: r.repeat)
        first = ordered[0]
        scores = [r.score for r in ordered if r.score is not None]
        mean = (sum(scores) / len(scores)) if scores else None
        status = worst(r.status for r in ordered)
        latency = round(sum(r.latency_s for r in ordered) / len(ordered), 4)
        tokens = TokenCount(
            input=sum(r.tokens.input for r in ordered),
            output=sum(r.tokens.output for r in ordered),
        )
    return TaskOutcome(
        name=task.name,
        index=task.index,
        query=task.query or (first.turns[0].query if first.turns else ""),
        category=task.category,
        tags=list(task.tags),
        ground_truth=task.ground_truth,
        response=first.response,
        tool_calls=first.tool_calls,
        citations=first.citations,
        status=status,
        score=mean,
        evaluators=first.evaluators,
        error=first.error,
        turns=first.turns,
        repeats=list(ordered) if len(ordered) > 1 else None,
        mean=stats.mean if stats else mean,
        std=stats.std if stats else None,
        pass_fraction=stats.pass_fraction if stats else None,
        flaky=bool(stats.flaky) if stats else False,
        latency_s=latency,
        tokens=tokens,
        simulation=first.simulation,
        evaluation_level=first.evaluation_level,
        description=task.description,
        metadata=dict(task.metadata) or None,
        diagnostics=first.diagnostics,
    )
