"""`eval show --compare`: per-task and per-evaluator deltas between two runs.

Deltas are `current − base`. Tasks are matched by name; tasks present in only one run are
listed, never silently dropped. A different dataset hash is reported because a score change
then mixes "the agent changed" with "the questions changed".

Whether a task got better or worse is `contracts.outcomes.outcome_change` of its two outcomes
(pass > partial > fail > error > skipped). With the same outcome, the score decides — past the
noise when both runs repeated the task (the change must exceed twice the standard error of the
two means); a single judgment per side has no measured noise, so any score change counts. The
run's score change is "better" or "worse" only when its paired bootstrap interval over the
shared tasks excludes 0 (the `--baseline` gate's rule), else it is within the noise.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentopt.contracts.outcomes import CHANGE_COLOURS, Change, outcome_change, outcome_rank
from agentopt.contracts.run_results import RunResults
from agentopt.contracts.task_record import TaskOutcome
from agentopt.core.atomic import write_text_atomic
from agentopt.core.errors import ConfigError
from agentopt.core.lazy_model import LazyModel
from agentopt.reports.formatting import (
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
NOISE_SE = 2.0
"""A repeated task's mean moved when the change exceeds this many standard errors."""

PairedCI = Callable[[Sequence[float], Sequence[float], int], object]
"""`evaluators.stats.paired_bootstrap_ci` (passed in by the caller: reports sit beside
evaluators, not above them)."""


def _delta(base: float | None, current: float | None) -> float | None:
    return None if base is None or current is None else current - base


def _task_score(task: TaskOutcome) -> float | None:
    return task.mean if task.mean is not None else task.score


def _noise(task: TaskOutcome) -> float | None:
    """Variance of the task's mean score over its repeats (None: one judgment, no noise)."""
    runs = [r.score for r in task.repeats or [] if r.score is not None]
    if len(runs) < 2 or task.std is None:
        return None
    return task.std**2 / len(runs)


def score_change(base: TaskOutcome, current: TaskOutcome) -> Literal["better", "worse", "same"]:
    """Same outcome on both sides: did the score move beyond the noise?"""
    delta = _delta(_task_score(base), _task_score(current))
    if delta is None or abs(delta) <= EPSILON:
        return "same"
    vb, vc = _noise(base), _noise(current)
    if vb is not None and vc is not None and abs(delta) <= NOISE_SE * math.sqrt(vb + vc):
        return "same"
    return "better" if delta > 0 else "worse"


def task_change(base: TaskOutcome, current: TaskOutcome) -> Change:
    """By the outcome order, then (same outcome) by score past the noise."""
    change = outcome_change(base.status, current.status)
    return score_change(base, current) if change == "same" else change


class TaskDelta(LazyModel):
    """One task present in both runs."""

    model_config = ConfigDict(extra="forbid")

    name: str
    base_status: str
    current_status: str
    base_score: float | None = None
    current_score: float | None = None
    delta: float | None = None
    """current − base; None when either side has no score."""
    change: Change = "same"
    """better / worse / changed by the outcome order, else by score past the noise."""

    @property
    def status_changed(self) -> bool:
        return self.base_status != self.current_status

    @property
    def changed(self) -> bool:
        return self.change != "same" or (self.delta is not None and abs(self.delta) > EPSILON)

    @property
    def regressed(self) -> bool:
        """Worse outcome, or the same outcome with a score lower beyond the noise."""
        return self.change == "worse"

    @property
    def improved(self) -> bool:
        return self.change == "better"


class EvaluatorDelta(LazyModel):
    """One evaluator's mean and pass rate in each run (None when absent from that run)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    base_mean: float | None = None
    current_mean: float | None = None
    mean_delta: float | None = None
    base_pass_rate: float | None = None
    current_pass_rate: float | None = None
    pass_rate_delta: float | None = None


class Comparison(LazyModel):
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
    score_ci: list[float] | None = None
    """95% paired bootstrap interval of the mean task-score change over shared tasks."""
    score_change: Change = "same"
    """better / worse when `score_ci` excludes 0; same when it is within the noise (or there
    is no interval to judge by)."""
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
        return [t for t in self.tasks if t.improved]

    @property
    def other_changes(self) -> list[TaskDelta]:
        """Changed without being better or worse (e.g. error ↔ skipped)."""
        return [t for t in self.tasks if t.change == "changed"]


def _run_change(
    base: RunResults, current: RunResults, paired_ci: PairedCI | None, seed: int
) -> tuple[list[float] | None, Change]:
    """The run score's change past the noise: the paired bootstrap over shared scored tasks."""
    if paired_ci is None:
        return None, "same"
    scored = {t.name: s for t in base.tasks if (s := _task_score(t)) is not None}
    pairs = [
        (b, c)
        for t in current.tasks
        if (c := _task_score(t)) is not None and (b := scored.get(t.name)) is not None
    ]
    if len(pairs) < 2:
        return None, "same"
    interval = paired_ci([b for b, _ in pairs], [c for _, c in pairs], seed)
    low, high = getattr(interval, "low", None), getattr(interval, "high", None)
    if low is None or high is None:
        return None, "same"
    change: Change = "better" if low > 0 else "worse" if high < 0 else "same"
    return [float(low), float(high)], change


def compare_runs(
    base: RunResults, current: RunResults, *, paired_ci: PairedCI | None = None, seed: int = 0
) -> Comparison:
    """Compare `current` against `base` (deltas are current − base).

    `paired_ci` (`evaluators.stats.paired_bootstrap_ci`) judges the run score's change against
    the noise; without it the change is shown but not called better or worse.
    """
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
                change=task_change(b, c),
            )
        )
    order = {"worse": 0, "changed": 1, "same": 2, "better": 3}
    deltas.sort(
        key=lambda d: (
            order[d.change],
            outcome_rank(d.current_status) - outcome_rank(d.base_status),
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
    score_ci, run_change = _run_change(base, current, paired_ci, seed)
    return Comparison(
        base_id=base.run.id,
        current_id=current.run.id,
        base_score=base.summary.score,
        current_score=current.summary.score,
        score_delta=_delta(base.summary.score, current.summary.score),
        base_pass_rate=base.summary.pass_rate,
        current_pass_rate=current.summary.pass_rate,
        pass_rate_delta=_delta(base.summary.pass_rate, current.summary.pass_rate),
        score_ci=score_ci,
        score_change=run_change,
        same_dataset=not (b_hash and c_hash and b_hash != c_hash),
        tasks=deltas,
        evaluators=evaluators,
        only_in_base=[t.name for t in base.tasks if t.name not in current_tasks],
        only_in_current=[t.name for t in current.tasks if t.name not in base_tasks],
    )


def _signed(value: float | None, *, pct: bool = False) -> Text:
    style = "" if value is None or abs(value) <= EPSILON else ("green" if value > 0 else "red")
    return Text(fmt_delta(value, pct=pct), style=style)


def _run_score(comp: Comparison) -> Text:
    """The run score's change, coloured only past the noise."""
    if comp.score_ci is None:
        return _signed(comp.score_delta)
    text = Text(fmt_delta(comp.score_delta), style=CHANGE_COLOURS[comp.score_change])
    lo, hi = comp.score_ci
    verdict = "within the noise" if comp.score_change == "same" else comp.score_change
    text.append(f", {verdict}: 95% CI {lo:+.3f} … {hi:+.3f}")
    return text


def render_comparison(comp: Comparison, console: Console, *, limit: int = 30) -> None:
    """Print the comparison: totals, per-evaluator deltas, changed tasks, unmatched tasks."""
    head = Text(f"{comp.current_id} vs {comp.base_id}", style="bold")
    head.append(f"\nScore {fmt_score(comp.base_score)} → {fmt_score(comp.current_score)} (")
    head.append_text(_run_score(comp))
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
            title=f"Changed tasks ({len(comp.regressions)} worse, {len(comp.improvements)} "
            f"better, {len(comp.other_changes)} changed)",
            title_justify="left",
        )
        for col in ("Task", "Change", "Status", "Score", "Δ"):
            table.add_column(col, justify="right" if col in {"Score", "Δ"} else "left")
        for t in changed[:limit]:
            colour = CHANGE_COLOURS[t.change]
            status = Text(t.base_status)
            if t.status_changed:
                status.append(" → ")
                status.append(t.current_status, style=colour)
            table.add_row(
                Text(truncate(t.name, 36)),
                Text(t.change, style=colour),
                status,
                f"{fmt_score(t.base_score)} → {fmt_score(t.current_score)}",
                Text(fmt_delta(t.delta), style=colour),
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
    # The HTML keeps the colours (worse red, better green); text and Markdown are plain.
    console = Console(
        record=True,
        width=120,
        file=io.StringIO(),
        color_system="truecolor" if ext == ".html" else None,
    )
    render_comparison(comp, console)
    if ext == ".html":
        text = console.export_html(inline_styles=True)
    else:
        body = console.export_text()
        text = f"```text\n{body}```\n" if ext == ".md" else body
    write_text_atomic(path, text)
    return path
