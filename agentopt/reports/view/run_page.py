"""A run in the view: the report's first screen (the same header, cards and charts as
report.html), then every task with search and filters (status, evaluator verdict, error kind,
tag, category) and a drill-down per task (turns, tool calls, every verdict with its reason,
criteria, ground truth). A run still going shows what its journal holds so far, live."""

from __future__ import annotations

from agentopt.contracts.outcomes import outcome_rank
from agentopt.contracts.run_journal import RunJournalEntry
from agentopt.contracts.run_results import RunRecord, RunResults
from agentopt.contracts.task_record import TaskOutcome, iter_results
from agentopt.reports.formatting import (
    findings,
    fmt_int,
    fmt_score,
    fmt_seconds,
    fmt_when,
    short_name,
    truncate,
)
from agentopt.reports.html import report_summary
from agentopt.reports.html_task import badge, task_detail_html
from agentopt.reports.view.layout import page, sort_select, table_head, text

__all__ = ["live_run_page", "run_page"]

COLUMNS = [
    ("#", "index", "num"),
    ("Task", "name", "text"),
    ("Category", "category", "text"),
    ("Status", "rank", "num"),
    ("Score", "score", "num"),
    ("Latency", "latency", "num"),
    ("Tokens", "tokens", "num"),
    ("Why", "", "text"),
]


def _error_codes(task: TaskOutcome) -> list[str]:
    codes = []
    if task.error is not None:
        codes.append(task.error.code)
    for turn in task.turns or []:
        if turn.error is not None:
            codes.append(turn.error.code)
    for _, res in iter_results(task):
        if res.error is not None:
            codes.append(res.error.code)
    return sorted(set(codes))


def _verdicts(task: TaskOutcome) -> list[str]:
    """`evaluator:status` tokens, e.g. `relevance:fail`."""
    return sorted({f"{short_name(r.evaluator)}:{r.status}" for _, r in iter_results(task)})


def _tokens(values: list[str]) -> str:
    """Space-separated tokens for a data attribute (spaces inside a value become `_`)."""
    return " ".join(v.replace(" ", "_") for v in values)


def _task(task: TaskOutcome) -> str:
    tokens = task.tokens.input + task.tokens.output
    why = "; ".join(str(f) for f in findings(task)[:2])
    flaky = ' <span class="badge b-flaky">flaky</span>' if task.flaky else ""
    search = " ".join([task.name, task.category or "", *task.tags, task.query[:300],
                       task.response[:300]]).lower()  # fmt: skip
    attrs = {
        "index": str(task.index),
        "name": task.name.lower(),
        "category": (task.category or "").lower(),
        "status": task.status,
        "rank": str(outcome_rank(task.status)),
        "score": "" if task.score is None else f"{task.score:.6f}",
        "latency": f"{task.latency_s:.3f}",
        "tokens": str(tokens),
        "search": search,
        "verdicts": _tokens(_verdicts(task)),
        "errors": _tokens(_error_codes(task)),
        "tags": _tokens(task.tags),
        "cat": _tokens([task.category] if task.category else []),
    }
    data = " ".join(f'data-{k}="{text(v)}"' for k, v in attrs.items())
    tid = f"task-{task.index}"
    return (
        f'<tbody class="task" id="{tid}" {data}>'
        f'<tr class="main" tabindex="0" aria-expanded="false" aria-controls="{tid}-detail">'
        f'<td class="num" data-label="#">{task.index + 1}</td>'
        f'<td data-label="Task"><b>{text(task.name)}</b>{flaky}</td>'
        f'<td data-label="Category">{text(task.category or "")}</td>'
        f'<td data-label="Status">{badge(task.status)}</td>'
        f'<td class="num" data-label="Score">{text(fmt_score(task.score))}</td>'
        f'<td class="num" data-label="Latency">{text(fmt_seconds(task.latency_s))}</td>'
        f'<td class="num" data-label="Tokens">{text(fmt_int(tokens))}</td>'
        f'<td data-label="Why">{text(truncate(why, 140))}</td></tr>'
        f'<tr class="detail" id="{tid}-detail" hidden><td colspan="{len(COLUMNS)}">'
        f"{task_detail_html(task)}</td></tr></tbody>"
    )


def _select(label: str, key: str, values: list[str], words: dict[str, str] | None = None) -> str:
    if not values:
        return ""
    options = "".join(
        f'<option value="{text(v.replace(" ", "_"))}">{text((words or {}).get(v, v))}</option>'
        for v in values
    )
    return (
        f'<label>{text(label)} <select data-filter="{text(key)}">'
        f'<option value="">all</option>{options}</select></label>'
    )


def _controls(results: RunResults) -> str:
    tasks = results.tasks
    verdicts = sorted({v for t in tasks for v in _verdicts(t)})
    errors = sorted({c for t in tasks for c in _error_codes(t)})
    tags = sorted({tag for t in tasks for tag in t.tags})
    cats = sorted({t.category for t in tasks if t.category})
    return (
        '<div class="controls" data-filter-for="tasks">'
        '<label>Search <input type="search" data-filter="search" '
        'placeholder="name, query, answer…"></label>'
        + _select(
            "Status",
            "status",
            [s for s in ("pass", "fail", "partial", "error") if any(t.status == s for t in tasks)],
        )
        + _select("Evaluator verdict", "verdicts", verdicts)
        + _select("Error kind", "errors", errors)
        + _select("Tag", "tags", tags)
        + _select("Category", "cat", cats)
        + sort_select("tasks", COLUMNS)
        + '<button type="button" data-expand="all">Expand all</button>'
        '<button type="button" data-expand="none">Collapse all</button>'
        f'<span class="muted" data-shown>{len(tasks)} tasks</span></div>'
    )


def run_page(results: RunResults) -> str:
    """A finished (or stopped) run."""
    body = (
        f'<div class="report">{report_summary(results)}</div>'
        f"<h2>Tasks</h2>{_controls(results)}"
        f'<div class="scroll"><table id="tasks" class="grid stack tasks" data-sortable '
        f'data-groups="tbody.task">{table_head(COLUMNS)}'
        f"{''.join(_task(t) for t in results.tasks)}</table></div>"
    )
    return page(results.title, body)


def live_run_page(record: RunRecord, done: list[RunJournalEntry], live: str | None) -> str:
    """A run without results.json yet: what its journal holds so far."""
    rows = []
    for entry in done:
        score = entry.score
        rows.append(
            f'<tr><td data-label="Task">{text(score.name)}</td>'
            f'<td data-label="Repeat" class="num">{entry.repeat + 1}</td>'
            f'<td data-label="Status">{badge(score.status)}</td>'
            f'<td data-label="Score" class="num">{text(fmt_score(score.score))}</td></tr>'
        )
    head = table_head([("Task", "", "text"), ("Repeat", "", "num"), ("Status", "", "text"),
                       ("Score", "", "num")])  # fmt: skip
    status = record.status
    note = (
        "This run is still going: finished tasks appear here as they are journaled."
        if status == "running"
        else f"This run stopped ({status}) before writing results.json."
    )
    body = (
        f"<h1>{text(record.name or record.id)}</h1>"
        f'<div class="meta"><span>run <b>{text(record.id)}</b></span>'
        f"<span>status <b>{text(status)}</b></span>"
        f"<span>started <b>{text(fmt_when(record.started_at))}</b></span>"
        f"<span>model <b>{text(record.models.agent or record.agent.model or '')}</b></span></div>"
        f'<p class="warn">{text(note)}</p>'
        f'<p id="journaled"><b>{len(done)}</b> task runs finished so far.</p>'
        f'<table class="grid stack" id="done">{head}<tbody>{"".join(rows)}</tbody></table>'
    )
    return page(record.name or record.id, body, live=live)
