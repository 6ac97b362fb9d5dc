"""One task's expandable detail in the HTML report: transcript, tool calls, citations,
verdicts with reasons, criterion verdicts and rubric dimension scores.

Every string from data goes through `esc` — agent output is untrusted, so a response holding
`<script>` must show as text. Links are made only for http(s) citation URLs.
"""

from __future__ import annotations

from html import escape

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.task_record import TaskOutcome, TurnOutcome
from agentopt.contracts.transcript import Citation, ToolCallRecord
from agentopt.reports.cells import in_out_text, repeats_text
from agentopt.reports.formatting import (
    as_text,
    criterion_verdicts,
    fmt_score,
    fmt_seconds,
    short_name,
    simulation_line,
)

__all__ = ["badge", "esc", "task_detail_html"]

TEXT_LIMIT = 20_000
"""Longer texts are cut in the report (results.json keeps them whole)."""


def esc(value: object) -> str:
    """HTML-escape anything (quotes included, so it is safe in attributes too)."""
    return escape("" if value is None else str(value), quote=True)


def badge(status: str) -> str:
    return f'<span class="badge b-{esc(status)}">{esc(status)}</span>'


def _pre(text: str) -> str:
    if len(text) > TEXT_LIMIT:
        text = text[:TEXT_LIMIT] + f"\n… ({len(text) - TEXT_LIMIT} more characters)"
    return f"<pre>{esc(text)}</pre>"


def task_detail_html(task: TaskOutcome) -> str:
    out: list[str] = []
    meta = [
        f"<span>latency {esc(fmt_seconds(task.latency_s))}</span>",
        f"<span>tokens {esc(in_out_text(task.tokens.input, task.tokens.output))}</span>",
    ]
    if task.tags:
        meta.append(f"<span>tags {esc(', '.join(task.tags))}</span>")
    for key, value in (task.metadata or {}).items():
        meta.append(f"<span>{esc(key)} {esc(as_text(value))}</span>")
    out.append(f'<div class="meta">{"".join(meta)}</div>')
    if task.description:
        out.append(f'<p class="muted">{esc(task.description)}</p>')
    if task.error:
        out.append(
            f'<p class="err"><b>Agent error</b> {esc(task.error.code)}: '
            f"{esc(task.error.message)}</p>"
        )
    turns = task.transcript_turns()
    whole = task.evaluation_level == "conversation"
    for i, turn in enumerate(turns, 1):
        title = f"Turn {i} of {len(turns)}" if task.turns else ""
        out.append(_turn_html(turn, title, with_status=bool(task.turns) and not whole))
    if task.simulation is not None:
        out.append(f'<p class="sim"><b>{esc(simulation_line(task.simulation))}</b></p>')
    if whole and task.turns and task.evaluators:
        out.append(f"<h3>Conversation verdicts</h3>{_verdicts_html(task.evaluators)}")
    if task.ground_truth:
        out.append(f'<div class="label">Ground truth</div>{_pre(task.ground_truth)}')
    if task.repeats:
        out.append(_repeats_html(task))
    return "".join(out)


def _turn_html(turn: TurnOutcome, title: str, *, with_status: bool) -> str:
    out = ['<div class="turn">']
    if title:
        status = f" {badge(turn.status)} score {esc(fmt_score(turn.score))}" if with_status else ""
        out.append(f"<h3>{esc(title)}{status}</h3>")
    user = 'User <span class="muted">(simulated)</span>' if turn.simulated else "User"
    out.append(f'<div class="label">{user}</div>{_pre(turn.query or "—")}')
    for call in turn.tool_calls:
        out.append(_tool_html(call))
    response = turn.response if turn.response else "(no response)"
    out.append(f'<div class="label">Agent</div>{_pre(response)}')
    if turn.citations:
        out.append(_citations_html(turn.citations))
    if turn.error:
        out.append(
            f'<p class="err"><b>Turn error</b> {esc(turn.error.code)}: '
            f"{esc(turn.error.message)}</p>"
        )
    if turn.evaluators:
        out.append(_verdicts_html(turn.evaluators))
    out.append("</div>")
    return "".join(out)


def _tool_html(call: ToolCallRecord) -> str:
    source = f' <span class="muted">({esc(call.source)})</span>' if call.source else ""
    parts = [
        f'<div class="tool"><div class="label">Tool call: {esc(call.name)}{source}</div>',
        '<div class="muted">arguments</div>',
        _pre(as_text(call.arguments) or "{}"),
    ]
    if call.error:
        parts.append(f'<div class="err">error</div>{_pre(call.error)}')
    else:
        parts.append(f'<div class="muted">result</div>{_pre(as_text(call.result))}')
    parts.append("</div>")
    return "".join(parts)


def _citations_html(citations: list[Citation]) -> str:
    items = []
    for c in citations:
        parts = [f"[{c.index}]"] if c.index is not None else []
        if c.title:
            parts.append(esc(c.title))
        if c.url and c.url.lower().startswith(("http://", "https://")):
            parts.append(
                f'<a href="{esc(c.url)}" rel="noopener noreferrer" target="_blank">{esc(c.url)}</a>'
            )
        elif c.url:
            parts.append(esc(c.url))
        items.append(f"<li>{' '.join(parts)}</li>")
    return f'<div class="label">Citations</div><ul class="sub">{"".join(items)}</ul>'


def _verdicts_html(results: list[EvalResult]) -> str:
    rows = []
    for res in results:
        score = "—" if res.score is None else f"{res.score:g}"
        threshold = "" if res.threshold is None else f"{res.threshold:g}"
        if res.error:
            reason = f'<span class="err">{esc(res.error.code)}: {esc(res.error.message)}</span>'
        else:
            reason = esc(res.reason)
        reason += _details_html(res)
        rows.append(
            f"<tr><td>{esc(short_name(res.evaluator))}</td><td>{badge(res.status)}</td>"
            f'<td class="num">{esc(score)}</td><td class="num">{esc(threshold)}</td>'
            f'<td class="num">{esc(fmt_score(res.normalized))}</td>'
            f'<td class="reason">{reason}</td></tr>'
        )
    return (
        '<table class="verdicts"><thead><tr><th>Evaluator</th><th>Verdict</th>'
        '<th class="num">Score</th><th class="num">Threshold</th><th class="num">Normalized</th>'
        f"<th>Reason</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _details_html(res: EvalResult) -> str:
    """Criterion verdicts and rubric dimensions, when the evaluator recorded them."""
    items = []
    for v in criterion_verdicts(res):
        mark = "✓" if v.get("passed") else "✗"
        text = str(v.get("instruction") or "").strip()
        words = f' <span class="criterion">“{esc(text)}”</span>' if text else ""
        items.append(
            f"<li>{mark} <b>{esc(v.get('name', '?'))}</b>{words}: {esc(v.get('reason', ''))}</li>"
        )
    for d in res.details.get("dimension_scores") or []:
        if not isinstance(d, dict):
            continue
        if d.get("applicable") is False:
            items.append(f"<li><b>{esc(d.get('id', '?'))}</b>: not applicable</li>")
            continue
        weight = f" (weight {esc(d['weight'])})" if d.get("weight") is not None else ""
        items.append(
            f"<li><b>{esc(d.get('id', '?'))}</b>: {esc(d.get('score', '?'))}/5{weight} "
            f"{esc(d.get('reason', ''))}</li>"
        )
    return f'<ul class="sub">{"".join(items)}</ul>' if items else ""


def _repeats_html(task: TaskOutcome) -> str:
    flaky = ' <span class="badge b-flaky">flaky</span>' if task.flaky else ""
    rows = "".join(
        f'<tr><td class="num">{rep.repeat + 1}</td><td>{badge(rep.status)}</td>'
        f'<td class="num">{esc(fmt_score(rep.score))}</td>'
        f"<td>{esc(rep.response[:300])}</td></tr>"
        for rep in task.repeats or []
    )
    return (
        f"<h3>{esc(repeats_text(task))}{flaky}</h3>"
        '<table class="verdicts"><thead><tr><th class="num">#</th><th>Status</th>'
        f'<th class="num">Score</th><th>Response</th></tr></thead><tbody>{rows}</tbody></table>'
    )
