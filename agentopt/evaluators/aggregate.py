"""From evaluator results to turn, task and run scores (evaluators.md §6).

- Turn/task score = mean of its evaluators' `normalized` values, errors left out.
- Status precedence: error (the agent failed) > partial (an evaluator errored) > fail > pass.
- Thread: each turn scored on its own; thread score = mean of turn scores.
- Run: overall score = mean of task scores over tasks that have one; pass rate = passed / all;
  per-evaluator pass rates, means and error counts; errors by kind; tokens and cost per pool.
- Repeats: per-task mean, standard deviation, pass fraction, flaky when pass and fail both occur.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.run_results import EvaluatorSummary, RunSummary, UsageBucket
from agentopt.contracts.scores import TaskScore, TaskStatus, TurnScore, worst
from agentopt.contracts.transcript import Transcript, TurnError
from agentopt.contracts.usage import Usage
from agentopt.evaluators.selection import GOAL_REACHED
from agentopt.evaluators.stats import DEFAULT_RESAMPLES, ConfidenceInterval, bootstrap_ci


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


class RepeatStats(_Model):
    """One task across `--repeat N` runs."""

    name: str
    """The task name."""
    repeats: int
    """How many times the task ran."""
    scores: list[float | None]
    """The task score of each repeat, in order."""
    mean: float | None = None
    """Mean of the repeats' scores (repeats without a score left out)."""
    std: float | None = None
    """Sample standard deviation of the scores (0 for one score)."""
    pass_fraction: float
    """Repeats that passed / repeats."""
    flaky: bool = False
    """True when at least one repeat passed and another failed."""


class RunStats(_Model):
    """What a run's task scores add up to, before the call layer's numbers are added
    (`summary` makes the saved `RunSummary` of results.json)."""

    tasks: int
    """Distinct tasks."""
    runs: int
    """Task runs (tasks × repeats)."""
    passed: int = 0
    """Task runs with status pass."""
    failed: int = 0
    """Task runs with status fail."""
    partial: int = 0
    """Task runs where an evaluator errored (no agent failure)."""
    errored: int = 0
    """Task runs where the agent failed."""
    score: float | None = None
    """Mean over tasks of each task's (repeat-averaged) score, tasks without one left out."""
    pass_rate: float = 0.0
    """Passed task runs / all task runs (partial and error count as not passed)."""
    ci: ConfidenceInterval | None = None
    """95% bootstrap interval of `score` over tasks (None with fewer than 2 scored tasks)."""
    evaluators: list[EvaluatorSummary] = Field(default_factory=list)
    """Per evaluator, in first-seen order."""
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    """Evaluator error codes and agent error codes, counted."""
    tokens: dict[str, Usage] = Field(default_factory=dict)
    """Per pool: agent, judge, generation (as given; judge defaults to the results' cost)."""
    cost_usd: dict[str, float] = Field(default_factory=dict)
    """Per pool, in dollars."""
    repeats: list[RepeatStats] = Field(default_factory=list)
    """Per-task repeat statistics (only when some task ran more than once)."""
    flaky: list[str] = Field(default_factory=list)
    """Names of flaky tasks."""
    turns_to_goal: float | None = None
    """Mean `turns_to_goal` of the builtin.goal_reached passes (simulated users)."""

    def summary(
        self, usage: Mapping[str, UsageBucket], *, limiter: str = "", duration_s: float = 0.0
    ) -> RunSummary:
        """The saved summary: these numbers plus the call layer's usage per pool."""
        return RunSummary(
            score=self.score,
            score_ci=[self.ci.low, self.ci.high] if self.ci else None,
            pass_rate=self.pass_rate,
            tasks=self.tasks,
            runs=self.runs,
            passed=self.passed,
            failed=self.failed,
            partial=self.partial,
            errors=self.errored,
            evaluators=self.evaluators,
            errors_by_kind=self.errors_by_kind,
            usage=dict(usage),
            flaky=self.flaky,
            cost_usd=sum(u.cost_usd for u in usage.values()),
            cache_hits=sum(u.cache_hits for u in usage.values()),
            limiter=limiter,
            duration_s=round(duration_s, 3),
            turns_to_goal=self.turns_to_goal,
        )


def _repeat_stats(name: str, runs: list[TaskScore]) -> RepeatStats:
    runs = sorted(runs, key=lambda r: r.repeat)
    scores = [r.score for r in runs]
    kept = [s for s in scores if s is not None]
    verdicts = {r.status for r in runs if r.status in ("pass", "fail")}
    return RepeatStats(
        name=name,
        repeats=len(runs),
        scores=scores,
        mean=sum(kept) / len(kept) if kept else None,
        std=statistics.stdev(kept) if len(kept) > 1 else (0.0 if kept else None),
        pass_fraction=sum(r.status == "pass" for r in runs) / len(runs),
        flaky=verdicts == {"pass", "fail"},
    )


def _evaluator_stats(results: Iterable[EvalResult]) -> list[EvaluatorSummary]:
    by_name: dict[str, list[EvalResult]] = defaultdict(list)
    for r in results:
        by_name[r.evaluator].append(r)
    out = []
    for name, rs in by_name.items():
        passed = sum(r.status == "pass" for r in rs)
        failed = sum(r.status == "fail" for r in rs)
        out.append(
            EvaluatorSummary(
                name=name,
                count=len(rs),
                passed=passed,
                failed=failed,
                errors=sum(r.status == "error" for r in rs),
                pass_rate=passed / (passed + failed) if passed + failed else None,
                mean=mean_or_none(r.normalized for r in rs if r.status != "error"),
            )
        )
    return out


def _tokens(value: Any) -> Usage:
    if isinstance(value, Usage):
        return value
    if isinstance(value, Mapping):
        return Usage(
            input_tokens=int(value.get("input_tokens", 0)),
            output_tokens=int(value.get("output_tokens", 0)),
        )
    return Usage(
        input_tokens=int(getattr(value, "input_tokens", 0)),
        output_tokens=int(getattr(value, "output_tokens", 0)),
    )


def summarize_run(
    task_scores: Sequence[TaskScore],
    *,
    tokens_by_pool: Mapping[str, Any] | None = None,
    cost_by_pool: Mapping[str, float] | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> RunStats:
    """Summarize a run (every task, every repeat).

    Args:
        task_scores: one `TaskScore` per (task, repeat).
        tokens_by_pool: pool → usage (`Usage`, a `UsageBucket` or a dict) from the call layer.
            When "judge" is absent it is summed from the results' `cost`.
        cost_by_pool: pool → dollars; "judge" likewise defaults to the results' cost.
        seed, resamples: the bootstrap's (same run, same seed → same interval).
    """
    by_task: dict[str, list[TaskScore]] = defaultdict(list)
    for ts in task_scores:
        by_task[ts.name].append(ts)
    stats = [_repeat_stats(name, runs) for name, runs in by_task.items()]
    task_means = [s.mean for s in stats if s.mean is not None]
    statuses = Counter(ts.status for ts in task_scores)
    results = [r for ts in task_scores for r in ts.results]

    kinds: Counter[str] = Counter(r.error.code for r in results if r.error is not None)
    kinds.update(t.error.code for ts in task_scores for t in ts.turns if t.error is not None)

    tokens = {pool: _tokens(v) for pool, v in (tokens_by_pool or {}).items()}
    if "judge" not in tokens:
        tokens["judge"] = Usage(
            input_tokens=sum(r.cost.input_tokens for r in results),
            output_tokens=sum(r.cost.output_tokens for r in results),
        )
    costs = {pool: float(v) for pool, v in (cost_by_pool or {}).items()}
    costs.setdefault("judge", sum(r.cost.cost_usd for r in results))

    repeated = any(s.repeats > 1 for s in stats)
    runs = len(task_scores)
    return RunStats(
        tasks=len(by_task),
        runs=runs,
        passed=statuses["pass"],
        failed=statuses["fail"],
        partial=statuses["partial"],
        errored=statuses["error"],
        score=sum(task_means) / len(task_means) if task_means else None,
        pass_rate=statuses["pass"] / runs if runs else 0.0,
        ci=bootstrap_ci(task_means, seed=seed, resamples=resamples),
        evaluators=_evaluator_stats(results),
        errors_by_kind=dict(sorted(kinds.items())),
        tokens=tokens,
        cost_usd=costs,
        repeats=stats if repeated else [],
        flaky=[s.name for s in stats if s.flaky],
        turns_to_goal=mean_or_none(_turns_to_goal(results)),
    )


def _turns_to_goal(results: Sequence[EvalResult]) -> list[float]:
    """How many agent turns each simulated user took to reach its goal (goal_reached passes)."""
    return [
        float(r.details["turns_to_goal"])
        for r in results
        if r.evaluator == GOAL_REACHED and r.status == "pass" and r.details.get("turns_to_goal")
    ]
