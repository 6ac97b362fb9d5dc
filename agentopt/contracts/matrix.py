"""A matrix run (`eval run --agent-model A --agent-model B …`, eval.yaml `variants:`): the same
tasks played against several variants of the agent in one command. Each variant is an ordinary
run (`.agentopt/runs/<run-id>/`, its `run.variant` naming the matrix); the matrix itself is
`.agentopt/matrices/<matrix-id>/matrix.json` (`MatrixRecord`): which runs it holds and which
variant is best, decided once, with its paired noise rule, and shown the same by every view.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Self

from pydantic import Field

from agentopt.contracts.record import Record, VersionedRecord, parse_record
from agentopt.core.errors import InputError
from agentopt.core.files import bounded

if TYPE_CHECKING:
    from agentopt.contracts.run_results import RunResults

MATRIX_HINT = "is this a matrix.json written by agentopt?"


class VariantTag(Record):
    """On a variant's own run (`run.variant`): the matrix it belongs to, and its label."""

    matrix: str
    label: str


class VariantSpec(Record):
    """One variant: what it changes in the agent under test."""

    label: str
    """Shown as its column head, e.g. `gpt-4.1-mini · terse`."""
    model: str | None = None
    """The agent model (None: the agent's own)."""
    instructions: str | None = None
    """The instructions text (None: the agent's own)."""
    instructions_source: str | None = None
    """Where the text came from: `@prompts/terse.md`, `eval.yaml variants[1]`, `--instructions`."""


class VariantScore(Record):
    """A variant's run and the numbers its summary holds (copied, never recounted)."""

    label: str
    run_id: str
    score: float | None = None
    score_ci: list[float] | None = None
    pass_rate: float = 0.0
    passed: int = 0
    failed: int = 0
    partial: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    status: str = "completed"

    @classmethod
    def of(cls, label: str, results: RunResults) -> Self:
        """The numbers `results`' summary holds, as they are (nothing is recounted)."""
        s = results.summary
        return cls(
            label=label,
            run_id=results.run.id,
            score=s.score,
            score_ci=s.score_ci,
            pass_rate=s.pass_rate,
            passed=s.passed,
            failed=s.failed,
            partial=s.partial,
            errors=s.errors,
            cost_usd=s.cost_usd,
            status=str(results.run.status),
        )


class BestVariant(Record):
    """Which variant scored best, and whether it beats the runner-up beyond the noise."""

    label: str
    runner_up: str | None = None
    """None when there is no other variant with a score."""
    delta: float | None = None
    """Mean paired (best − runner-up) over the tasks both scored."""
    ci: list[float] | None = None
    """95% paired bootstrap interval of `delta`, [low, high]."""
    shared: int = 0
    """Tasks scored by both."""
    beyond_noise: bool = False
    """The interval excludes 0: the best is better, not lucky."""

    def line(self) -> str:
        """The one sentence every view prints."""
        if self.runner_up is None or self.delta is None or self.ci is None:
            return f"Best variant: {self.label} (no other variant to compare with)"
        verdict = "beyond noise" if self.beyond_noise else "within noise: not shown better"
        return (
            f"Best variant: {self.label}, {self.delta:+.3f} vs {self.runner_up} "
            f"(paired 95% CI {self.ci[0]:+.3f} … {self.ci[1]:+.3f}, {self.shared} tasks): "
            f"{verdict}"
        )


class MatrixRecord(VersionedRecord):
    """matrix.json."""

    id: str
    name: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    status: str = "running"
    variants: list[VariantSpec] = Field(default_factory=list)
    runs: list[VariantScore] = Field(default_factory=list)
    """One per variant, in the variants' order (filled as each run finishes)."""
    best: BestVariant | None = None

    def run_of(self, label: str) -> VariantScore | None:
        return next((r for r in self.runs if r.label == label), None)

    def spec_of(self, label: str) -> VariantSpec | None:
        return next((v for v in self.variants if v.label == label), None)


def load_matrix(path: Path) -> MatrixRecord:
    """Read a matrix.json (InputError naming the file when it is broken)."""
    shown = str(path)
    try:
        data = bounded.loads(bounded.read_text(Path(path), shown=shown, kind="results"))
    except ValueError as exc:
        raise InputError.at(shown, "", f"not valid JSON: {exc}") from exc
    return parse_record(MatrixRecord, data, source=shown, hint=MATRIX_HINT)
