"""`eval show --compare`: per-task and per-evaluator deltas between two runs.

Deltas are `current − base`. Tasks are matched by name; tasks present in only one run are
listed, never silently dropped. A different dataset hash is reported because a score change
then mixes "the agent changed" with "the questions changed".
"""

from __future__ import annotations

import io
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentopt.contracts.run_results import RunResults
from agentopt.core.atomic import write_text_atomic
from agentopt.core.errors import ConfigError
from agentopt.reports.formatting import (
    STATUS_ORDER,
    fmt_delta,
    fmt_pct,
    fmt_score,
    truncate,
)

__all__ = [
    "Comparison",
    "EvaluatorDelta",
    "TaskDelta",
    "compare_runs",
    "render_comparison",
    "write_comparison",
]
COMPARISON_FORMATS = (".json", ".html", ".md", ".txt")

EPSILON = 1e-9


def _delta(base: float | None, current: float | None) -> float | None:
    return None if base is None or current is None else current - base


class TaskDelta(BaseModel):
    """One task present in both runs."""

    model_config = ConfigDict(extra="forbid")

    name: str
    base_status: str
    current_status: str
    base_score: float | None = None
    current_score: float | None = None
    delta: float | None = None
    """current − base; None when either side has no score."""

    @property
    def status_changed(self) -> bool:
        return self.base_status != self.current_status

    @property
    def changed(self) -> bool:
        return self.status_changed or (self.delta is not None and abs(self.delta) > EPSILON)

    @property
    def regressed(self) -> bool:
        """Worse status, or same status with a lower score."""
        b, c = STATUS_ORDER[self.base_status], STATUS_ORDER[self.current_status]
        return c < b or (c == b and self.delta is not None and self.delta < -EPSILON)


class EvaluatorDelta(BaseModel):
    """One evaluator's mean and pass rate in each run (None when absent from that run)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    base_mean: float | None = None
    current_mean: float | None = None
    mean_delta: float | None = None
    base_pass_rate: float | None = None
    current_pass_rate: float | None = None
    pass_rate_delta: float | None = None


class Comparison(BaseModel):
    """Everything `eval show --compare` prints."""

    model_config = ConfigDict(extra="forbid")

    base_id: str
    current_id: str
    base_score: float | None = None
    current_score: float | None = None
    score_delta: float | None = None
    base_pass_rate: float | None = None
    current_pass_rate: float | None = None
    pass_rate_delta: float | None = None
    same_dataset: bool = True
    """False when both runs record a dataset hash and the hashes differ."""
    tasks: list[TaskDelta] = Field(default_factory=list)
    """Shared tasks, biggest regression first."""
    evaluators: list[EvaluatorDelta] = Field(default_factory=list)
    only_in_base: list[str] = Field(default_factory=list)
    only_in_current: list[str] = Field(default_factory=list)

    @property
    def regressions(self) -> list[TaskDelta]:
        return [t for t in self.tasks if t.regressed]

    @property
    def improvements(self) -> list[TaskDelta]:
        return [t for t in self.tasks if t.changed and not t.regressed]


def compare_runs(base: RunResults, current: RunResults) -> Comparison:
    """Compare `current` against `base` (deltas are current − base)."""
    base_tasks = {t.name: t for t in base.tasks}
    current_tasks = {t.name: t for t in current.tasks}
    shared = [t.name for t in current.tasks if t.name in base_tasks]
    deltas = []
    for name in shared:
        b, c = base_tasks[name], current_tasks[name]
        deltas.append(
            TaskDelta(
                name=name,
                base_status=b.status,
                current_status=c.status,
                base_score=b.score,
                current_score=c.score,
                delta=_delta(b.score, c.score),
            )
        )
    deltas.sort(
        key=lambda d: (
            STATUS_ORDER[d.current_status] - STATUS_ORDER[d.base_status],
            d.delta if d.delta is not None else 0.0,
        )
    )

    base_ev = {e.name: e for e in base.summary.evaluators}
    current_ev = {e.name: e for e in current.summary.evaluators}
    evaluators = []
    for name in dict.fromkeys([*base_ev, *current_ev]):
        b_ev, c_ev = base_ev.get(name), current_ev.get(name)
        b_mean, c_mean = b_ev.mean if b_ev else None, c_ev.mean if c_ev else None
        b_rate, c_rate = b_ev.pass_rate if b_ev else None, c_ev.pass_rate if c_ev else None
        evaluators.append(
            EvaluatorDelta(
                name=name,
                base_mean=b_mean,
                current_mean=c_mean,
                mean_delta=_delta(b_mean, c_mean),
                base_pass_rate=b_rate,
                current_pass_rate=c_rate,
                pass_rate_delta=_delta(b_rate, c_rate),
            )
        )

    b_hash, c_hash = base.run.dataset.sha256, current.run.dataset.sha256
    return Comparison(
        base_id=base.run.id,
        current_id=current.run.id,
        base_score=base.summary.score,
        current_score=current.summary.score,
        score_delta=_delta(base.summary.score, current.summary.score),
        base_pass_rate=base.summary.pass_rate,
        current_pass_rate=current.summary.pass_rate,
        pass_rate_delta=_delta(base.summary.pass_rate, current.summary.pass_rate),
        same_dataset=not (b_hash and c_hash and b_hash != c_hash),
        tasks=deltas,
        evaluators=evaluators,
        only_in_base=[t.name for t in base.tasks if t.name not in current_tasks],
        only_in_current=[t.name for t in current.tasks if t.name not in base_tasks],
    )


def _signed(value: float | None, *, pct: bool = False) -> Text:
    style = "" if value is None or abs(value) <= EPSILON else ("green" if value > 0 else "red")
    return Text(fmt_delta(value, pct=pct), style=style)


def render_comparison(comp: Comparison, console: Console, *, limit: int = 30) -> None:
    """Print the comparison: totals, per-evaluator deltas, changed tasks, unmatched tasks."""
    head = Text(f"{comp.current_id} vs {comp.base_id}", style="bold")
    head.append(f"\nScore {fmt_score(comp.base_score)} → {fmt_score(comp.current_score)} (")
    head.append_text(_signed(comp.score_delta))
    head.append(
        f")   pass rate {fmt_pct(comp.base_pass_rate)} → {fmt_pct(comp.current_pass_rate)} ("
    )
    head.append_text(_signed(comp.pass_rate_delta, pct=True))
    head.append(")")
    console.print(head)
    if not comp.same_dataset:
        console.print(
            Text("⚠ the runs used different dataset contents (sha256 differs)", style="yellow")
        )

    if comp.evaluators:
        console.print()
        table = Table(
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            show_edge=False,
            title="Evaluators",
            title_justify="left",
        )
        for col in ("Evaluator", "Mean", "Δ mean", "Pass rate", "Δ pass rate"):
            table.add_column(col, justify="left" if col == "Evaluator" else "right")
        for ev in comp.evaluators:
            table.add_row(
                Text(ev.name),
                f"{fmt_score(ev.base_mean)} → {fmt_score(ev.current_mean)}",
                _signed(ev.mean_delta),
                f"{fmt_pct(ev.base_pass_rate)} → {fmt_pct(ev.current_pass_rate)}",
                _signed(ev.pass_rate_delta, pct=True),
            )
        console.print(table)

    changed = [t for t in comp.tasks if t.changed]
    if changed:
        console.print()
        table = Table(
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            show_edge=False,
            title=f"Changed tasks ({len(comp.regressions)} worse, {len(comp.improvements)} better)",
            title_justify="left",
        )
        for col in ("Task", "Status", "Score", "Δ"):
            table.add_column(col, justify="right" if col in {"Score", "Δ"} else "left")
        for t in changed[:limit]:
            status = Text(t.base_status)
            if t.status_changed:
                status.append(" → ")
                status.append(t.current_status, style="red" if t.regressed else "green")
            table.add_row(
                Text(truncate(t.name, 36)),
                status,
                f"{fmt_score(t.base_score)} → {fmt_score(t.current_score)}",
                _signed(t.delta),
            )
        console.print(table)
        if len(changed) > limit:
            console.print(f"… and {len(changed) - limit} more changed tasks", markup=False)
    unchanged = len(comp.tasks) - len(changed)
    console.print(f"{unchanged} of {len(comp.tasks)} shared tasks unchanged", markup=False)
    for label, names in (
        (f"Only in {comp.base_id}", comp.only_in_base),
        (f"Only in {comp.current_id}", comp.only_in_current),
    ):
        if names:
            shown = ", ".join(names[:10]) + (f", … ({len(names)})" if len(names) > 10 else "")
            console.print(Text(f"{label}: {shown}", style="dim"))


def write_comparison(comp: Comparison, path: Path) -> Path:
    """Export a comparison: JSON (the deltas), HTML, Markdown or text (what the terminal shows)."""
    ext = path.suffix.lower()
    if ext not in COMPARISON_FORMATS:
        raise ConfigError(
            f"--out-file {path.name}: a comparison exports to {', '.join(COMPARISON_FORMATS)}"
        )
    if ext == ".json":
        write_text_atomic(path, comp.model_dump_json(indent=2) + "\n")
        return path
    console = Console(record=True, width=120, file=io.StringIO(), color_system=None)
    render_comparison(comp, console)
    if ext == ".html":
        text = console.export_html(inline_styles=True)
    else:
        body = console.export_text()
        text = f"```text\n{body}```\n" if ext == ".md" else body
    write_text_atomic(path, text)
    return path
