"""`--fail-on any-failure | pass-rate=R`, with the grammar, counting and messages of azd's
evaluations extension (azd-eval.md §4.1), over the counts agentopt's run summary holds.

Counting: a row is one task run. `passed` and `failed` are the task runs the evaluators
passed and failed; `errored` are those where the agent or an evaluator failed (errors are
never scores). `any-failure` breaches when any row did not pass, errored ones included;
`pass-rate=R` breaches when passed / (passed + failed) < R, errored rows left out with a
warning. A breach exits 1 (the code azd users see). Errors beyond `--max-errors` still exit 3
under `pass-rate`, because the rate then rests on rows the run could not score; under
`any-failure` an errored row is itself a breach, so the verdict is known and the exit is 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from agentopt.contracts.run_results import RunSummary
from agentopt.core.errors import ConfigError, Problem

GATE_FAILED = 1
ERRORS_EXCEEDED = 3
BREACH_FOOTER = "ERROR: evaluation quality gate not met."


@dataclass(frozen=True)
class FailOn:
    """A parsed `--fail-on` value."""

    kind: Literal["any-failure", "pass-rate"]
    threshold: float | None = None

    def __str__(self) -> str:
        return self.kind if self.threshold is None else f"pass-rate={self.threshold:g}"


def parse_fail_on(value: str) -> FailOn:
    """azd's grammar: `any-failure` | `pass-rate=` NUMBER, 0 ≤ NUMBER ≤ 1, spaces trimmed.

    Raises:
        ConfigError: with the extension's own wording, before anything is sent.
    """
    text = value.strip()
    if text == "any-failure":
        return FailOn("any-failure")
    if not text.startswith("pass-rate="):
        raise _usage(f'--fail-on must be any-failure or pass-rate=<0..1>, got "{value}"')
    raw = text.removeprefix("pass-rate=").strip()
    try:
        number = float(raw)
    except ValueError:
        raise _usage(f'--fail-on pass-rate must be a number, got "{raw}"') from None
    if math.isnan(number):
        raise _usage(f'--fail-on pass-rate must be a number, got "{raw}"')
    if not 0.0 <= number <= 1.0:
        raise _usage(f"--fail-on pass-rate must be between 0 and 1, got {raw}")
    return FailOn("pass-rate", number)


def _usage(message: str) -> ConfigError:
    return ConfigError(problems=[Problem("", "--fail-on", message)])


def refuse_no_wait(fail_on: FailOn | None, no_wait: bool) -> None:
    """A gate needs a finished run; `--no-wait` returns before it ends."""
    if fail_on is not None and no_wait:
        raise _usage(
            "--fail-on needs a finished run and cannot be used with --no-wait; gate the run "
            "later with `agentopt eval run show RUN_ID --wait --fail-on …`"
        )


@dataclass(frozen=True)
class Counts:
    """The rows of one run, as the gate counts them."""

    total: int
    passed: int
    failed: int
    errored: int

    @classmethod
    def of(cls, summary: RunSummary) -> Counts:
        errored = summary.errors + summary.partial
        return cls(
            total=summary.runs,
            passed=summary.passed,
            failed=summary.failed,
            errored=errored,
        )


@dataclass(frozen=True)
class Verdict:
    """What the gate found, with the lines azd prints."""

    fail_on: FailOn
    breached: bool
    reason: str
    warning: str | None = None

    @property
    def lines(self) -> list[str]:
        mark = "✗" if self.breached else "✓"
        return [f"{mark} Evaluation gate ({self.fail_on}): {self.reason}"]


def judge(fail_on: FailOn, counts: Counts) -> Verdict:
    """Apply the gate to the counts (see the module docstring)."""
    if counts.total == 0 or (fail_on.kind == "pass-rate" and counts.passed + counts.failed == 0):
        return Verdict(
            fail_on, True, "the run scored no rows, so its pass rate is below any threshold"
        )
    if fail_on.kind == "any-failure":
        missed = counts.total - counts.passed
        if missed:
            extra = f" ({counts.errored} errored)" if counts.errored else ""
            return Verdict(fail_on, True, f"{missed} of {counts.total} samples did not pass{extra}")
        return Verdict(fail_on, False, f"all {counts.total} samples passed")
    assert fail_on.threshold is not None
    scored = counts.passed + counts.failed
    rate = counts.passed / scored
    warning = None
    if counts.errored:
        warning = (
            f"{counts.errored} errored sample{'s' if counts.errored != 1 else ''} left out of "
            f"the pass rate ({counts.passed} of {scored} scored passed); use --fail-on "
            "any-failure to count them"
        )
    shown = f"pass rate {rate:.1%} of {scored} scored"
    if rate < fail_on.threshold:
        return Verdict(
            fail_on, True, f"{shown} is below the required {fail_on.threshold:.1%}", warning
        )
    return Verdict(fail_on, False, f"{shown} meets the required {fail_on.threshold:.1%}", warning)


def exit_code(verdict: Verdict, run_code: int) -> int:
    """The command's exit code given the run's own (its gates and errors) and the verdict."""
    if verdict.fail_on.kind == "any-failure" and verdict.breached:
        return GATE_FAILED
    if run_code == ERRORS_EXCEEDED:
        return ERRORS_EXCEEDED
    return max(run_code, GATE_FAILED if verdict.breached else 0)
