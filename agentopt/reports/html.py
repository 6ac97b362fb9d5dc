"""The HTML report: ONE self-contained file (inline CSS, JS and SVG; nothing is fetched, the
Content-Security-Policy forbids it) with the run header, summary cards, a chart per evaluator,
a sortable and filterable task table, and each task's full transcript and verdicts."""

from __future__ import annotations

from agentopt.contracts.run_results import RunResults, TaskOutcome
from agentopt.reports.cells import SummaryCells, bucket_cells, evaluator_cells
from agentopt.reports.formatting import (
    LEGEND,
    STATUS_ORDER,
    calls_text,
    findings,
    flaky_tasks,
    fmt_int,
    fmt_score,
    fmt_seconds,
    fmt_when,
    results_by_evaluator,
    tally_text,
    truncate,
)
from agentopt.reports.html_assets import CSS, JS, content_security_policy
from agentopt.reports.html_task import badge, esc, task_detail_html
from agentopt.reports.svg import histogram_svg, status_bar_svg

__all__ = ["render_html", "report_summary"]

RUN_STATUS_NOTE = {
    "interrupted": "Interrupted — these are partial results.",
    "budget_exhausted": "Stopped when the budget ran out — these are partial results.",
    "too_many_errors": "Stopped after too many errors — these are partial results.",
}
COLUMNS = [
    # (label, data key, numeric)
    ("#", "index", True),
    ("Task", "name", False),
    ("Category", "category", False),
    ("Status", "rank", True),
    ("Score", "score", True),
    ("Latency", "latency", True),
    ("Tokens", "tokens", True),
    ("Why", "", False),
]
NUM_CLASS = ' class="num"'


def render_html(results: RunResults) -> str:
    """The whole report as one HTML string."""
    return "".join(
        [
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta http-equiv="Content-Security-Policy" ',
            f'content="{esc(content_security_policy())}">',
            f"<title>agentopt — {esc(results.title)}</title><style>{CSS}</style></head><body>",
            _header(results),
            _cards(results),
            _notes(results),
            _evaluators(results),
            _tasks(results),
            f"<script>{JS}</script></body></html>\n",
        ]
    )


def report_summary(results: RunResults) -> str:
    """The report's first screen (header, cards, notes, evaluators and charts), which
    `agentopt view` shows above its own task table."""
    return "".join([_header(results), _cards(results), _notes(results), _evaluators(results)])


def _header(results: RunResults) -> str:
    run = results.run
    bits = [("run", run.id), ("status", str(run.status)), ("started", fmt_when(run.started_at))]
    if run.finished_at:
        bits.append(("finished", fmt_when(run.finished_at)))
    ds = run.dataset
    if ds.name or ds.source:
        version = f" v{ds.version}" if ds.version else ""
        fmt = f" ({ds.format})" if ds.format else ""
        bits.append(("dataset", f"{ds.name or ds.source}{version}{fmt}"))
    if ds.sha256:
        bits.append(("sha256", ds.sha256[:12]))
    agent = run.agent.name or run.agent.target
    if agent:
        bits.append(("agent", agent + (f" [{run.agent.target}]" if run.agent.name else "")))
    if run.models.agent or run.agent.model:
        bits.append(("model", str(run.models.agent or run.agent.model)))
    if run.models.judge:
        bits.append(("judge", run.models.judge))
    if run.repeat and run.repeat > 1:
        bits.append(("repeat", str(run.repeat)))
    if run.seed is not None:
        bits.append(("seed", str(run.seed)))
    if run.cli_version:
        bits.append(("agentopt", run.cli_version))
    meta = "".join(f"<span>{esc(k)} <b>{esc(v)}</b></span>" for k, v in bits)
    warn = RUN_STATUS_NOTE.get(str(run.status))
    warn_html = f'<p class="warn">{esc(warn)}</p>' if warn else ""
    return (
        f'<header><h1>{esc(results.title)}</h1><div class="meta">{meta}</div>{warn_html}</header>'
    )


def _card(value: str, label: str) -> str:
    return (
        f'<div class="card"><div class="v">{esc(value)}</div>'
        f'<div class="l">{esc(label)}</div></div>'
    )


def _cards(results: RunResults) -> str:
    c = results.summary.counts
    cells = SummaryCells.of(results)
    return "".join(
        [
            '<section class="cards">',
            _card(cells.score, "score" + (f" · {cells.ci}" if cells.ci else "")),
            _card(cells.pass_rate, f"pass rate · {c.passed}/{c.runs} task runs"),
            _card(f"{c.failed} / {c.partial} / {c.errors}", "fail / partial / error"),
            _card(
                str(c.failed_calls),
                f"errors: failed calls · agent {c.agent_errors} · evaluator {c.evaluator_errors}"
                + (
                    f" · {c.skipped_turns} turn{'s' if c.skipped_turns != 1 else ''} skipped"
                    if c.skipped_turns
                    else ""
                ),
            ),
            _card(cells.cost, f"cost · {cells.tokens_in} in / {cells.tokens_out} out tokens"),
            _card(cells.duration, f"duration · {cells.cache_hits} cache hits"),
            "</section>",
        ]
    )


def _num_cells(cells: list[str]) -> str:
    return "".join(f'<td class="num">{esc(cell)}</td>' for cell in cells)


def _notes(results: RunResults) -> str:
    s = results.summary
    out = []
    calls = calls_text(s.counts, s.errors_by_kind)
    if calls:
        out.append(f'<p class="err">Errors: {esc(calls)}</p>')
    if s.partial or s.errors:
        out.append(f'<p class="muted">{esc(LEGEND)}</p>')
    if s.usage:
        rows = "".join(
            f"<tr><td>{esc(kind)}</td>{_num_cells(bucket_cells(b))}</tr>"
            for kind, b in s.usage.items()
        )
        out.append(
            '<h2>Usage</h2><table class="grid"><thead><tr><th>Kind</th><th class="num">Calls</th>'
            '<th class="num">Input tokens</th><th class="num">Output tokens</th>'
            f'<th class="num">Cost</th><th class="num">Cache hits</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
    if s.limiter:
        out.append(f'<p class="muted">Limiter: {esc(s.limiter)}</p>')
    flaky = flaky_tasks(results)
    if flaky:
        links = ", ".join(f'<a href="#task-{t.index}">{esc(t.name)}</a>' for t in flaky)
        out.append(f"<p><b>Flaky tasks</b> (verdicts differ across repeats): {links}</p>")
    return "".join(out)


def _evaluators(results: RunResults) -> str:
    s = results.summary
    rows = "".join(
        f"<tr><td>{esc(e.name)}</td>{_num_cells([str(e.count), *evaluator_cells(e)])}</tr>"
        for e in s.evaluators
    )
    table = (
        '<table class="grid"><thead><tr><th>Evaluator</th><th class="num">Results</th>'
        '<th class="num">Pass rate</th><th class="num">Mean</th><th class="num">Pass</th>'
        '<th class="num">Fail</th><th class="num">Errors</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if rows
        else ""
    )
    # Counts and means come from the summary (the run's one tally); the results give only the
    # distribution each histogram draws.
    charts = []
    values_of = results_by_evaluator(results)
    for e in s.evaluators:
        values = [r.normalized for r in values_of.get(e.name, []) if r.normalized is not None]
        counts = f"pass {e.passed} · fail {e.failed} · error {e.errors} · mean {fmt_score(e.mean)}"
        charts.append(
            _chart(
                e.name, values, e.mean, (e.passed, e.failed, e.errors), counts, "normalized score"
            )
        )
    scores = [t.score for t in results.tasks if t.score is not None]
    c = s.counts
    charts.append(
        _chart(
            "Task scores",
            scores,
            s.score,
            (c.passed, c.failed, c.partial + c.errors),
            f"{tally_text(c)} · mean {fmt_score(s.score)}",
            "task score",
        )
    )
    return f'<h2>Evaluators</h2>{table}<div class="charts">{"".join(charts)}</div>'


def _chart(
    name: str,
    values: list[float],
    mean: float | None,
    bar: tuple[int, int, int],
    counts: str,
    what: str,
) -> str:
    """One chart: the counts line, a pass/fail/no-verdict bar, the score histogram."""
    return (
        f'<div class="chartbox"><div class="name">{esc(name)}</div>'
        f'<div class="counts">{esc(counts)}</div>{status_bar_svg(*bar)}'
        f"{histogram_svg(values, title=f'{name}: {what} distribution', mean=mean)}</div>"
    )


def _tasks(results: RunResults) -> str:
    head = "".join(
        f'<th data-key="{key}" data-type="{"num" if num else "text"}"'
        f"{NUM_CLASS if num else ''}>{esc(label)}</th>"
        if key
        else f"<th>{esc(label)}</th>"
        for label, key, num in COLUMNS
    )
    options = "".join(
        f'<option value="{s}">{s}</option>' for s in ("pass", "fail", "partial", "error")
    )
    controls = (
        '<div class="controls"><input id="q" type="search" placeholder="Filter by name, category, '
        'tag or query…" aria-label="Filter tasks"><select id="status" aria-label="Status">'
        f'<option value="">all statuses</option>{options}</select>'
        '<button id="expand" type="button">Expand all</button>'
        '<button id="collapse" type="button">Collapse all</button>'
        f'<span id="shown" class="muted">{len(results.tasks)} tasks</span></div>'
    )
    bodies = "".join(_task_body(t) for t in results.tasks)
    return (
        f'<h2>Tasks</h2>{controls}<table id="tasks" class="grid"><thead><tr>{head}</tr></thead>'
        f"{bodies}</table>"
    )


def _task_body(task: TaskOutcome) -> str:
    tokens = task.tokens.input + task.tokens.output
    words = [task.name, task.category or "", *task.tags, task.query[:300], task.response[:300]]
    search = " ".join(words).lower()
    why = "; ".join(str(f) for f in findings(task)[:2])
    flaky = ' <span class="badge b-flaky">flaky</span>' if task.flaky else ""
    attrs = {
        "index": str(task.index),
        "name": task.name.lower(),
        "category": (task.category or "").lower(),
        "status": task.status,
        "rank": str(STATUS_ORDER.get(task.status, 3)),
        "score": "" if task.score is None else f"{task.score:.6f}",
        "latency": f"{task.latency_s:.3f}",
        "tokens": str(tokens),
        "search": search,
    }
    data = " ".join(f'data-{k}="{esc(v)}"' for k, v in attrs.items())
    return (
        f'<tbody class="task" id="task-{task.index}" {data}>'
        f'<tr class="main" aria-expanded="false"><td class="num">{task.index + 1}</td>'
        f"<td>{esc(task.name)}{flaky}</td><td>{esc(task.category or '')}</td>"
        f'<td>{badge(task.status)}</td><td class="num">{esc(fmt_score(task.score))}</td>'
        f'<td class="num">{esc(fmt_seconds(task.latency_s))}</td>'
        f'<td class="num">{esc(fmt_int(tokens))}</td><td>{esc(truncate(why, 140))}</td></tr>'
        f'<tr class="detail" hidden><td colspan="{len(COLUMNS)}">{task_detail_html(task)}</td></tr>'
        "</tbody>"
    )
