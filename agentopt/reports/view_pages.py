"""Pages of `agentopt view`: the run list, a run (the HTML report itself), a comparison of two
runs, and optimization jobs. Pages are built from the files under `.agentopt/`, read-only."""

from __future__ import annotations

import html
import io
import json
from pathlib import Path

from rich.console import Console

from agentopt.contracts.run_results import load_results
from agentopt.reports.compare import compare_runs, render_comparison
from agentopt.reports.html import render_html
from agentopt.reports.terminal import RunHeader

_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}"
    "table{border-collapse:collapse}td,th{padding:.25rem .6rem;border-bottom:1px solid #ddd}"
    "pre{font-size:13px}"
)


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><p><a href='/'>agentopt view</a></p>{body}</body></html>"
    )


def _rich_html(render: object) -> str:
    console = Console(record=True, width=110, file=io.StringIO())
    render(console)  # type: ignore[operator]
    return console.export_html(inline_styles=True, code_format="<pre>{code}</pre>")


def index_page(state: Path) -> str:
    """Run list with links, a compare form, and optimization jobs."""
    runs_dir = state / "runs"
    rows = []
    for folder in sorted(runs_dir.iterdir(), reverse=True) if runs_dir.is_dir() else []:
        results = folder / "results.json"
        if not results.is_file():
            continue
        head = RunHeader.from_results(load_results(results))
        score = "—" if head.score is None else f"{head.score:.3f}"
        rate = "—" if head.pass_rate is None else f"{head.pass_rate:.1%}"
        rows.append(
            f"<tr><td><a href='/runs/{html.escape(head.id)}'>{html.escape(head.id)}</a></td>"
            f"<td>{html.escape(head.name or '')}</td><td>{html.escape(head.status)}</td>"
            f"<td>{head.tasks}</td><td>{score}</td><td>{rate}</td><td>{head.errors}</td></tr>"
        )
    table = (
        "<table><tr><th>Run</th><th>Name</th><th>Status</th><th>Tasks</th><th>Score</th>"
        "<th>Pass</th><th>Errors</th></tr>" + "".join(rows) + "</table>"
        if rows
        else "<p>No runs yet: start one with <code>agentopt eval run</code>.</p>"
    )
    compare = (
        "<form action='/compare'>Compare run <input name='a' size=24> with "
        "<input name='b' size=24> <button>compare</button></form>"
    )
    jobs = []
    opt_dir = state / "optimize"
    for folder in sorted(opt_dir.iterdir(), reverse=True) if opt_dir.is_dir() else []:
        job_file = folder / "job.json"
        if not job_file.is_file():
            continue
        job = json.loads(job_file.read_text(encoding="utf-8"))
        jid = html.escape(folder.name)
        jobs.append(
            f"<tr><td><a href='/optimize/{jid}'>{jid}</a></td>"
            f"<td>{html.escape(str(job.get('status', '')))}</td>"
            f"<td>{html.escape(str(job.get('outcome', '')))}</td>"
            f"<td>{len(job.get('candidates', []))}</td></tr>"
        )
    job_table = (
        "<h2>Optimization jobs</h2><table><tr><th>Job</th><th>Status</th><th>Outcome</th>"
        "<th>Candidates</th></tr>" + "".join(jobs) + "</table>"
        if jobs
        else ""
    )
    return _page("agentopt runs", f"<h1>Runs</h1>{table}{compare}{job_table}")


def run_page(state: Path, run_id: str) -> str | None:
    """The run's full HTML report, or None when there is no such run."""
    path = state / "runs" / run_id / "results.json"
    if "/" in run_id or ".." in run_id or not path.is_file():
        return None
    return render_html(load_results(path))


def compare_page(state: Path, base_id: str, current_id: str) -> str | None:
    """Per-task and per-evaluator deltas of `current` against `base`."""
    paths = [state / "runs" / rid / "results.json" for rid in (base_id, current_id)]
    if any("/" in r or ".." in r for r in (base_id, current_id)) or not all(
        p.is_file() for p in paths
    ):
        return None
    comp = compare_runs(load_results(paths[0]), load_results(paths[1]))
    body = _rich_html(lambda console: render_comparison(comp, console))
    return _page(f"{current_id} vs {base_id}", body)


def job_page(state: Path, job_id: str) -> str | None:
    """An optimization job's own HTML report, else its job.json."""
    folder = state / "optimize" / job_id
    if "/" in job_id or ".." in job_id or not folder.is_dir():
        return None
    report = folder / "report.html"
    if report.is_file():
        return report.read_text(encoding="utf-8")
    job = folder / "job.json"
    text = job.read_text(encoding="utf-8") if job.is_file() else "{}"
    return _page(job_id, f"<h1>Job {html.escape(job_id)}</h1><pre>{html.escape(text)}</pre>")
