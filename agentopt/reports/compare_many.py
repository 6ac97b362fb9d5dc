"""Two or more runs side by side (the view's Compare page): one row per task, one column per
run, each later run judged against the first (the reference).

A task's change is `eval show --compare`'s (`reports.compare.task_change`): the one ordering
of outcomes, then a score move within the same outcome past its noise. A run's score against the
reference uses the paired bootstrap interval over shared tasks (the `--baseline` rule): beyond
noise when the interval excludes 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from agentopt.contracts.outcomes import outcome_change
from agentopt.contracts.run_results import RunResults
from agentopt.contracts.task_record import TaskOutcome
from agentopt.reports.compare import task_change

__all__ = ["MultiCell", "MultiColumn", "MultiComparison", "MultiRow", "compare_many"]

PairedCI = Callable[[dict[str, float], dict[str, float], int], object]
"""`evaluators.stats.paired_bootstrap_ci` (base, current, seed) → an object with mean, low,
high — passed in by the caller (reports sit beside evaluators, not above them)."""


class MultiColumn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    title: str
    model: str | None = None
    score: float | None = None
    score_ci: list[float] | None = None
    pass_rate: float = 0.0
    passed: int = 0
    failed: int = 0
    partial: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    delta: float | None = None
    """Paired mean (this − reference) over shared scored tasks; None for the reference."""
    delta_ci: list[float] | None = None
    shared: int = 0
    beyond_noise: bool = False
    same_dataset: bool = True
    """False when both runs record a dataset hash and they differ."""


class MultiCell(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: str | None = None
    """None: the task is not in this run."""
    score: float | None = None
    delta: float | None = None
    """score − the reference's score (None for the reference, or without both scores)."""
    change: str = "same"
    """better | worse | changed | same, against the reference."""
    response: str = ""
    error: str | None = None


class MultiRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: str
    category: str | None = None
    query: str = ""
    cells: list[MultiCell] = Field(default_factory=list)

    @property
    def changes(self) -> set[str]:
        return {c.change for c in self.cells[1:]}


class MultiComparison(BaseModel):
    model_config = ConfigDict(extra="forbid")

    columns: list[MultiColumn] = Field(default_factory=list)
    rows: list[MultiRow] = Field(default_factory=list)


def _score(t: TaskOutcome) -> float | None:
    return t.mean if t.mean is not None else t.score


def _cell(ref: TaskOutcome | None, t: TaskOutcome | None, is_ref: bool) -> MultiCell:
    if t is None:
        gone = "same" if is_ref else outcome_change(ref.status if ref else None, None)
        return MultiCell(change=gone)
    score = _score(t)
    error = f"{t.error.code}: {t.error.message}" if t.error else None
    if is_ref:
        return MultiCell(status=t.status, score=score, response=t.response, error=error)
    # The one rule of `eval show --compare` (reports/compare.py): outcome order, then score
    # past the noise.
    change = str(task_change(ref, t) if ref is not None else outcome_change(None, t.status))
    ref_score = _score(ref) if ref is not None else None
    delta = None if score is None or ref_score is None else score - ref_score
    return MultiCell(
        status=t.status, score=score, delta=delta, change=change, response=t.response, error=error
    )


def _column(res: RunResults, ref: RunResults, is_ref: bool, paired: PairedCI | None, seed: int):
    s = res.summary
    col = MultiColumn(
        run_id=res.run.id,
        title=res.title + (f" [{res.run.variant.label}]" if res.run.variant else ""),
        model=res.run.models.agent or res.run.agent.model,
        score=s.score,
        score_ci=s.score_ci,
        pass_rate=s.pass_rate,
        passed=s.passed,
        failed=s.failed,
        partial=s.partial,
        errors=s.errors,
        cost_usd=s.cost_usd,
    )
    a_hash, b_hash = ref.run.dataset.sha256, res.run.dataset.sha256
    col.same_dataset = not (a_hash and b_hash and a_hash != b_hash)
    if is_ref or paired is None:
        return col
    a = {t.name: v for t in ref.tasks if (v := _score(t)) is not None}
    b = {t.name: v for t in res.tasks if (v := _score(t)) is not None}
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
    names: dict[str, None] = {}
    for r in runs:
        for t in r.tasks:
            names.setdefault(t.name)
    rows = []
    for name in names:
        first = next(m[name] for m in by_run if name in m)
        ref_task = by_run[0].get(name)
        cells = [_cell(ref_task, m.get(name), i == 0) for i, m in enumerate(by_run)]
        rows.append(MultiRow(task=name, category=first.category, query=first.query, cells=cells))
    columns = [_column(r, ref, i == 0, paired_ci, seed) for i, r in enumerate(runs)]
    return MultiComparison(columns=columns, rows=rows)
