"""The run's numbers (evaluators.md §6), accumulated one unit at a time.

- Run: overall score = mean of task scores over tasks that have one; pass rate = passed / all;
  per-evaluator pass rates, means and error counts; errors by kind; tokens and cost per pool.
- Repeats: per-task mean, standard deviation, pass fraction, flaky when pass and fail both occur.

`RunTally` keeps, per (task, repeat), only what these need — a row of typed arrays, ~70
bytes (`tally_rows`), where the unit's `TaskScore` holds every result with its reasons and
details (~4 KB) — so a run of 100,000 tasks summarizes in flat memory, and the summary is
ready the moment the last unit is in. A unit added again under the same key (re-run on
--resume) replaces the first. `stats()` visits the units in (task, repeat) order, so the
numbers do not depend on completion order.
"""

from __future__ import annotations

import statistics
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import ConfigDict, Field

from agentopt.contracts.outcomes import OutcomeCounts
from agentopt.contracts.run_results import TURN_SKIPPED, EvaluatorSummary, RunSummary, UsageBucket
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.usage import Usage
from agentopt.core.lazy_model import LazyModel
from agentopt.core.repeated_hashes import repeated_hashes
from agentopt.evaluators.aggregate import mean_or_none
from agentopt.evaluators.stats import DEFAULT_RESAMPLES, ConfidenceInterval, bootstrap_ci
from agentopt.evaluators.tally_rows import Result, Rows, Unit


class _Model(LazyModel):
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


class RunTally:
    """The units of a run as they finish, keyed by (task position, repeat), kept as rows of
    typed arrays (`tally_rows`: ~48 bytes a unit, where a record per unit took ~450)."""

    def __init__(self) -> None:
        self._rows = Rows()
        self._counts: Counter[str] = Counter()
        self._first_score: float | None = None
        self.varied = False
        """Two units scored differently: the run's interval needs the bootstrap's draws (a
        run of one score has a one-point interval, `stats.bootstrap_ci`)."""

    def add(self, key: tuple[int, int], score: TaskScore) -> None:
        """Count one finished unit (a second one under the same key replaces the first)."""
        before = self._rows.row(key)
        if before is not None:
            self._count(before, -1)
        row = self._rows.add(key, score)
        self._count(row, 1)
        if score.score is not None and not self.varied:
            if self._first_score is None:
                self._first_score = score.score
            elif score.score != self._first_score:
                self.varied = True

    def _count(self, row: int, sign: int) -> None:
        """Add (1) or take back (-1) a unit's part of `counts`, in place (a dict of it and
        `Counter.update` per unit were ~1% of a run's CPU)."""
        c, rows = self._counts, self._rows
        c[rows.status(row)] += sign
        errors = rows.agent_errors(row)
        if errors:
            skipped = sum(code == TURN_SKIPPED for code in errors)
            c["agent_errors"] += sign * (len(errors) - skipped)
            c["skipped_turns"] += sign * skipped
        failed = sum(s == "error" for s in rows.result_statuses(row))
        if failed:
            c["evaluator_errors"] += sign * failed

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
        return len(self._rows)

    @property
    def judged(self) -> bool:
        """Whether an LLM judge scored anything: a suite of deterministic checks and
        embedding-scored criteria names no judge in its reports."""
        return any(self._rows.judged(row) for _, _, row in self._rows.keys_in_order())

    def stats(
        self,
        *,
        tokens_by_pool: Mapping[str, Any] | None = None,
        cost_by_pool: Mapping[str, float] | None = None,
        seed: int = 0,
        resamples: int = DEFAULT_RESAMPLES,
    ) -> RunStats:
        """The run's numbers, visiting the units in (task, repeat) order, one at a time.

        Args:
            tokens_by_pool: pool → usage (`Usage`, a `UsageBucket` or a dict) from the call
                layer. When "judge" is absent it is summed from the results' `cost`.
            cost_by_pool: pool → dollars; "judge" likewise defaults to the results' cost.
            seed, resamples: the bootstrap's (same run, same seed → same interval).
        """
        merged = self._named_alike()
        repeated = self._repeated()
        task_means = array("d")
        repeats: list[RepeatStats] = []
        counted = _Counted()
        tasks = 0
        for rows in self._groups(merged):
            tasks += 1
            units = [self._rows.unit(pos, row) for pos, row in rows]
            if not merged:  # the groups are in (position, repeat) order: count as they come
                for unit in units:
                    counted.add(unit)
            if len(units) > 1:
                units.sort(key=lambda u: u.repeat)
            mean = _mean_score(units)
            if mean is not None:
                task_means.append(mean)
            if repeated:
                repeats.append(_repeat_stats(units[0].name, units))
        if merged:
            for pos, _, row in self._rows.keys_in_order():
                counted.add(self._rows.unit(pos, row))
        statuses, kinds, evaluators = counted.statuses, counted.kinds, counted.evaluators
        runs = sum(statuses.values())
        judge_in, judge_out, judge_cost, goals = (
            counted.judge_in,
            counted.judge_out,
            counted.judge_cost,
            counted.goals,
        )

        tokens = {pool: _tokens(v) for pool, v in (tokens_by_pool or {}).items()}
        if "judge" not in tokens:
            tokens["judge"] = Usage(input_tokens=judge_in, output_tokens=judge_out)
        costs = {pool: float(v) for pool, v in (cost_by_pool or {}).items()}
        costs.setdefault("judge", judge_cost)
        return RunStats(
            tasks=tasks,
            runs=runs,
            passed=statuses["pass"],
            failed=statuses["fail"],
            partial=statuses["partial"],
            errored=statuses["error"],
            score=sum(task_means) / len(task_means) if task_means else None,
            pass_rate=statuses["pass"] / runs if runs else 0.0,
            ci=bootstrap_ci(task_means, seed=seed, resamples=resamples),
            evaluators=[t.summary(name) for name, t in evaluators.items()],
            errors_by_kind=dict(sorted(kinds.items())),
            tokens=tokens,
            cost_usd=costs,
            repeats=repeats,
            flaky=[s.name for s in repeats if s.flaky],
            turns_to_goal=mean_or_none(goals),
        )

    def _groups(self, merged: bool) -> Iterator[list[tuple[int, int]]]:
        """(position, row) of the units of each task, tasks in first-seen order of their name
        in (position, repeat) order. A task's units share a position, made one group at a
        time; tasks at two positions share a name only in a dataset that named two alike
        (`merged`), whose groups are all made at once."""
        if merged:
            by_name: dict[str, list[tuple[int, int]]] = {}
            for pos, _, row in self._rows.keys_in_order():
                by_name.setdefault(self._rows.name(pos), []).append((pos, row))
            yield from by_name.values()
            return
        group: list[tuple[int, int]] = []
        for pos, _, row in self._rows.keys_in_order():
            if group and group[0][0] != pos:
                yield group
                group = []
            group.append((pos, row))
        if group:
            yield group

    def _named_alike(self) -> bool:
        """Whether two positions hold tasks of one name (by their names' hashes first,
        `core.repeated_hashes`: a list of 100,000 hashes was 5.6 MB, the peak of a run's
        summary)."""
        if not repeated_hashes(hash(self._rows.name(p)) for p in self._positions()):
            return False
        names = [self._rows.name(p) for p in self._positions()]
        return len(set(names)) < len(names)

    def _positions(self) -> Iterator[int]:
        """Each task position that has a unit, once, in order."""
        last = -1
        for pos, _, _ in self._rows.keys_in_order():
            if pos != last:
                yield pos
                last = pos

    def _repeated(self) -> bool:
        """Whether a task ran more than once (a RepeatStats is made per task only then)."""
        last = -1
        for pos, _, _ in self._rows.keys_in_order():
            if pos == last:
                return True
            last = pos
        return False


class _Counted:
    """What the summary counts over every unit, in (task, repeat) order."""

    def __init__(self) -> None:
        self.statuses: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.evaluators: dict[str, _EvaluatorTotals] = {}
        self.judge_in = self.judge_out = 0
        self.judge_cost = 0.0
        """Summed result by result in order (an array of every result's cost was 0.8 MB of a
        100,000-task summary's peak; the sum is the same, added in the same order)."""
        self.goals: list[float] = []

    def add(self, unit: Unit) -> None:
        self.statuses[unit.status] += 1
        for r in unit.results:
            if r.error_code is not None:
                self.kinds[r.error_code] += 1
            totals = self.evaluators.get(r.evaluator)
            if totals is None:
                totals = self.evaluators[r.evaluator] = _EvaluatorTotals()
            totals.add(r)
            self.judge_in += r.input_tokens
            self.judge_out += r.output_tokens
            self.judge_cost += r.cost_usd
        self.kinds.update(unit.agent_errors)
        if unit.turns_to_goal:
            self.goals.append(unit.turns_to_goal)


class _EvaluatorTotals:
    """One evaluator's numbers, added result by result in (task, repeat) order."""

    __slots__ = ("count", "errors", "failed", "passed", "scored", "total")

    def __init__(self) -> None:
        self.count = self.passed = self.failed = self.errors = 0
        self.total = 0.0
        """The normalized scores' sum, in order (as `sum` of them all would add them)."""
        self.scored = 0
        """How many normalized scores `total` holds."""

    def add(self, r: Result) -> None:
        self.count += 1
        self.passed += r.status == "pass"
        self.failed += r.status == "fail"
        self.errors += r.status == "error"
        if r.status != "error" and r.normalized is not None:
            self.total += r.normalized
            self.scored += 1

    def summary(self, name: str) -> EvaluatorSummary:
        decided = self.passed + self.failed
        return EvaluatorSummary(
            name=name,
            count=self.count,
            passed=self.passed,
            failed=self.failed,
            errors=self.errors,
            pass_rate=self.passed / decided if decided else None,
            mean=self.total / self.scored if self.scored else None,
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
    seen: Counter[str] = Counter()
    for score in task_scores:
        # Keyed by the task's first-seen place and its how-manieth score: in the same
        # order as the scores, each key once.
        tally.add((first_seen.setdefault(score.name, len(first_seen)), seen[score.name]), score)
        seen[score.name] += 1
    return tally.stats(
        tokens_by_pool=tokens_by_pool, cost_by_pool=cost_by_pool, seed=seed, resamples=resamples
    )


def _mean_score(runs: list[Unit]) -> float | None:
    kept = [r.score for r in runs if r.score is not None]
    return sum(kept) / len(kept) if kept else None


def _repeat_stats(name: str, runs: list[Unit]) -> RepeatStats:
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
