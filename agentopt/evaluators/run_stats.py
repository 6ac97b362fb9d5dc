"""The run's numbers (evaluators.md §6), accumulated one unit at a time.

- Run: overall score = mean of task scores over tasks that have one; pass rate = passed / all;
  per-evaluator pass rates, means and error counts; errors by kind; tokens and cost per pool.
- Repeats: per-task mean, standard deviation, pass fraction, flaky when pass and fail both occur.

`RunTally` keeps, per (task, repeat), only what these need — a few hundred bytes, where the
unit's `TaskScore` holds every result with its reasons and details (~4 KB) — so a run of
100,000 tasks summarizes in flat memory, and the summary is ready the moment the last unit is
in. A unit added again under the same key (re-run on --resume) replaces the first. `stats()`
visits the units in (task, repeat) order, so the numbers do not depend on completion order.
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentopt.contracts.outcomes import OutcomeCounts
from agentopt.contracts.run_results import TURN_SKIPPED, EvaluatorSummary, RunSummary, UsageBucket
from agentopt.contracts.scores import TaskScore, TaskStatus
from agentopt.contracts.usage import Usage
from agentopt.evaluators.aggregate import mean_or_none
from agentopt.evaluators.selection import GOAL_REACHED
from agentopt.evaluators.stats import DEFAULT_RESAMPLES, ConfidenceInterval, bootstrap_ci


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


@dataclass(frozen=True, slots=True)
class _Result:
    """What the summary reads of one evaluator result."""

    evaluator: str
    status: str
    normalized: float | None
    error_code: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float


@dataclass(frozen=True, slots=True)
class _Unit:
    """What the summary reads of one (task, repeat)."""

    name: str
    repeat: int
    status: TaskStatus
    score: float | None
    results: tuple[_Result, ...]
    agent_errors: tuple[str, ...]
    """Error codes of the turns the agent failed (or never reached)."""
    judged: bool
    """An LLM judge scored something (every judge records its `judge_model`)."""
    turns_to_goal: float | None = None
    """Agent turns its simulated user took to reach the goal (a builtin.goal_reached pass)."""

    def counted(self) -> dict[str, int]:
        """This unit's part of `RunTally.counts`."""
        skipped = sum(code == TURN_SKIPPED for code in self.agent_errors)
        return {
            self.status: 1,
            "agent_errors": len(self.agent_errors) - skipped,
            "evaluator_errors": sum(r.status == "error" for r in self.results),
            "skipped_turns": skipped,
        }

    @classmethod
    def of(cls, score: TaskScore) -> _Unit:
        results = tuple(
            _Result(
                sys.intern(r.evaluator),
                r.status,
                r.normalized,
                sys.intern(r.error.code) if r.error is not None else None,
                r.cost.input_tokens,
                r.cost.output_tokens,
                r.cost.cost_usd,
            )
            for t in score.turns
            for r in t.results
        )
        errors = tuple(sys.intern(t.error.code) for t in score.turns if t.error is not None)
        judged = any(
            isinstance(r.details, dict) and r.details.get("judge_model")
            for t in score.turns
            for r in t.results
        )
        goal = next(
            (
                float(r.details["turns_to_goal"])
                for t in score.turns
                for r in t.results
                if r.evaluator == GOAL_REACHED
                and r.status == "pass"
                and isinstance(r.details, dict)
                and r.details.get("turns_to_goal")
            ),
            None,
        )
        return cls(
            score.name, score.repeat, score.status, score.score, results, errors, judged, goal
        )


class RunTally:
    """The units of a run as they finish, keyed by (task position, repeat)."""

    def __init__(self) -> None:
        self._units: dict[tuple[int, int], _Unit] = {}
        self._counts: Counter[str] = Counter()
        self._first_score: float | None = None
        self.varied = False
        """Two units scored differently: the run's interval needs the bootstrap's draws (a
        run of one score has a one-point interval, `stats.bootstrap_ci`)."""

    def add(self, key: tuple[int, int], score: TaskScore) -> None:
        """Count one finished unit (a second one under the same key replaces the first)."""
        unit = _Unit.of(score)
        before = self._units.get(key)
        if before is not None:
            self._counts.subtract(before.counted())
        self._counts.update(unit.counted())
        self._units[key] = unit
        if unit.score is not None and not self.varied:
            if self._first_score is None:
                self._first_score = unit.score
            elif unit.score != self._first_score:
                self.varied = True

    @property
    def counts(self) -> OutcomeCounts:
        """The tally so far, kept as units are added: what live progress shows, in the same
        classes as the summary `stats()` makes at the end."""
        c = self._counts
        return OutcomeCounts(
            passed=c["pass"],
            failed=c["fail"],
            partial=c["partial"],
            errors=c["error"],
            agent_errors=c["agent_errors"],
            evaluator_errors=c["evaluator_errors"],
            skipped_turns=c["skipped_turns"],
        )

    def __len__(self) -> int:
        return len(self._units)

    @property
    def judged(self) -> bool:
        """Whether an LLM judge scored anything: a suite of deterministic checks and
        embedding-scored criteria names no judge in its reports."""
        return any(u.judged for u in self._units.values())

    def stats(
        self,
        *,
        tokens_by_pool: Mapping[str, Any] | None = None,
        cost_by_pool: Mapping[str, float] | None = None,
        seed: int = 0,
        resamples: int = DEFAULT_RESAMPLES,
    ) -> RunStats:
        """The run's numbers.

        Args:
            tokens_by_pool: pool → usage (`Usage`, a `UsageBucket` or a dict) from the call
                layer. When "judge" is absent it is summed from the results' `cost`.
            cost_by_pool: pool → dollars; "judge" likewise defaults to the results' cost.
            seed, resamples: the bootstrap's (same run, same seed → same interval).
        """
        units = [self._units[key] for key in sorted(self._units)]
        groups = _task_groups(units)
        # A RepeatStats per task only when some task ran more than once: at 100,000 tasks of
        # one run each they were 80 MB of the finish phase's peak, built to be dropped.
        repeated = any(len(runs) > 1 for runs in groups)
        repeats = [_repeat_stats(runs[0].name, runs) for runs in groups] if repeated else []
        task_means = [m for runs in groups if (m := _mean_score(runs)) is not None]
        statuses = Counter(u.status for u in units)
        results = [r for u in units for r in u.results]
        kinds: Counter[str] = Counter(r.error_code for r in results if r.error_code is not None)
        kinds.update(code for u in units for code in u.agent_errors)

        tokens = {pool: _tokens(v) for pool, v in (tokens_by_pool or {}).items()}
        if "judge" not in tokens:
            tokens["judge"] = Usage(
                input_tokens=sum(r.input_tokens for r in results),
                output_tokens=sum(r.output_tokens for r in results),
            )
        costs = {pool: float(v) for pool, v in (cost_by_pool or {}).items()}
        costs.setdefault("judge", sum(r.cost_usd for r in results))

        runs = len(units)
        return RunStats(
            tasks=len(groups),
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
            repeats=repeats,
            flaky=[s.name for s in repeats if s.flaky],
            turns_to_goal=mean_or_none(u.turns_to_goal for u in units if u.turns_to_goal),
        )


def summarize_run(
    task_scores: Sequence[TaskScore],
    *,
    tokens_by_pool: Mapping[str, Any] | None = None,
    cost_by_pool: Mapping[str, float] | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> RunStats:
    """Summarize scores held in memory (every task, every repeat), grouped by task in
    first-seen order; `RunTally` does the same unit by unit."""
    tally = RunTally()
    first_seen: dict[str, int] = {}
    for seq, score in enumerate(task_scores):
        tally.add((first_seen.setdefault(score.name, len(first_seen)), seq), score)
    return tally.stats(
        tokens_by_pool=tokens_by_pool, cost_by_pool=cost_by_pool, seed=seed, resamples=resamples
    )


def _task_groups(units: list[_Unit]) -> list[list[_Unit]]:
    """The units grouped by task name, tasks in first-seen order, each task's runs by repeat."""
    by_task: dict[str, list[_Unit]] = {}
    for unit in units:
        runs = by_task.get(unit.name)
        if runs is None:
            by_task[unit.name] = [unit]
        else:
            runs.append(unit)
    groups = list(by_task.values())
    for runs in groups:
        if len(runs) > 1:
            runs.sort(key=lambda r: r.repeat)
    return groups


def _mean_score(runs: list[_Unit]) -> float | None:
    kept = [r.score for r in runs if r.score is not None]
    return sum(kept) / len(kept) if kept else None


def _repeat_stats(name: str, runs: list[_Unit]) -> RepeatStats:
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


def _evaluator_stats(results: list[_Result]) -> list[EvaluatorSummary]:
    by_name: dict[str, list[_Result]] = defaultdict(list)
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
