"""From evaluator results to turn, task and run scores (evaluators.md §6).

- Turn/task score = mean of its evaluators' `normalized` values, errors left out.
- Status precedence: error (the agent failed) > partial (an evaluator errored) > fail > pass.
- Thread: each turn scored on its own; thread score = mean of turn scores.

The run's numbers (overall score, pass rate, repeats, per-evaluator summaries) are
`run_stats.py`'s, accumulated unit by unit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.scores import TaskScore, TaskStatus, TurnScore, worst
from agentopt.contracts.transcript import Transcript, TurnError


def mean_or_none(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def score_turn(
    results: Sequence[EvalResult], *, index: int = 0, agent_error: TurnError | None = None
) -> TurnScore:
    """Score one turn. A turn the agent failed is `error` whatever its evaluators say; a turn
    with no evaluator at all passes with no score."""
    statuses: list[TaskStatus] = [r.status for r in results]
    if agent_error is not None:
        status: TaskStatus = "error"
    elif "error" in statuses:
        status = "partial"
    else:
        status = worst(statuses)
    return TurnScore(
        index=index,
        status=status,
        score=mean_or_none(r.normalized for r in results if r.status != "error"),
        results=list(results),
        error=agent_error,
    )


def score_task(name: str, turns: Sequence[TurnScore], *, repeat: int = 0) -> TaskScore:
    """Combine turn scores into the task's (the thread rule; a single turn passes through)."""
    return TaskScore(
        name=name,
        repeat=repeat,
        status=worst(t.status for t in turns) if turns else "error",
        score=mean_or_none(t.score for t in turns),
        turns=list(turns),
        error=next((t.error for t in turns if t.error), None),
    )


def score_transcript(
    name: str,
    transcript: Transcript,
    results_per_turn: Sequence[Sequence[EvalResult]],
    *,
    n_turns: int | None = None,
    repeat: int = 0,
) -> TaskScore:
    """Score a task from its transcript and the results of each evaluated turn.

    Turns the agent never reached (after a failed turn) are marked `error` / `turnSkipped`;
    `n_turns` is the task's turn count (default: the transcript's).
    """
    total = max(n_turns or 0, len(transcript.turns))
    turns: list[TurnScore] = []
    for i in range(total):
        if i < len(transcript.turns):
            error = transcript.turns[i].error
            results = results_per_turn[i] if i < len(results_per_turn) else []
            turns.append(score_turn(results, index=i, agent_error=error))
        else:
            skipped = TurnError(code="turnSkipped", message="not sent: an earlier turn failed")
            turns.append(score_turn([], index=i, agent_error=skipped))
    return score_task(name, turns, repeat=repeat)
