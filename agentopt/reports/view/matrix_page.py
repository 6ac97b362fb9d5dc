"""A matrix run in the view: the best-variant line and the task × variant table (the same
body as `--output matrix.html`), each column linked to its run, and the runs one click from
the Compare page."""

from __future__ import annotations

from urllib.parse import urlencode

from agentopt.reports.matrix import MatrixReport
from agentopt.reports.matrix_html import matrix_body
from agentopt.reports.view.layout import page, text

__all__ = ["matrix_page"]


def matrix_page(report: MatrixReport, *, live: str | None) -> str:
    runs = [c.run.run_id for c in report.columns if c.run is not None]
    link = (
        f'<p><a href="/compare?{text(urlencode([("run", r) for r in runs]))}">'
        f"Compare these {len(runs)} runs task by task</a></p>"
        if len(runs) > 1
        else ""
    )
    body = (
        f"<h1>Matrix {text(report.name or report.id)}</h1>"
        f'<p class="muted">{len(report.rows)} tasks × {len(report.columns)} variants · '
        f"status {text(report.status)}</p>{link}{matrix_body(report, run_href='/runs/')}"
    )
    return page(f"Matrix {report.id}", body, live=live)
