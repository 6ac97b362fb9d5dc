"""Pages of `agentopt view`: the run list, a run (the HTML report itself), a comparison of two
runs, and optimization jobs. Pages are built from the files under `.agentopt/`, read-only."""

from __future__ import annotations

import html
import io
from pathlib import Path

from rich.console import Console

from agentopt.contracts.optimize_job import load_job
from agentopt.contracts.run_results import load_results
from agentopt.core.errors import AgentoptError
from agentopt.core.redaction import redact
from agentopt.reports.compare import PairedCI, compare_runs, render_comparison
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


def real_child(parent: Path, name: str) -> Path | None:
    """`parent/name` when it is a real entry of `parent` (no link, no `..`, no path): the view
    serves only what agentopt wrote under `.agentopt/`, never a folder a link points to."""
    if not name or "/" in name or "\\" in name or name.startswith(".") or "\0" in name:
        return None
    path = parent / name
    try:
        if path.is_symlink() or not path.exists():
            return None
        path.resolve().relative_to(parent.resolve())
    except (OSError, ValueError):
        return None
    return path


def error_page(exc: BaseException) -> str:
    """What a page that cannot be built shows instead of a dropped connection."""
    text = str(exc) if isinstance(exc, AgentoptError) else f"{type(exc).__name__}: {exc}"
    return _page("agentopt view: error", f"<h1>Cannot show this page</h1><pre>{_text(text)}</pre>")


def _text(value: object) -> str:
    return html.escape(redact(str(value)).encode("utf-8", "backslashreplace").decode("utf-8"))


def _folders(parent: Path) -> list[tuple[str, Path | None]]:
    """(name, the folder or None when it is not a real folder under `parent`), newest first."""
    if not parent.is_dir() or parent.is_symlink():
        return []
    out = []
    for entry in sorted(parent.iterdir(), reverse=True):
        folder = real_child(parent, entry.name)
        out.append((entry.name, folder if folder is not None and folder.is_dir() else None))
    return out


def _run_row(name: str, folder: Path | None) -> str | None:
    rid = _text(name)
    if folder is None:
        return (
            f"<tr><td>{rid}</td><td></td><td>refused</td><td colspan=4>not a folder under "
            ".agentopt/runs/ (a link is not followed)</td></tr>"
        )
    results = real_child(folder, "results.json")
    if results is None:
        return None  # a run still going, or one that never wrote results
    try:
        head = RunHeader.from_results(load_results(results))
    except Exception as exc:
        reason = str(exc) if isinstance(exc, AgentoptError) else type(exc).__name__
        return f"<tr><td>{rid}</td><td></td><td>broken</td><td colspan=4>{_text(reason)}</td></tr>"
    score = "—" if head.score is None else f"{head.score:.3f}"
    rate = "—" if head.pass_rate is None else f"{head.pass_rate:.1%}"
    return (
        f"<tr><td><a href='/runs/{_text(head.id)}'>{_text(head.id)}</a></td>"
        f"<td>{_text(head.name or '')}</td><td>{_text(head.status)}</td>"
        f"<td>{head.tasks}</td><td>{score}</td><td>{rate}</td><td>{head.errors}</td></tr>"
    )


def _job_row(name: str, folder: Path | None) -> str | None:
    jid = _text(name)
    job_file = real_child(folder, "job.json") if folder is not None else None
    if job_file is None:
        return None if folder is not None else f"<tr><td>{jid}</td><td>refused</td></tr>"
    try:
        job = load_job(job_file)
    except (AgentoptError, OSError, ValueError, RecursionError) as exc:
        return f"<tr><td>{jid}</td><td>broken</td><td colspan=4>{_text(exc)}</td></tr>"
    # The job record's own tally and stop phrase, as `optimize list` shows them.
    return (
        f"<tr><td><a href='/optimize/{jid}'>{jid}</a></td>"
        f"<td>{_text(job.status)}</td>"
        f"<td>{_text(job.outcome or '')}</td>"
        f"<td>{_text(job.counts.line())}</td>"
        f"<td>{_text(job.stop_reason)}</td></tr>"
    )


def index_page(state: Path) -> str:
    """Run list with links, a compare form, and optimization jobs; a broken run is listed
    as broken and the rest still renders."""
    rows = [r for n, f in _folders(state / "runs") if (r := _run_row(n, f)) is not None]
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
    jobs = [r for n, f in _folders(state / "optimize") if (r := _job_row(n, f)) is not None]
    job_table = (
        "<h2>Optimization jobs</h2><table><tr><th>Job</th><th>Status</th><th>Outcome</th>"
        "<th>Candidates</th><th>Stopped</th></tr>" + "".join(jobs) + "</table>"
        if jobs
        else ""
    )
    return _page("agentopt runs", f"<h1>Runs</h1>{table}{compare}{job_table}")


def _results_of(state: Path, run_id: str) -> Path | None:
    runs = real_child(state, "runs")
    folder = real_child(runs, run_id) if runs is not None else None
    return real_child(folder, "results.json") if folder is not None else None


def run_page(state: Path, run_id: str) -> str | None:
    """The run's full HTML report, or None when there is no such run."""
    path = _results_of(state, run_id)
    return render_html(load_results(path)) if path is not None else None


def compare_page(
    state: Path, base_id: str, current_id: str, *, paired_ci: PairedCI | None = None
) -> str | None:
    """Per-task and per-evaluator deltas of `current` against `base` (what `eval show
    --compare` prints, with the same words and colours)."""
    base, current = _results_of(state, base_id), _results_of(state, current_id)
    if base is None or current is None:
        return None
    comp = compare_runs(load_results(base), load_results(current), paired_ci=paired_ci)
    body = _rich_html(lambda console: render_comparison(comp, console))
    return _page(f"{current_id} vs {base_id}", body)


def job_page(state: Path, job_id: str) -> str | None:
    """An optimization job's own HTML report, else its job.json."""
    jobs = real_child(state, "optimize")
    folder = real_child(jobs, job_id) if jobs is not None else None
    if folder is None or not folder.is_dir():
        return None
    report = real_child(folder, "report.html")
    if report is not None:
        return report.read_text(encoding="utf-8", errors="replace")
    job = real_child(folder, "job.json")
    text = job.read_text(encoding="utf-8", errors="replace") if job is not None else "{}"
    return _page(job_id, f"<h1>Job {_text(job_id)}</h1><pre>{_text(text)}</pre>")
