"""Quality gates and the exit code of `eval run` (cli.md exit codes).

Precedence: infrastructure errors beyond tolerance (3) make every verdict unknown, so they win
over a failed quality gate (1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentopt.contracts.outcomes import outcome_change
from agentopt.contracts.run_results import RunResults, RunSummary
from agentopt.contracts.task_record import TaskOutcome

PairedCI = Callable[[Sequence[float], Sequence[float], int], tuple[float, float, float]]


@dataclass
class GateSettings:
    """The gate flags of `eval run`."""

    fail_under: float | None = None
    min_pass_rate: float | None = None
    max_errors: int | None = None
    """None = 0 at the end of the run (any error means the verdict is unknown)."""


@dataclass
class Regression:
    """This run against `--baseline`: the paired bootstrap over the tasks both scored."""

    baseline: str
    """The baseline as given (a run id or a results.json path)."""
    shared: int
    """Tasks scored in both runs."""
    delta: float = 0.0
    """Mean score difference, this run − baseline."""
    ci: tuple[float, float] = (0.0, 0.0)
    """95% interval of `delta`."""
    regressed: bool = False
    """The interval lies entirely below zero."""
    note: str | None = None
    worse: list[str] = field(default_factory=list)
    """Shared tasks whose outcome got worse (`contracts.outcomes.outcome_change`), as
    "name: before → after"."""
    better: list[str] = field(default_factory=list)
    """Shared tasks whose outcome got better, likewise."""

    def outcome_line(self) -> str:
        """How many shared tasks changed outcome, e.g. "2 tasks worse (t3: partial → fail, …)"."""
        if not self.worse and not self.better:
            return "no task changed outcome"
        shown = ", ".join(self.worse[:3]) + (", …" if len(self.worse) > 3 else "")
        worse = f"{len(self.worse)} task(s) worse" + (f" ({shown})" if shown else "")
        return f"{worse}, {len(self.better)} better"


@dataclass
class GateOutcome:
    """What the gates found; `exit_code` is what the process returns."""

    failures: list[str] = field(default_factory=list)
    error_count: int = 0
    errors_exceeded: bool = False
    regression: Regression | None = None

    @property
    def exit_code(self) -> int:
        if self.errors_exceeded:
            return 3
        return 1 if self.failures else 0


def count_errors(summary: RunSummary) -> int:
    """Agent and evaluator calls that still failed after retries. Turns skipped after a failed
    turn were never sent: they are not errors of their own (as in the mid-run count)."""
    return summary.counts.failed_calls


def check_gates(
    summary: RunSummary, settings: GateSettings, *, regression: Regression | None = None
) -> GateOutcome:
    """Apply --fail-under, --min-pass-rate, the baseline comparison and --max-errors."""
    out = GateOutcome(error_count=count_errors(summary), regression=regression)
    limit = settings.max_errors if settings.max_errors is not None else 0
    out.errors_exceeded = out.error_count > limit
    score = summary.score
    if settings.fail_under is not None:
        if score is None:
            out.failures.append(f"--fail-under {settings.fail_under}: the run has no score")
        elif score < settings.fail_under:
            out.failures.append(f"score {score:.3f} is below --fail-under {settings.fail_under}")
    if settings.min_pass_rate is not None:
        rate = summary.pass_rate
        if rate < settings.min_pass_rate:
            out.failures.append(
                f"pass rate {rate:.1%} is below --min-pass-rate {settings.min_pass_rate:.1%}"
            )
    if regression and regression.regressed:
        out.failures.append(
            f"score dropped {regression.delta:+.3f} against the baseline "
            f"{regression.baseline} (95% CI {regression.ci[0]:+.3f} … "
            f"{regression.ci[1]:+.3f} over {regression.shared} shared tasks; "
            f"{regression.outcome_line()})"
        )
    return out


def compare_to_baseline(
    current: RunResults,
    baseline: RunResults,
    baseline_ref: str,
    paired_ci: PairedCI,
    seed: int = 0,
) -> Regression:
    """Paired bootstrap over shared task names; a regression is a CI entirely below zero.
    Each shared task's outcome change is listed by the one outcome order."""
    before = {t.name: t.status for t in baseline.tasks}
    changes = [
        (t.name, before[t.name], t.status, outcome_change(before[t.name], t.status))
        for t in current.tasks
        if t.name in before
    ]
    worse = [f"{n}: {b} → {a}" for n, b, a, change in changes if change == "worse"]
    better = [f"{n}: {b} → {a}" for n, b, a, change in changes if change == "better"]
    base_scores = {t.name: _task_score(t) for t in baseline.tasks if t.score is not None}
    pairs = [
        (score, base)
        for t in current.tasks
        if t.score is not None
        and (score := _task_score(t)) is not None
        and (base := base_scores.get(t.name)) is not None
    ]
    if not pairs:
        return Regression(
            baseline_ref, 0, note="no shared scored tasks", worse=worse, better=better
        )
    delta, lo, hi = paired_ci([a for a, _ in pairs], [b for _, b in pairs], seed)
    return Regression(baseline_ref, len(pairs), delta, (lo, hi), hi < 0, worse=worse, better=better)


def _task_score(task: TaskOutcome) -> float | None:
    """The repeat mean when there is one, else the score."""
    return task.mean if task.mean is not None else task.score
