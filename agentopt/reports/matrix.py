"""A matrix run's report: one row per task, one column per variant (promptfoo's habit), in the
terminal (compact), JSON, HTML, JUnit (one <testsuite> per variant), CSV and Markdown.

Every number comes from the variants' own results.json (task outcomes, run summaries) and the
matrix record's one best-variant verdict: nothing is recounted here.
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from pydantic import ConfigDict, Field
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentopt.contracts.matrix import BestVariant, MatrixRecord, VariantScore
from agentopt.contracts.outcomes import OUTCOME_COLOURS
from agentopt.contracts.run_results import RunResults, TaskOutcome, redacted
from agentopt.core.atomic import write_json_atomic, write_text_atomic
from agentopt.core.lazy_model import LazyModel
from agentopt.reports.formatting import fmt_ci, fmt_cost, fmt_pct, fmt_score, truncate
from agentopt.reports.outputs import OutputFile, check_output_paths
from agentopt.reports.task_grid import TaskCell, TaskRow, task_rows

__all__ = [
    "MatrixCell",
    "MatrixReport",
    "MatrixRow",
    "build_matrix_report",
    "render_matrix",
    "write_matrix_outputs",
]

MARKS = {"pass": "✓", "fail": "✗", "partial": "~", "error": "!", "skipped": "·"}
TERMINAL_ROWS = 40
ANSWER_LIMIT = 4000


MatrixCell = TaskCell
"""One task under one variant."""
MatrixRow = TaskRow[MatrixCell]


class MatrixColumn(LazyModel):
    """One variant: what it changed and its run's numbers."""

    model_config = ConfigDict(extra="forbid")

    label: str
    model: str | None = None
    instructions_source: str | None = None
    run: VariantScore | None = None


class MatrixReport(LazyModel):
    """The matrix as every output shows it (`.json` writes exactly this)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str | None = None
    status: str = "completed"
    columns: list[MatrixColumn] = Field(default_factory=list)
    rows: list[MatrixRow] = Field(default_factory=list)
    best: BestVariant | None = None
    results: list[RunResults | None] = Field(default_factory=list, exclude=True)
    """The variants' results (for JUnit); not part of the JSON."""


def build_matrix_report(record: MatrixRecord, results: Sequence[RunResults | None]) -> MatrixReport:
    """Rows in dataset order (the first variant's, then tasks only later ones have)."""
    columns = [
        MatrixColumn(
            label=v.label,
            model=v.model,
            instructions_source=v.instructions_source,
            run=record.run_of(v.label),
        )
        for v in record.variants
    ]
    by_variant = [{t.name: t for t in r.tasks} if r is not None else {} for r in results]
    rows = task_rows(by_variant, MatrixRow, lambda name: [_cell(m.get(name)) for m in by_variant])
    return MatrixReport(
        id=record.id,
        name=record.name,
        status=record.status,
        columns=columns,
        rows=rows,
        best=record.best,
        results=list(results),
    )


def _cell(task: TaskOutcome | None) -> MatrixCell:
    return MatrixCell() if task is None else MatrixCell.of(task, answer_limit=ANSWER_LIMIT)


def _cell_text(cell: MatrixCell) -> Text:
    if cell.status is None:
        return Text("—", style="dim")
    mark = MARKS.get(cell.status, "?")
    return Text(f"{mark} {fmt_score(cell.score)}", style=OUTCOME_COLOURS.get(cell.status, ""))


def render_matrix(report: MatrixReport, console: Console, *, limit: int = TERMINAL_ROWS) -> None:
    """The compact terminal matrix: a mark and a score per cell, then each variant's totals
    and the best-variant line."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("Task", overflow="fold", max_width=32)
    for col in report.columns:
        table.add_column(col.label, justify="right", overflow="fold")
    for row in report.rows[:limit]:
        table.add_row(Text(truncate(row.task, 32)), *(_cell_text(c) for c in row.cells))
    table.add_section()
    runs = [c.run for c in report.columns]
    table.add_row(
        Text("score", style="bold"),
        *(Text(fmt_score(r.score) if r else "—", style="bold") for r in runs),
    )
    table.add_row(
        "95% CI", *(fmt_ci(r.score_ci).removeprefix("95% CI ") if r else "" for r in runs)
    )
    table.add_row("pass rate", *(fmt_pct(r.pass_rate) if r else "—" for r in runs))
    table.add_row(
        "fail/partial/error",
        *(f"{r.failed}/{r.partial}/{r.errors}" if r else "—" for r in runs),
    )
    table.add_row("cost", *(fmt_cost(r.cost_usd) if r else "—" for r in runs))
    console.print(table)
    if len(report.rows) > limit:
        console.print(
            f"… {len(report.rows) - limit} more tasks (write them with --output FILE.html)",
            markup=False,
        )
    legend = "  ".join(f"{m} {s}" for s, m in MARKS.items() if s != "skipped")
    console.print(Text(legend, style="dim"))
    if report.best is not None:
        style = "bold green" if report.best.beyond_noise else "bold"
        console.print(Text(report.best.line(), style=style))


def render_matrix_json(report: MatrixReport) -> str:
    return report.model_dump_json(indent=2) + "\n"


def render_matrix_junit(report: MatrixReport) -> str:
    """One <testsuite> per variant (each as `render_junit` writes a run's), in one file."""
    from agentopt.reports.junit import render_junit

    root = ET.Element("testsuites", name=f"agentopt matrix {report.id}")
    for col, res in zip(report.columns, report.results, strict=True):
        if res is None:
            continue
        one = ET.fromstring(render_junit(res).split("?>", 1)[1].strip())
        for suite in one.findall("testsuite"):
            suite.set("name", f"{suite.get('name', '')} [{col.label}]")
            props = suite.find("properties")
            if props is not None:
                ET.SubElement(props, "property", name="variant", value=col.label)
            root.append(suite)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def render_matrix_csv(report: MatrixReport) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    head = ["task", "category"]
    for col in report.columns:
        head += [f"{col.label} status", f"{col.label} score"]
    writer.writerow(head)
    for row in report.rows:
        line = [row.task, row.category or ""]
        for cell in row.cells:
            line += [cell.status or "", "" if cell.score is None else f"{cell.score:.4f}"]
        writer.writerow(line)
    return out.getvalue()


def render_matrix_markdown(report: MatrixReport) -> str:
    def esc(text: str) -> str:
        return text.replace("|", "\\|")

    head = "| Task | " + " | ".join(esc(c.label) for c in report.columns) + " |"
    lines = [f"## agentopt matrix {report.name or report.id}", "", head]
    lines.append("|---|" + "---:|" * len(report.columns))
    for row in report.rows:
        cells = [
            "—" if c.status is None else f"{MARKS.get(c.status, '?')} {fmt_score(c.score)}"
            for c in row.cells
        ]
        lines.append(f"| {esc(row.task)} | " + " | ".join(cells) + " |")
    runs = [c.run for c in report.columns]
    lines.append(
        "| **score** | " + " | ".join(fmt_score(r.score) if r else "—" for r in runs) + " |"
    )
    lines.append(
        "| pass rate | " + " | ".join(fmt_pct(r.pass_rate) if r else "—" for r in runs) + " |"
    )
    if report.best is not None:
        lines += ["", f"**{esc(report.best.line())}**"]
    return "\n".join(lines) + "\n"


def write_matrix_outputs(report: MatrixReport, paths: Sequence[Path]) -> list[OutputFile]:
    """Each `--output` file of a matrix run, by extension, secrets masked."""
    targets = check_output_paths(paths)
    if not targets:
        return []
    safe = report.model_copy(
        update={"results": [redacted(r) if r is not None else None for r in report.results]}
    )
    safe = MatrixReport.model_validate(
        {**_masked(safe.model_dump(mode="json")), "results": safe.results}
    )
    written = []
    for path in targets:
        ext = path.suffix.lower()
        if ext == ".json":
            write_json_atomic(path, safe.model_dump(mode="json"))
        else:
            write_text_atomic(path, _render(ext, safe))
        written.append(OutputFile(path=path, format=ext))
    return written


def _render(ext: str, report: MatrixReport) -> str:
    if ext == ".html":
        from agentopt.reports.matrix_html import render_matrix_html

        return render_matrix_html(report)
    if ext == ".xml":
        return render_matrix_junit(report)
    if ext == ".csv":
        return render_matrix_csv(report)
    return render_matrix_markdown(report)


def _masked(data: dict[str, object]) -> dict[str, object]:
    from agentopt.core.redaction import redact_data

    masked = redact_data(data)
    assert isinstance(masked, dict)
    return masked
