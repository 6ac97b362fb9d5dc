"""The view's first page: every run (sortable, filterable, pick two or more to compare), the
score of each suite over time, the optimize jobs and the matrix runs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePath

from agentopt.contracts.matrix import MatrixRecord
from agentopt.contracts.optimize_job import JobRecord
from agentopt.contracts.run_results import RunResults
from agentopt.reports.formatting import fmt_ci, fmt_cost, fmt_pct, fmt_score, fmt_seconds, fmt_when
from agentopt.reports.view.charts import ScorePoint, score_over_time_svg
from agentopt.reports.view.job_facts import candidate_line, stop_phrase
from agentopt.reports.view.layout import page, sort_select, table_head, text
from agentopt.reports.view.state import RunEntry, ViewState

__all__ = ["runs_page"]

RUN_COLUMNS = [
    ("", "", "text"),
    ("Run", "id", "text"),
    ("Date", "date", "text"),
    ("Suite · dataset", "suite", "text"),
    ("Agent · model", "agent", "text"),
    ("Score", "score", "num"),
    ("Pass rate", "pass", "num"),
    ("Errors", "errors", "num"),
    ("Cost", "cost", "num"),
    ("Duration", "duration", "num"),
    ("Status", "status", "text"),
]


def suite_key(r: RunResults) -> str:
    """The suite a run belongs to: its name, else its dataset's name or file."""
    ds = r.run.dataset
    source = PurePath(ds.source).name if ds.source else None
    return r.run.name or ds.name or source or "ad-hoc prompts"


def _suite(r: RunResults) -> str:
    ds = r.run.dataset
    name = suite_key(r)
    version = f" v{ds.version}" if ds.version else ""
    data = f" · {ds.name}{version}" if ds.name and ds.name != name else version
    return name + data


def _agent(r: RunResults) -> str:
    agent = r.run.agent.name or r.run.agent.target or ""
    model = r.run.models.agent or r.run.agent.model or ""
    variant = f" [{r.run.variant.label}]" if r.run.variant else ""
    return " · ".join(p for p in (agent, model) if p) + variant


def _cell(label: str, html: str, *, num: bool = False, sort: str | None = None) -> str:
    cls = ' class="num"' if num else ""
    key = f' data-sort="{text(sort)}"' if sort is not None else ""
    return f'<td data-label="{text(label)}"{cls}{key}>{html}</td>'


def _run_row(entry: RunEntry) -> str:
    rid = text(entry.id)
    link = f'<a href="/runs/{rid}">{rid}</a>'
    if entry.results is None:
        status = "running" if entry.running else ("broken" if entry.problem else "no results")
        why = text(entry.problem or "")
        rec = entry.record
        when = fmt_when(rec.started_at) if rec else ""
        return (
            f'<tr data-search="{text(entry.id)} {text(status)}" data-status="{text(status)}">'
            f"{_cell('', '')}{_cell('Run', link if entry.problem is None else rid)}"
            f"{_cell('Date', text(when), sort=rec.started_at if rec else '')}"
            f'<td colspan="7" data-label="Note" class="muted">{why}</td>'
            f"{_cell('Status', text(status))}</tr>"
        )
    r = entry.results
    s = r.summary
    ci = fmt_ci(s.score_ci).removeprefix("95% CI ")
    score = f"<b>{text(fmt_score(s.score))}</b>" + (
        f' <span class="muted">[{text(ci)}]</span>' if ci else ""
    )
    pick = (
        f'<input type="checkbox" class="pick" value="{rid}" aria-label="Pick run {rid} to compare">'
    )
    suite, agent = _suite(r), _agent(r)
    calls = s.counts.failed_calls
    search = " ".join([entry.id, suite, agent, str(r.run.status)]).lower()
    return (
        f'<tr data-search="{text(search)}" data-status="{text(r.run.status)}">'
        + _cell("Compare", pick)
        + _cell("Run", link, sort=entry.id)
        + _cell("Date", text(fmt_when(r.run.started_at)), sort=r.run.started_at or "")
        + _cell("Suite", text(suite), sort=suite.lower())
        + _cell("Agent", text(agent), sort=agent.lower())
        + _cell("Score", score, num=True, sort="" if s.score is None else f"{s.score:.6f}")
        + _cell("Pass rate", text(fmt_pct(s.pass_rate)), num=True, sort=f"{s.pass_rate:.6f}")
        # Failed calls, as `eval list` and the summary's "Errors:" line count them.
        + _cell("Errors", str(calls), num=True, sort=str(calls))
        + _cell("Cost", text(fmt_cost(s.cost_usd)), num=True, sort=f"{s.cost_usd:.6f}")
        + _cell("Duration", text(fmt_seconds(s.duration_s)), num=True, sort=f"{s.duration_s}")
        + _cell("Status", text(r.run.status))
        + "</tr>"
    )


def _charts(entries: list[RunEntry]) -> str:
    by_suite: dict[str, list[ScorePoint]] = defaultdict(list)
    for e in entries:
        r = e.results
        if r is None or r.summary.score is None:
            continue
        ci = r.summary.score_ci
        by_suite[suite_key(r)].append(
            ScorePoint(
                r.run.id,
                fmt_when(r.run.started_at),
                r.summary.score,
                (ci[0], ci[1]) if ci and len(ci) == 2 else None,
            )
        )
    boxes = []
    for suite, points in sorted(by_suite.items()):
        points.sort(key=lambda p: p.run_id)
        boxes.append(
            f'<figure class="chartbox"><figcaption class="name">{text(suite)}</figcaption>'
            f"{score_over_time_svg(suite, points)}</figure>"
        )
    if not boxes:
        return ""
    return f'<h2>Score over time, per suite</h2><div class="charts">{"".join(boxes)}</div>'


def _jobs(jobs: list[tuple[str, JobRecord | None, str | None]]) -> str:
    if not jobs:
        return '<h2 id="jobs">Optimize jobs</h2><p class="muted">No optimize job yet.</p>'
    rows = []
    for jid, job, problem in jobs:
        if job is None:
            rows.append(
                f'<tr><td data-label="Job">{text(jid)}</td>'
                f'<td colspan="6" data-label="Note" class="muted">{text(problem)}</td></tr>'
            )
            continue
        best = job.candidate(job.best) if job.best else None
        best_text = "—"
        if best is not None and best.validation is not None:
            best_text = f"{best.id}{' ★' if best.star else ''} {fmt_score(best.validation.score)}"
        rows.append(
            f'<tr><td data-label="Job"><a href="/optimize/{text(jid)}">{text(jid)}</a></td>'
            f'<td data-label="Started">{text(fmt_when(job.started_at))}</td>'
            f'<td data-label="Status">{text(job.status)}</td>'
            f'<td data-label="Outcome">{text(job.outcome or "—")}</td>'
            f'<td data-label="Best">{text(best_text)}</td>'
            f'<td data-label="Candidates">{text(candidate_line(job))}</td>'
            f'<td data-label="Stopped">{text(stop_phrase(job) or "—")}</td></tr>'
        )
    head = table_head(
        [
            (h, "", "text")
            for h in ("Job", "Started", "Status", "Outcome", "Best", "Candidates", "Stopped")
        ]
    )
    return (
        f'<h2 id="jobs">Optimize jobs</h2><table class="grid stack" id="jobs-table">{head}'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _matrices(found: list[MatrixRecord]) -> str:
    if not found:
        return ""
    rows = []
    for m in found:
        line = m.best.line() if m.best else "—"
        rows.append(
            f'<tr><td data-label="Matrix"><a href="/matrices/{text(m.id)}">{text(m.id)}</a></td>'
            f'<td data-label="Name">{text(m.name or "")}</td>'
            f'<td data-label="Variants">{text(", ".join(v.label for v in m.variants))}</td>'
            f'<td data-label="Best">{text(line)}</td></tr>'
        )
    head = table_head([(h, "", "text") for h in ("Matrix", "Name", "Variants", "Best variant")])
    return (
        f'<h2 id="matrices">Matrix runs</h2><table class="grid stack" id="matrices-table">'
        f"{head}<tbody>{''.join(rows)}</tbody></table>"
    )


def runs_page(state: ViewState) -> str:
    entries = state.runs()
    running = any(e.running for e in entries)
    if entries:
        rows = "".join(_run_row(e) for e in entries)
        statuses = sorted({(e.results.run.status if e.results else "running") for e in entries})
        options = "".join(f'<option value="{text(s)}">{text(s)}</option>' for s in statuses)
        controls = (
            '<div class="controls" data-filter-for="runs-table">'
            '<label>Search <input type="search" data-filter="search" '
            'placeholder="run, suite, model…"></label>'
            '<label>Status <select data-filter="status"><option value="">all</option>'
            f"{options}</select></label>{sort_select('runs-table', RUN_COLUMNS)}"
            '<button type="button" id="compare-picked" disabled>Compare picked runs</button>'
            '<span class="muted" data-shown></span></div>'
        )
        table = (
            f'{controls}<div class="scroll">'
            '<table class="grid stack" id="runs-table" data-sortable>'
            f"{table_head(RUN_COLUMNS)}<tbody>{rows}</tbody></table></div>"
        )
    else:
        table = "<p>No runs yet: start one with <code>agentopt eval run</code>.</p>"
    body = (
        f'<h1 id="runs">Runs</h1>{table}{_charts(entries)}'
        f"{_jobs(state.jobs())}{_matrices(state.matrices())}"
    )
    return page("Runs", body, live="/api/version?page=/" if running else None)
