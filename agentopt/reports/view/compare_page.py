"""Compare 2–N runs: one row per task, one column per run (badge, score, the answer on
demand), better / worse / changed against the first run by the one ordering of outcomes, and
each run's score against the first with the paired noise rule. Filters: only changed, only
worse, search."""

from __future__ import annotations

from agentopt.contracts.outcomes import CHANGE_COLOURS
from agentopt.reports.compare_many import MultiCell, MultiColumn, MultiComparison, MultiRow
from agentopt.reports.formatting import fmt_ci, fmt_cost, fmt_delta, fmt_pct, fmt_score
from agentopt.reports.html_task import badge
from agentopt.reports.view.layout import page, text
from agentopt.reports.view.state import RunEntry

__all__ = ["compare_page", "pick_page"]


def _head(col: MultiColumn, index: int) -> str:
    role = "reference" if index == 0 else f"vs reference: {fmt_delta(col.delta)}"
    noise = ""
    if index and col.delta_ci is not None:
        verdict = "beyond noise" if col.beyond_noise else "within noise"
        cls = "better" if col.beyond_noise and (col.delta or 0) > 0 else (
            "worse" if col.beyond_noise else "same")  # fmt: skip
        noise = (
            f'<div class="delta {cls}">paired 95% CI {col.delta_ci[0]:+.3f} … '
            f"{col.delta_ci[1]:+.3f} over {col.shared} tasks: <b>{verdict}</b></div>"
        )
    elif index:
        noise = '<div class="muted">no shared scored task</div>'
    warn = (
        '<div class="warn">different dataset contents (sha256)</div>'
        if not col.same_dataset
        else ""
    )
    ci = fmt_ci(col.score_ci).removeprefix("95% CI ")
    return (
        f'<th scope="col" class="run-col"><a href="/runs/{text(col.run_id)}">{text(col.run_id)}'
        f'</a><div>{text(col.label)}</div><div class="muted">{text(col.model or "")}</div>'
        f"<div><b>{text(fmt_score(col.score))}</b> "
        + (f'<span class="muted">[{text(ci)}]</span>' if ci else "")
        + f'</div><div class="muted">pass {text(fmt_pct(col.pass_rate))} · '
        f"fail/partial/error {col.failed}/{col.partial}/{col.errors} · "
        f"{text(fmt_cost(col.cost_usd))}</div>"
        f'<div class="role">{text(role)}</div>{noise}{warn}</th>'
    )


def _cell(cell: MultiCell, label: str, index: int) -> str:
    if cell.status is None:
        tag = (
            f' <span class="chg {cell.change}">{text(cell.change)}</span>'
            if index and cell.change != "same"
            else ""
        )
        return f'<td data-label="{text(label)}" class="muted">not in this run{tag}</td>'
    delta = ""
    if index and cell.delta is not None and abs(cell.delta) > 1e-9:
        delta = f' <span class="delta">{text(fmt_delta(cell.delta))}</span>'
    tag = (
        f' <span class="chg {cell.change}" data-colour="{CHANGE_COLOURS.get(cell.change, "")}">'
        f"{text(cell.change)}</span>"
        if index and cell.change != "same"
        else ""
    )
    answer = cell.error or cell.response or "(no response)"
    return (
        f'<td data-label="{text(label)}" class="cell {cell.change if index else ""}">'
        f"{badge(cell.status)} {text(fmt_score(cell.score))}{delta}{tag}"
        f"<details><summary>answer</summary><pre>{text(answer)}</pre></details></td>"
    )


def _row(row: MultiRow, labels: list[str]) -> str:
    changes = row.changes
    flags = []
    if changes - {"same"}:
        flags.append("changed")
    if "worse" in changes:
        flags.append("worse")
    search = f"{row.task} {row.category or ''} {row.query[:200]}".lower()
    cells = "".join(_cell(c, labels[i], i) for i, c in enumerate(row.cells))
    return (
        f'<tr data-flags="{" ".join(flags)}" data-search="{text(search)}">'
        f'<th scope="row" data-label="Task"><b>{text(row.task)}</b>'
        f'<div class="muted">{text(row.category or "")}</div></th>{cells}</tr>'
    )


def compare_page(comp: MultiComparison) -> str:
    labels = [c.run_id for c in comp.columns]
    rows = comp.rows
    changed = sum(1 for r in rows if r.changes - {"same"})
    worse = sum(1 for r in rows if "worse" in r.changes)
    heads = "".join(_head(c, i) for i, c in enumerate(comp.columns))
    controls = (
        '<div class="controls" data-filter-for="compare">'
        '<label>Search <input type="search" data-filter="search" placeholder="task…"></label>'
        '<label><input type="checkbox" data-filter-flag="changed" id="only-changed"> '
        "Only changed</label>"
        '<label><input type="checkbox" data-filter-flag="worse" id="only-worse"> '
        "Only worse</label>"
        f'<span class="muted" data-shown>{len(rows)} tasks</span></div>'
    )
    summary = (
        f'<p id="compare-summary">{len(comp.columns)} runs, {len(rows)} tasks: '
        f"<b>{changed}</b> changed, <b>{worse}</b> worse than the reference "
        f"({text(comp.columns[0].run_id)}). Better / worse follow the one order of outcomes "
        "pass › partial › fail › error; a score move within one outcome counts only beyond its "
        "noise (repeats).</p>"
    )
    narrow = "".join(
        f"<li><b>{text(c.run_id)}</b> {text(c.label)}: {text(fmt_score(c.score))}"
        + (f", {text(fmt_delta(c.delta))} vs reference" if i and c.delta is not None else "")
        + ((" (beyond noise)" if c.beyond_noise else " (within noise)") if i else " (reference)")
        + "</li>"
        for i, c in enumerate(comp.columns)
    )
    body = (
        f"<h1>Compare {len(comp.columns)} runs</h1>{summary}"
        f'<ul class="only-narrow plain">{narrow}</ul>{controls}'
        f'<div class="scroll"><table class="grid stack compare" id="compare">'
        f'<thead><tr><th scope="col">Task</th>{heads}</tr></thead>'
        f"<tbody>{''.join(_row(r, labels) for r in rows)}</tbody></table></div>"
    )
    return page("Compare runs", body)


def pick_page(entries: list[RunEntry], note: str = "") -> str:
    """Fewer than two runs named: pick them here (a plain form, works without script)."""
    items = []
    for e in entries:
        if e.results is None:
            continue
        r = e.results
        items.append(
            f'<li><label><input type="checkbox" name="run" value="{text(e.id)}"> '
            f"<b>{text(e.id)}</b> {text(r.title)} · {text(fmt_score(r.summary.score))}"
            "</label></li>"
        )
    body = (
        f"<h1>Compare runs</h1><p>{text(note or 'Pick two or more runs.')}</p>"
        f'<form action="/compare" method="get"><ul class="plain">{"".join(items)}</ul>'
        '<button type="submit">Compare</button></form>'
    )
    return page("Compare runs", body)
