"""Quality gates and the exit code of `eval run` (cli.md exit codes).

Precedence: infrastructure errors beyond tolerance (3) make every verdict unknown, so they win
over a failed quality gate (1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

PairedCI = Callable[[Sequence[float], Sequence[float], int], tuple[float, float, float]]


@dataclass
class GateSettings:
    """The gate flags of `eval run`."""

    fail_under: float | None = None
    min_pass_rate: float | None = None
    max_errors: int | None = None
    """None = 0 at the end of the run (any error means the verdict is unknown)."""


@dataclass
class GateOutcome:
    """What the gates found; `exit_code` is what the process returns."""

    failures: list[str] = field(default_factory=list)
    error_count: int = 0
    errors_exceeded: bool = False
    regression: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        if self.errors_exceeded:
            return 3
        return 1 if self.failures else 0


def count_errors(summary: dict[str, Any]) -> int:
    """Agent and evaluator calls that still failed after retries. Turns skipped after a failed
    turn were never sent: they are not errors of their own (as in the mid-run count)."""
    kinds = summary.get("errors_by_kind", {})
    return int(sum(v for k, v in kinds.items() if k != "turnSkipped"))


def check_gates(
    summary: dict[str, Any],
    settings: GateSettings,
    *,
    regression: dict[str, Any] | None = None,
) -> GateOutcome:
    """Apply --fail-under, --min-pass-rate, the baseline comparison and --max-errors."""
    out = GateOutcome(error_count=count_errors(summary), regression=regression)
    limit = settings.max_errors if settings.max_errors is not None else 0
    out.errors_exceeded = out.error_count > limit
    score = summary.get("score")
    if settings.fail_under is not None:
        if score is None:
            out.failures.append(f"--fail-under {settings.fail_under}: the run has no score")
        elif score < settings.fail_under:
            out.failures.append(f"score {score:.3f} is below --fail-under {settings.fail_under}")
    if settings.min_pass_rate is not None:
        rate = float(summary.get("pass_rate") or 0.0)
        if rate < settings.min_pass_rate:
            out.failures.append(
                f"pass rate {rate:.1%} is below --min-pass-rate {settings.min_pass_rate:.1%}"
            )
    if regression and regression.get("regressed"):
        out.failures.append(
            f"score dropped {regression['delta']:+.3f} against the baseline "
            f"{regression['baseline']} (95% CI {regression['ci'][0]:+.3f} … "
            f"{regression['ci'][1]:+.3f} over {regression['shared']} shared tasks)"
        )
    return out


def compare_to_baseline(
    current: dict[str, Any],
    baseline: dict[str, Any],
    baseline_ref: str,
    paired_ci: PairedCI,
    seed: int = 0,
) -> dict[str, Any]:
    """Paired bootstrap over shared task names; a regression is a CI entirely below zero."""
    base_scores = {
        t["name"]: t.get("mean", t.get("score"))
        for t in baseline.get("tasks", [])
        if t.get("score") is not None
    }
    pairs = [
        (float(t.get("mean", t.get("score"))), float(base_scores[t["name"]]))
        for t in current.get("tasks", [])
        if t.get("score") is not None and base_scores.get(t["name"]) is not None
    ]
    if not pairs:
        return {
            "baseline": baseline_ref,
            "shared": 0,
            "delta": 0.0,
            "ci": [0.0, 0.0],
            "regressed": False,
            "note": "no shared scored tasks",
        }
    cur = [a for a, _ in pairs]
    base = [b for _, b in pairs]
    delta, lo, hi = paired_ci(cur, base, seed)
    return {
        "baseline": baseline_ref,
        "shared": len(pairs),
        "delta": delta,
        "ci": [lo, hi],
        "regressed": hi < 0,
    }
