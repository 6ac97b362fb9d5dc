"""Terminal renderings of optimize: the plan, the final report, `status`, `list`, `show`.

Each function returns rich renderables; the CLI prints them. The final report says plainly
when nothing beat the baseline, and shows the test split and the optimism gap.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentopt.contracts.optimize_job import (
    BASELINE_ID,
    CandidateRecord,
    Estimate,
    JobRecord,
    OptimizePlan,
    ScoreSummary,
)
from agentopt.models.resolve import shown_model
from agentopt.reports.formatting import fmt_when
from agentopt.reports.optimize_diff import changed_lines, unified_diff
from agentopt.reports.optimize_table import candidates_table, error_line

DIFF_LINES = 12


def _est(e: Estimate) -> str:
    return f"{e.calls:,} calls, ~{e.input_tokens + e.output_tokens:,} tokens, ${e.cost_usd:.4f}"


def plan_renderables(plan: OptimizePlan, *, dry_run: bool = False) -> list[RenderableType]:
    """What the job will do and roughly cost (the first thing printed)."""
    title = "Optimization plan" + (" (dry run: nothing was sent)" if dry_run else "")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("Agent", f"{plan.agent}  (model {shown_model(plan.agent_model) or '-'})")
    grid.add_row("Targets", ", ".join(plan.targets) + f"   proposers: {', '.join(plan.proposers)}")
    if plan.model_search_space:
        grid.add_row("Model space", ", ".join(plan.model_search_space))
    grid.add_row(
        "Models",
        f"eval {plan.eval_model or '-'}, optimization "
        f"{plan.optimization_model or '(none: rule proposer only)'}",
    )
    grid.add_row("Splits", f"train {plan.train}, validation {plan.validation}, test {plan.test}")
    grid.add_row(
        "Search",
        f"up to {plan.max_candidates} candidates; stop after {plan.max_stalls} failed "
        "screenings in a row that move no train task (more while more failure groups are "
        f"left), or {plan.max_empty} proposals in a row with nothing new; "
        f"{plan.parallel_proposals} proposals at once, screening on {plan.screening_size} "
        "train tasks",
    )
    grid.add_row("Baseline", _est(plan.baseline))
    grid.add_row(
        "Per candidate",
        _est(plan.per_candidate)
        + (
            f" + reflection {_est(plan.per_proposal_reflection)}"
            if plan.per_proposal_reflection.calls
            else ""
        ),
    )
    if plan.test:
        grid.add_row("Test split", _est(plan.test_split))
    grid.add_row("Estimated total", _est(plan.total) + "  (token counts are estimates)")
    caps = []
    caps.append(f"--budget-calls {plan.budget_calls}" if plan.budget_calls else "no call cap")
    caps.append(f"--max-cost ${plan.max_cost:.2f}" if plan.max_cost is not None else "no cost cap")
    caps.append("real tools" if plan.real_tools else "tool mocks (--real-tools to call real ones)")
    grid.add_row("Caps", "; ".join(caps))
    out: list[RenderableType] = [Text(title, style="bold"), grid]
    if plan.split_warning:
        out.append(Text(f"warning: {plan.split_warning}", style="yellow"))
    out += [Text(f"note: {n}", style="dim") for n in plan.notes]
    return out


def _score(s: ScoreSummary | None) -> str:
    if s is None or s.score is None:
        return "-"
    ci = f" (95% CI {s.ci[0]:.3f}–{s.ci[1]:.3f})" if s.ci else ""
    return f"{s.score:.3f}{ci}, pass {s.pass_rate * 100:.0f}% of {s.n}"


def instruction_diff_lines(
    instructions: dict[str, str], cand: str, limit: int = DIFF_LINES
) -> list[str]:
    old, new = instructions.get(BASELINE_ID, ""), instructions.get(cand, "")
    return changed_lines(unified_diff(old, new), limit)


def _diff_text(lines: list[str]) -> Text:
    text = Text()
    styles = {"+": "green", "-": "red", "@": "cyan"}
    for line in lines:
        style = "bold" if line.startswith(("+++", "---")) else styles.get(line[:1], "")
        text.append("    " + line + "\n", style=style)
    return text


def _verdict(job: JobRecord, best: CandidateRecord | None) -> list[RenderableType]:
    base = job.baseline
    if best is None or base is None:
        return [Text("No candidate could be ranked (the baseline was not fully evaluated).")]
    if best.id == BASELINE_ID or best.delta is None:
        return [Text("No candidate beat the baseline. Outcome: no_improvement.", style="yellow")]
    d = best.delta
    line = (
        f"Best: {best.id} ({best.strategy})  validation {_score(best.validation)}\n"
        f"      vs baseline {_score(base.validation)}\n"
        f"      Δ {d.mean:+.3f} (95% paired CI {d.low:+.3f} … {d.high:+.3f}, {d.n} tasks)"
    )
    out: list[RenderableType] = [Text(line)]
    if best.star:
        out.append(
            Text(
                f"{best.id} ★ beats the baseline beyond the noise. Outcome: improved.",
                style="bold green",
            )
        )
    else:
        out.append(
            Text(
                f"{best.id} is not better than the baseline beyond the noise (the interval "
                "includes 0). Outcome: no_improvement.",
                style="yellow",
            )
        )
    return out


def _test(job: JobRecord) -> list[RenderableType]:
    t = job.test
    if t is None:
        if job.splits.warning:
            return [Text(f"No held-out test split: {job.splits.warning}.", style="yellow")]
        return []
    out: list[RenderableType] = []
    head = f"Test split ({len(job.splits.test)} held-out tasks, evaluated once):"
    rows = [f"  baseline  {_score(t.baseline_score)}"]
    if t.best != BASELINE_ID:
        rows.append(f"  {t.best:<9} {_score(t.best_score)}")
    if t.delta is not None:
        rows.append(
            f"  Δ {t.delta.mean:+.3f} (95% paired CI {t.delta.low:+.3f} … {t.delta.high:+.3f})"
        )
    if t.optimism_gap is not None:
        rows.append(
            f"  optimism gap {t.optimism_gap:+.3f} (validation gain {t.validation_gain:+.3f} − "
            f"test gain {t.test_gain:+.3f})"
        )
    out.append(Text("\n".join([head, *rows])))
    if t.note:
        out.append(Text(t.note, style="yellow"))
    return out


def final_report(
    job: JobRecord, instructions: dict[str, str], report: Path | None, *, table: bool = True
) -> list[RenderableType]:
    """Ranking table, verdict, test split, instruction diff, report path, next step.

    `table=False` when a live view already shows the final table."""
    best = job.candidate(job.best) if job.best else None
    out: list[RenderableType] = [
        Text(f"Job {job.id}: {job.stop_reason or job.status}", style="bold"),
        Text(f"Candidates: {job.counts.line()}"),
    ]
    if table:
        out.append(candidates_table(job))
    out += [*_verdict(job, best), *_test(job)]
    errors = error_line(job)
    if errors:
        out.append(Text(f"Errors: {errors}.", style="bold red"))
    if job.leak_note:
        out.append(Text(f"Leaks: {job.leak_note}.", style="yellow"))
    if best is not None and best.id != BASELINE_ID:
        lines = instruction_diff_lines(instructions, best.id)
        if lines:
            out.append(Text(f"Instruction diff ({best.id} vs baseline, first lines):"))
            out.append(_diff_text(lines))
        elif best.mutation:
            out.append(Text(f"Change: {best.rationale}"))
    out.append(Text(usage_line(job), style="dim"))
    if report is not None:
        out.append(Text(f"Report: {report}"))
    if best is not None and best.star:
        out.append(Text(f"Next: agentopt optimize apply --candidate {best.id}", style="bold"))
    elif best is not None and best.id != BASELINE_ID:
        out.append(Text(f"To try it anyway: agentopt optimize apply --candidate {best.id}"))
    return out


def usage_line(job: JobRecord) -> str:
    """Agent + judge calls per phase (and per proposal), reflection calls, cache hits, spend."""
    phases = job.phase_calls
    usage = job.usage
    hits = sum(int(u.get("cache_hits", 0)) for u in usage.values())
    cost = sum(float(u.get("cost_usd", 0.0)) for u in usage.values())
    reflect = int(usage.get("optimizer", {}).get("calls", 0))
    search = phases.get("search", 0)
    per = f" ({search / job.proposals:.1f} per proposal)" if job.proposals else ""
    return (
        f"Agent+judge calls: baseline {phases.get('baseline', 0)}, search {search} over "
        f"{job.proposals} proposals{per}, test {phases.get('test', 0)}; reflection calls "
        f"{reflect}; cache hits {hits}; spent ${cost:.4f}"
    )


def status_renderables(job: JobRecord) -> list[RenderableType]:
    """`optimize status`: where a job is."""
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("Job", job.id)
    head.add_row("Status", job.status + (f" — {job.stop_reason}" if job.stop_reason else ""))
    head.add_row("Started", fmt_when(job.started_at))
    if job.finished_at:
        head.add_row("Finished", fmt_when(job.finished_at))
    head.add_row(
        "Splits",
        f"train {len(job.splits.train)}, validation "
        f"{len(job.splits.validation)}, test {len(job.splits.test)}",
    )
    head.add_row(
        "Candidates",
        f"{job.counts.line()}; {job.proposals} proposal slots used, {job.stalls} failed "
        "screenings in a row",
    )
    errors = error_line(job)
    if errors:
        head.add_row("Errors", Text(errors, style="red"))
    if job.leak_note:
        head.add_row("Leaks", job.leak_note)
    if job.outcome:
        head.add_row("Outcome", f"{job.outcome} (best: {job.best})")
    out: list[RenderableType] = [head, candidates_table(job)]
    if job.status in ("interrupted", "running", "failed"):
        out.append(Text(f"Resume: agentopt optimize --resume {job.id}"))
    return out


def _short(s: ScoreSummary | None) -> str:
    return "-" if s is None or s.score is None else f"{s.score:.3f}"


def jobs_table(jobs: list[JobRecord]) -> Table:
    """`optimize list`: one row per job, newest first (job ids sort by start time)."""
    table = Table(title="Optimization jobs", title_justify="left", box=None, padding=(0, 2, 0, 0))
    table.add_column("job", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("proposed", justify="right")
    table.add_column("evaluated", justify="right")
    table.add_column("baseline", justify="right")
    table.add_column("best", no_wrap=True)
    table.add_column("stopped")
    for job in reversed(jobs):
        base = job.baseline
        best = job.candidate(job.best) if job.best else None
        counts = job.counts
        result = job.outcome if job.status == "completed" and job.outcome else job.status
        table.add_row(
            job.id,
            result,
            str(counts.proposed),
            str(counts.evaluated),
            _short(base.validation if base else None),
            f"{best.id}{' ★' if best.star else ''} {_short(best.validation)}" if best else "-",
            job.stop_reason or "-",
        )
    return table


def show_renderables(
    job: JobRecord, record: CandidateRecord, files: dict[str, str], diff: list[str]
) -> list[RenderableType]:
    """`optimize show`: a candidate's numbers, full configuration and diff vs baseline."""
    state = record.status.replace("_", " ") + (" ★" if record.star else "")
    state += " (Pareto)" if record.pareto.any else ""
    out: list[RenderableType] = [
        Text(f"{record.id} of job {job.id}: {state}", style="bold"),
        Text(f"Job: {job.stop_reason or job.status}; candidates {job.counts.line()}"),
        Text(
            f"strategy {record.strategy}, parent {record.parent or '-'}, model "
            f"{record.model or '-'}; {record.rationale}"
        ),
        Text(f"validation: {_score(record.validation)}"),
    ]
    if record.test is not None:
        out.append(Text(f"test: {_score(record.test)}"))
    for name, text in files.items():
        out.append(Text(f"── {name} ──", style="bold"))
        out.append(Text(text.rstrip()))
    out.append(Text("── diff vs baseline ──", style="bold"))
    out.append(_diff_text(diff) if diff else Text("(identical to the baseline)"))
    return [Group(*out)]
