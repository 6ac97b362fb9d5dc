"""The end-of-run summary (cli.md `eval run`) and the run list of `eval list`, with rich.

Everything that comes from data is wrapped in `Text`, never parsed as markup: a response
containing "[bold]" or "[/]" prints as written. Tables stay readable at 80 columns on a
non-TTY (long reasons wrap, names are truncated).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field
from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentopt.contracts.outcomes import OUTCOME_COLOURS, OutcomeCounts
from agentopt.contracts.run_results import RunResults, TaskOutcome
from agentopt.core.lazy_model import LazyModel
from agentopt.reports.cells import SummaryCells, bucket_cells, evaluator_cells, usage_cells
from agentopt.reports.formatting import (
    LEGEND,
    SUMMARY_TOP,
    calls_text,
    findings,
    flaky_tasks,
    fmt_int,
    fmt_pct,
    fmt_score,
    fmt_seconds,
    fmt_when,
    slowest_tasks,
    tally_text,
    truncate,
    worst_tasks,
)
from agentopt.reports.terminal_task import render_task

__all__ = ["STATUS_STYLE", "RunHeader", "render_run_list", "render_summary", "render_task"]

STATUS_STYLE = OUTCOME_COLOURS
RUN_STATUS_NOTE = {
    "interrupted": "interrupted — partial results",
    "budget_exhausted": "stopped: budget exhausted — partial results",
    "too_many_errors": "stopped: too many errors — partial results",
}
REASON_WIDTH = 160
TEXT_COLUMNS = {"Evaluator", "Task", "Run", "Status", "Why", "Date", "Dataset", "Usage", "Model"}
"""Left-aligned columns; every other column holds a number and is right-aligned."""


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def _table(*columns: str, title: str | None = None) -> Table:
    table = Table(
        box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False, show_edge=False
    )
    for col in columns:
        table.add_column(col, justify="left" if col in TEXT_COLUMNS else "right")
    return table


def summary_renderables(results: RunResults, *, top: int = SUMMARY_TOP) -> list[RenderableType]:
    """The summary as renderables, for callers that lay it out themselves."""
    run, summary = results.run, results.summary
    parts: list[RenderableType] = [_header(results)]
    note = RUN_STATUS_NOTE.get(str(run.status))
    if note:
        parts.append(Text(f"⚠ {note}", style="yellow"))

    if summary.evaluators:
        table = _table("Evaluator", "Pass rate", "Mean", "Pass", "Fail", "Errors")
        for ev in summary.evaluators:
            *numbers, errors = evaluator_cells(ev)
            table.add_row(
                Text(ev.name), *numbers, Text(errors, style="magenta" if ev.errors else "")
            )
        parts.append(table)

    cells = SummaryCells.of(results)
    score = Text("Score ", style="bold")
    score.append(cells.score, style="bold cyan")
    if cells.ci:
        score.append(f"  ({cells.ci})")
    parts.append(score)
    counts = summary.counts
    parts.append(
        Text(
            f"Pass rate {cells.pass_rate} ({counts.passed}/{counts.runs} task runs)"
            f" · {tally_text(counts)}"
        )
    )
    if counts.partial or counts.errors:
        parts.append(Text(f"  ({LEGEND})", style="dim"))
    goal = next((e for e in summary.evaluators if e.name == "builtin.goal_reached"), None)
    if goal is not None:
        line = f"Simulated users: goal reached in {goal.passed} of {goal.count} conversations"
        if summary.turns_to_goal is not None:
            line += f", after {summary.turns_to_goal:.1f} agent turns on average"
        parts.append(Text(line))
    calls = calls_text(counts, summary.errors_by_kind)
    if calls:
        parts.append(Text(f"Errors: {calls}", style="magenta"))
    if summary.usage:
        parts.append(_usage_table(results))
    if summary.limiter:
        parts.append(Text(f"Limiter: {summary.limiter}", style="dim"))
    if results.tasks:
        parts.append(_slowest(results, top))
    worst = worst_tasks(results, top)
    if worst:
        parts.append(_worst(worst))
    flaky = flaky_tasks(results)
    if flaky:
        parts.append(_flaky(flaky))
    return parts


def render_summary(results: RunResults, console: Console, *, top: int = SUMMARY_TOP) -> None:
    """Print the end-of-run summary (a blank line before each table)."""
    spaced: list[RenderableType] = []
    for part in summary_renderables(results, top=top):
        if isinstance(part, Table):
            spaced.append(Text(""))
        spaced.append(part)
    console.print(Group(*spaced))


def _header(results: RunResults) -> Text:
    run = results.run
    text = Text("Run ", style="bold")
    text.append(run.id, style="bold")
    if run.name:
        text.append(f"  {run.name}")
    bits = []
    if run.dataset.name:
        version = f" v{run.dataset.version}" if run.dataset.version else ""
        bits.append(f"dataset {run.dataset.name}{version}")
    agent = run.agent.name or run.agent.target
    remote = run.remote
    if remote is not None:
        version = f" v{remote.agent_version}" if remote.agent_version else ""
        bits.append(f"agent {remote.agent or agent}{version} in Foundry (run {remote.run_id})")
    elif agent:
        model = run.models.agent or run.agent.model
        bits.append(f"agent {agent}" + (f" ({model})" if model else ""))
    if run.models.judge:
        bits.append(f"judge {run.models.judge}")
    if run.repeat and run.repeat > 1:
        bits.append(f"repeat ×{run.repeat}")
    bits.append(f"{results.summary.tasks or len(results.tasks)} tasks")
    bits.append(fmt_seconds(results.summary.duration_s))
    text.append("\n" + " · ".join(bits), style="dim")
    if remote is not None and remote.report_url:
        text.append(f"\nReport: {remote.report_url}", style="dim")
    return text


def _usage_table(results: RunResults) -> Table:
    summary = results.summary
    table = _table("Usage", "Calls", "Input tok", "Output tok", "Cost", "Cache hits")
    calls = tin = tout = 0
    for kind in ("agent", "simulator", "judge", "generator"):
        bucket = summary.usage.get(kind)
        if bucket is None or (kind == "generator" and not bucket.calls):
            continue
        if kind == "simulator" and not (bucket.calls or bucket.cache_hits):
            continue
        calls, tin, tout = (
            calls + bucket.calls,
            tin + bucket.input_tokens,
            tout + bucket.output_tokens,
        )
        table.add_row(kind, *bucket_cells(bucket))
    table.add_row(
        Text("total", style="bold"),
        *usage_cells(calls, tin, tout, summary.cost_usd, summary.cache_hits),
    )
    return table


def _slowest(results: RunResults, top: int) -> Table:
    table = _table("Task", "Status", "Latency", "Tokens", title="Slowest tasks")
    for task in slowest_tasks(results, top):
        table.add_row(
            Text(truncate(task.name, 40)),
            status_text(task.status),
            fmt_seconds(task.latency_s),
            fmt_int(task.tokens.input + task.tokens.output),
        )
    return table


def _worst(tasks: list[TaskOutcome]) -> Table:
    table = _table("Task", "Status", "Score", "Why", title="Worst tasks")
    table.columns[3].overflow = "fold"
    for task in tasks:
        reasons = [truncate(str(f), REASON_WIDTH) for f in findings(task)[:3]]
        table.add_row(
            Text(truncate(task.name, 28)),
            status_text(task.status),
            fmt_score(task.score),
            Text("\n".join(reasons) or "—"),
        )
    return table


def _flaky(tasks: list[TaskOutcome]) -> Table:
    table = _table("Task", "Mean", "Std", "Pass fraction", title="Flaky tasks (verdicts differ)")
    for task in tasks:
        table.add_row(
            Text(truncate(task.name, 40)),
            fmt_score(task.mean),
            fmt_score(task.std),
            fmt_pct(task.pass_fraction),
        )
    return table


class RunHeader(LazyModel):
    """One row of `eval list`: what identifies a run and how it went."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str | None = None
    started_at: str | None = None
    status: str = "completed"
    dataset: str | None = None
    dataset_version: str | None = None
    tasks: int = 0
    score: float | None = None
    pass_rate: float | None = None
    counts: OutcomeCounts = Field(default_factory=OutcomeCounts)
    """The run summary's tally, as it is."""

    @property
    def errors(self) -> int:
        """Calls that failed after retries (the `Errors` of the summary and of this list)."""
        return self.counts.failed_calls

    @classmethod
    def from_results(cls, results: RunResults) -> RunHeader:
        run, summary = results.run, results.summary
        return cls(
            id=run.id,
            name=run.name,
            started_at=run.started_at,
            status=str(run.status),
            dataset=run.dataset.name,
            dataset_version=run.dataset.version,
            tasks=summary.tasks or len(results.tasks),
            score=summary.score,
            pass_rate=summary.pass_rate,
            counts=summary.counts,
        )


def render_run_list(headers: list[RunHeader], console: Console) -> None:
    """The `eval list` table, newest first as given."""
    if not headers:
        console.print("No runs yet. Start one with `agentopt eval run`.", markup=False)
        return
    # "Errors": the calls that failed after retries, as the summary's "Errors:" line and
    # --max-errors count them (not the `error` class of task runs).
    table = _table("Run", "Date", "Dataset", "Score", "Pass", "Errors")
    for col in table.columns:
        col.no_wrap = col.header != "Dataset"
    table.columns[2].overflow = "fold"
    for h in headers:
        dataset = (h.dataset or "—") + (f" ({h.dataset_version})" if h.dataset_version else "")
        run = Text(h.id)
        if h.name:
            run.append("\n" + truncate(h.name, 22), style="bold")
        if h.status != "completed":
            run.append(f"\n[{h.status}]", style="yellow")
        table.add_row(
            run,
            fmt_when(h.started_at),
            Text(dataset),
            fmt_score(h.score),
            fmt_pct(h.pass_rate),
            Text(str(h.counts.failed_calls), style="magenta" if h.counts.failed_calls else ""),
        )
    console.print(table)
