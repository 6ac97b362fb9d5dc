"""GitHub-flavoured Markdown summary, for PR comments and `$GITHUB_STEP_SUMMARY`.

Data is escaped for table cells: pipes and newlines would break the table, `<`/`>` would be
read as HTML, and an `@name` in an agent's answer would ping a real GitHub user.
"""

from __future__ import annotations

from agentopt.contracts.run_results import RunResults
from agentopt.reports.cells import SummaryCells, evaluator_cells
from agentopt.reports.formatting import (
    LEGEND,
    calls_text,
    findings,
    flaky_tasks,
    fmt_score,
    truncate,
    worst_tasks,
)

__all__ = ["md_escape", "render_markdown"]

STATUS_ICON = {"pass": "✅", "fail": "❌", "partial": "⚠️", "error": "💥"}


def md_escape(text: str, limit: int = 200) -> str:
    """One table-cell-safe line."""
    flat = truncate(text, limit)
    for char, repl in (
        ("\\", "\\\\"),
        ("|", "\\|"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("@", "&#64;"),
        ("`", "\\`"),
        ("*", "\\*"),
        ("_", "\\_"),
        ("[", "\\["),
        ("]", "\\]"),
    ):
        flat = flat.replace(char, repl)
    return flat


def render_markdown(results: RunResults, *, top: int = 5) -> str:
    """Summary table, per-evaluator table, worst tasks (folded) and flaky tasks."""
    run, s = results.run, results.summary
    lines = [f"### agentopt eval — {md_escape(results.title, 80)}", ""]
    context = [f"run `{run.id}`"]
    if run.dataset.name:
        version = f" v{run.dataset.version}" if run.dataset.version else ""
        context.append(f"dataset {md_escape(run.dataset.name + version, 80)}")
    if run.models.agent:
        context.append(f"agent model {md_escape(run.models.agent, 60)}")
    if run.models.judge:
        context.append(f"judge {md_escape(run.models.judge, 60)}")
    lines += [" · ".join(context), ""]
    if str(run.status) != "completed":
        lines += [
            f"> **Warning:** run status `{md_escape(str(run.status), 40)}` — partial results",
            "",
        ]
    cells = SummaryCells.of(results)
    c = s.counts
    lines += [
        "| Score | Pass rate | Task runs | Pass | Fail | Partial | Error | Errors (failed calls) "
        "| Cost | Tokens | Duration |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| **{cells.score}**{f' ({cells.ci})' if cells.ci else ''} | {cells.pass_rate} | "
        f"{c.runs} | {c.passed} | {c.failed} | {c.partial} | {c.errors} | {c.failed_calls} | "
        f"{cells.cost} | {cells.tokens} | {cells.duration} |",
        "",
    ]
    if c.partial or c.errors:
        lines += [f"_{LEGEND}_", ""]
    if s.evaluators:
        lines += [
            "| Evaluator | Pass rate | Mean | Pass | Fail | Errors |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {md_escape(e.name, 60)} | {' | '.join(evaluator_cells(e))} |" for e in s.evaluators
        ]
        lines.append("")
    calls = calls_text(c, s.errors_by_kind)
    if calls:
        lines += [f"**Errors:** {md_escape(calls, 400)}", ""]
    worst = worst_tasks(results, top)
    if worst:
        lines += ["<details><summary>Worst tasks</summary>", ""]
        lines += ["| Task | Status | Score | Why |", "|---|---|---:|---|"]
        for task in worst:
            why = "<br>".join(md_escape(str(f), 160) for f in findings(task)[:3]) or "—"
            icon = STATUS_ICON.get(task.status, "")
            lines.append(
                f"| {md_escape(task.name, 60)} | {icon} {task.status} | {fmt_score(task.score)} "
                f"| {why} |"
            )
        lines += ["", "</details>", ""]
    flaky = flaky_tasks(results)
    if flaky:
        names = ", ".join(md_escape(t.name, 60) for t in flaky)
        lines += [f"**Flaky tasks** (verdicts differ across repeats): {names}", ""]
    return "\n".join(lines)
