"""The matrix as HTML: one self-contained file for `--output matrix.html` (inline CSS, no
script, nothing fetched), and the same body inside `agentopt view`."""

from __future__ import annotations

from agentopt.reports.formatting import fmt_ci, fmt_cost, fmt_pct, fmt_score
from agentopt.reports.html_assets import CSS
from agentopt.reports.html_task import badge, esc
from agentopt.reports.matrix import MatrixColumn, MatrixReport, MatrixRow

__all__ = ["matrix_body", "render_matrix_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
EXTRA_CSS = """
.scroll{overflow-x:auto;max-width:100%}
table.matrix td{min-width:120px}table.matrix td.task{min-width:160px}
table.matrix details summary{cursor:pointer;color:var(--accent);font-size:12px}
.best{padding:8px 12px;border:1px solid var(--line);border-radius:8px;background:var(--panel)}
.best.win{border-color:var(--pass)}
"""


def _head(col: MatrixColumn, best: str | None, href: str | None) -> str:
    r = col.run
    star = " ★" if best == col.label else ""
    label = esc(col.label) + star
    if href and r is not None:
        label = f'<a href="{esc(href)}{esc(r.run_id)}">{label}</a>'
    facts = []
    if col.model:
        facts.append(f"model {esc(col.model)}")
    if col.instructions_source:
        facts.append(f"instructions {esc(col.instructions_source)}")
    if r is not None:
        facts.append(f"<b>{esc(fmt_score(r.score))}</b> {esc(fmt_ci(r.score_ci))}")
        facts.append(f"pass {esc(fmt_pct(r.pass_rate))}")
        facts.append(f"fail/partial/error {r.failed}/{r.partial}/{r.errors}")
        facts.append(f"cost {esc(fmt_cost(r.cost_usd))}")
    return f'<th scope="col">{label}<div class="muted">{"<br>".join(facts)}</div></th>'


def _row(row: MatrixRow) -> str:
    cells = []
    for cell in row.cells:
        if cell.status is None:
            cells.append('<td class="muted">—</td>')
            continue
        answer = cell.error or cell.response or "(no response)"
        cells.append(
            f"<td>{badge(cell.status)} {esc(fmt_score(cell.score))}"
            f"<details><summary>answer</summary><pre>{esc(answer)}</pre></details></td>"
        )
    return (
        f'<tr data-task="{esc(row.task)}"><td class="task"><b>{esc(row.task)}</b>'
        f'<div class="muted">{esc(row.category or "")}</div></td>{"".join(cells)}</tr>'
    )


def matrix_body(report: MatrixReport, *, run_href: str | None = None) -> str:
    """The best-variant line and the task × variant table."""
    best = report.best
    line = (
        f'<p class="best{" win" if best.beyond_noise else ""}" id="best-line">'
        f"<b>{esc(best.line())}</b></p>"
        if best is not None
        else '<p class="muted">No variant has a score yet.</p>'
    )
    heads = "".join(_head(c, best.label if best else None, run_href) for c in report.columns)
    rows = "".join(_row(r) for r in report.rows)
    return (
        f"{line}<div class='scroll'><table class='grid matrix' id='matrix'><thead><tr>"
        f'<th scope="col">Task</th>{heads}</tr></thead><tbody>{rows}</tbody></table></div>'
    )


def render_matrix_html(report: MatrixReport) -> str:
    title = f"agentopt matrix — {report.name or report.id}"
    return "".join(
        [
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">',
            f"<title>{esc(title)}</title><style>{CSS}{EXTRA_CSS}</style></head><body>",
            f"<h1>{esc(title)}</h1>",
            f'<p class="muted">{len(report.rows)} tasks × {len(report.columns)} variants, '
            f"status {esc(report.status)}</p>",
            matrix_body(report),
            "</body></html>\n",
        ]
    )
