"""Two or more runs side by side (the view's Compare page): one row per task, one column per
run, each later run judged against the first (the reference).

A task's change is `eval show --compare`'s (`reports.compare.task_change`): the one ordering
of outcomes, then a score move within the same outcome past its noise. A run's score against the
reference uses the paired bootstrap interval over shared tasks (the `--baseline` rule): beyond
noise when the interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import ConfigDict, Field

from agentopt.contracts.matrix import VariantScore
from agentopt.contracts.outcomes import outcome_change
from agentopt.contracts.run_results import RunResults
from agentopt.contracts.task_record import TaskOutcome
from agentopt.core.lazy_model import LazyModel
from agentopt.reports.compare import task_change
from agentopt.reports.task_grid import TaskCell, TaskRow, task_rows, task_score

__all__ = ["MultiCell", "MultiColumn", "MultiComparison", "MultiRow", "compare_many"]

PairedCI = Callable[[dict[str, float], dict[str, float], int], object]
"""`evaluators.stats.paired_bootstrap_ci` (base, current, seed) → an object with mean, low,
high — passed in by the caller (reports sit beside evaluators, not above them)."""


class MultiColumn(VariantScore):
    """One compared run: its numbers copied from its summary as a matrix variant's are
    (`label` is the column head), and how it stands against the reference."""

    model: str | None = None
    delta: float | None = None
    """Paired mean (this − reference) over shared scored tasks; None for the reference."""
    delta_ci: list[float] | None = None
    shared: int = 0
    beyond_noise: bool = False
    same_dataset: bool = True
    """False when both runs record a dataset hash and they differ."""


class MultiCell(TaskCell):
    delta: float | None = None
    """score − the reference's score (None for the reference, or without both scores)."""
    change: str = "same"
    """better | worse | changed | same, against the reference."""


class MultiRow(TaskRow[MultiCell]):
    @property
    def changes(self) -> set[str]:
        return {c.change for c in self.cells[1:]}


class MultiComparison(LazyModel):
    model_config = ConfigDict(extra="forbid")

    columns: list[MultiColumn] = Field(default_factory=list)
    rows: list[MultiRow] = Field(default_factory=list)


def _cell(ref: TaskOutcome | None, t: TaskOutcome | None, is_ref: bool) -> MultiCell:
    if t is None:
        gone = "same" if is_ref else outcome_change(ref.status if ref else None, None)
        return MultiCell(change=gone)
    if is_ref:
        return MultiCell.of(t)
    # The one rule of `eval show --compare` (reports/compare.py): outcome order, then score
    # past the noise.
    change = str(task_change(ref, t) if ref is not None else outcome_change(None, t.status))
    score, ref_score = task_score(t), task_score(ref) if ref is not None else None
    delta = None if score is None or ref_score is None else score - ref_score
    return MultiCell.of(t, delta=delta, change=change)


def _column(res: RunResults, ref: RunResults, is_ref: bool, paired: PairedCI | None, seed: int):
    col = MultiColumn.of(
        res.title + (f" [{res.run.variant.label}]" if res.run.variant else ""), res
    )
    col.model = res.run.models.agent or res.run.agent.model
    a_hash, b_hash = ref.run.dataset.sha256, res.run.dataset.sha256
    col.same_dataset = not (a_hash and b_hash and a_hash != b_hash)
    if is_ref or paired is None:
        return col
    a = {t.name: v for t in ref.tasks if (v := task_score(t)) is not None}
    b = {t.name: v for t in res.tasks if (v := task_score(t)) is not None}
    shared = set(a) & set(b)
    col.shared = len(shared)
    found = paired(a, b, seed) if shared else None
    if found is not None:
        mean, low, high = (float(getattr(found, k)) for k in ("mean", "low", "high"))
        col.delta, col.delta_ci = mean, [low, high]
        col.beyond_noise = low > 0 or high < 0
    return col


def compare_many(
    runs: Sequence[RunResults], *, paired_ci: PairedCI | None = None, seed: int = 0
) -> MultiComparison:
    """Rows in the reference's task order, then tasks only later runs have."""
    if not runs:
        return MultiComparison()
    ref = runs[0]
    by_run = [{t.name: t for t in r.tasks} for r in runs]
    ref_tasks = by_run[0]

    def cells(name: str) -> list[MultiCell]:
        return [_cell(ref_tasks.get(name), m.get(name), i == 0) for i, m in enumerate(by_run)]

    columns = [_column(r, ref, i == 0, paired_ci, seed) for i, r in enumerate(runs)]
    return MultiComparison(columns=columns, rows=task_rows(by_run, MultiRow, cells))
