"""An optimize job in the view: why it stopped, the candidate table (each row opens its
screening and validation results and its diff against its parent and the baseline:
instructions, tools, skills, model), the score-vs-cost Pareto chart, and the held-out test
split. A running job's page updates itself as job.json is rewritten."""

from __future__ import annotations

from collections.abc import Callable

from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord, JobRecord
from agentopt.reports.formatting import fmt_cost, fmt_int, fmt_pct, fmt_score, fmt_when
from agentopt.reports.optimize_cards import score_html, validation_cards
from agentopt.reports.optimize_diff import diff_html
from agentopt.reports.optimize_svg import pareto_svg, scores_svg
from agentopt.reports.view.job_facts import candidate_line, stop_phrase
from agentopt.reports.view.layout import page, table_head, text

__all__ = ["job_page"]

Diff = Callable[[str, str], list[str]]
"""(old candidate id, new candidate id) → unified diff lines of their configuration folders."""

COLUMNS = [
    ("Candidate", "", "text"),
    ("Parent", "", "text"),
    ("Strategy", "", "text"),
    ("Status", "", "text"),
    ("Screening", "", "text"),
    ("Validation", "", "num"),
    ("Pass", "", "num"),
    ("Tokens/task", "", "num"),
    ("Cost", "", "num"),
    ("Δ vs baseline", "", "num"),
    ("Pareto", "", "text"),
    ("Test", "", "num"),
]


def _diff_html(lines: list[str]) -> str:
    if not lines:
        return '<p class="muted">No difference.</p>'
    return diff_html(lines, text, header_class="file")


def _screening(c: CandidateRecord) -> str:
    s = c.screening
    if s is None:
        return "—"
    mark = "accepted" if s.accepted else ("incomplete" if s.errors else "screened out")
    failed = f", {s.errors} failed" if s.errors else ""
    return f"{fmt_score(s.child)} vs parent {fmt_score(s.parent)} on {len(s.tasks)}: {mark}{failed}"


def _detail(c: CandidateRecord, diff: Diff) -> str:
    parts = [f"<p>{text(c.rationale or '(no rationale recorded)')}</p>"]
    facts = [f"model <b>{text(c.model or '—')}</b>", f"status <b>{text(c.status)}</b>"]
    if c.mutation:
        facts.append("mutation " + text(", ".join(f"{k}: {v}" for k, v in c.mutation.items())))
    parts.append(f'<div class="meta">{"".join(f"<span>{f}</span>" for f in facts)}</div>')
    if c.screening is not None:
        s = c.screening
        parts.append(
            f"<h4>Screening</h4><p>{text(_screening(c))}</p>"
            f'<p class="muted">minibatch: {text(", ".join(s.tasks))}</p>'
        )
    if c.outranked is not None:
        o = c.outranked
        parts.append(
            f"<h4>Validation stopped early</h4><p>after {o.tasks} of {o.of} tasks it could reach "
            f"at most {o.at_most:.3f} &lt; {text(o.best)} {o.best_score:.3f}</p>"
        )
    v = c.validation
    if v is not None:
        worst = sorted(
            ((k, s) for k, s in v.per_task.items()), key=lambda kv: (kv[1] is not None, kv[1] or 0)
        )[:8]
        tasks = ", ".join(f"{k} {fmt_score(s)}" for k, s in worst)
        parts.append(
            f"<h4>Validation</h4><p>{score_html(v)} · pass {text(fmt_pct(v.pass_rate))} · "
            f"{v.n} tasks · {v.errors} errors</p>"
            f'<p class="muted">weakest tasks: {text(tasks)}</p>'
        )
    if c.test is not None:
        parts.append(f"<h4>Test split</h4><p>{score_html(c.test)}</p>")
    if c.id != BASELINE_ID:
        parent = c.parent or BASELINE_ID
        parts.append(
            f"<h4>Diff against its parent ({text(parent)})</h4>{_diff_html(diff(parent, c.id))}"
        )
        if parent != BASELINE_ID:
            parts.append(f"<h4>Diff against the baseline</h4>{_diff_html(diff(BASELINE_ID, c.id))}")
    return "".join(parts)


def _row(c: CandidateRecord, diff: Diff) -> str:
    v = c.validation
    delta = f"{c.delta.mean:+.3f} [{c.delta.low:+.3f}, {c.delta.high:+.3f}]" if c.delta else "—"
    pareto = ", ".join(k for k in ("tokens", "cost") if getattr(c.pareto, k)) or "—"
    cid = f"cand-{text(c.id)}"
    star = " ★" if c.star else ""
    tokens = fmt_int(round(c.tokens)) if c.tokens is not None else "—"
    cells = [
        ("Candidate", f"<b>{text(c.id)}{star}</b>"),
        ("Parent", text(c.parent or "—")),
        ("Strategy", text(c.strategy)),
        ("Status", text(c.status.replace("_", " "))),
        ("Screening", text(_screening(c))),
        ("Validation", score_html(v)),
        ("Pass", text(fmt_pct(v.pass_rate)) if v else "—"),
        ("Tokens/task", text(tokens)),
        ("Cost", text(fmt_cost(c.cost)) if c.cost is not None else "—"),
        ("Δ vs baseline", text(delta)),
        ("Pareto", text(pareto)),
        ("Test", score_html(c.test)),
    ]
    tds = "".join(f'<td data-label="{label}">{html}</td>' for label, html in cells)
    return (
        f'<tbody class="task cand" id="{cid}" data-status="{text(c.status)}">'
        f'<tr class="main" tabindex="0" aria-expanded="false" aria-controls="{cid}-detail">'
        f'{tds}</tr><tr class="detail" id="{cid}-detail" hidden><td colspan="{len(COLUMNS)}">'
        f"{_detail(c, diff)}</td></tr></tbody>"
    )


def _facts(job: JobRecord) -> str:
    agent = job.config.get("agent") or {}
    phrase = stop_phrase(job)
    bits = [
        ("job", job.id),
        ("status", job.status),
        ("stopped", phrase or "still running"),
        ("outcome", (job.outcome or "—").replace("_", " ")),
        ("started", fmt_when(job.started_at)),
        ("agent", f"{agent.get('name', '')} ({agent.get('model', '')})"),
        ("candidates", candidate_line(job)),
    ]
    if job.finished_at:
        bits.insert(5, ("finished", fmt_when(job.finished_at)))
    meta = "".join(f"<span>{text(k)} <b>{text(v)}</b></span>" for k, v in bits)
    out = [f'<div class="meta" id="job-facts">{meta}</div>']
    if phrase:
        out.append(
            f'<p class="stop" id="stop-reason"><b>Why the search stopped:</b> {text(phrase)}</p>'
        )
    if job.leak_note:
        out.append(f'<p class="warn"><b>Leaks:</b> {text(job.leak_note)}.</p>')
    if job.errors.units:
        codes = ", ".join(f"{k} {v}" for k, v in sorted(job.errors.by_code.items()))
        out.append(
            f'<p class="warn"><b>Errors:</b> {job.errors.units} evaluations failed ({text(codes)})'
            f"; candidates {text(', '.join(job.errors.candidates))}.</p>"
        )
    out += [f'<p class="warn">{text(w)}</p>' for w in job.warnings]
    out += [f'<p class="muted">{text(n)}</p>' for n in job.notes]
    return "".join(out)


def _cards(job: JobRecord) -> str:
    cards = validation_cards(
        job, baseline="baseline · validation", delta="Δ vs baseline (paired 95% CI)"
    )
    return (
        '<section class="cards">'
        + "".join(
            f'<div class="card"><div class="v">{v}</div><div class="l">{text(k)}</div></div>'
            for k, v in cards
        )
        + "</section>"
    )


def _test(job: JobRecord) -> str:
    sp = job.splits
    names = ", ".join(sp.test) if sp.test else "none"
    out = [
        '<h2 id="test-split">Test split</h2>',
        f"<p>train {len(sp.train)} · validation {len(sp.validation)} · test {len(sp.test)} "
        f"tasks ({text(sp.source)}, seed {sp.seed}).</p>",
        f'<p class="muted">held out: {text(names)}</p>',
    ]
    if sp.warning:
        out.append(f'<p class="warn">{text(sp.warning)}</p>')
    t = job.test
    if t is None:
        out.append('<p class="muted">The test split is evaluated once, at the end.</p>')
        return "".join(out)
    rows = [("baseline", score_html(t.baseline_score))]
    if t.best != BASELINE_ID:
        rows.append((t.best, score_html(t.best_score)))
    if t.delta is not None:
        rows.append(
            ("Δ (paired 95% CI)", f"{t.delta.mean:+.3f} [{t.delta.low:+.3f}, {t.delta.high:+.3f}]")
        )
    if t.optimism_gap is not None:
        rows.append(("optimism gap (validation gain − test gain)", f"{t.optimism_gap:+.3f}"))
    out.append(
        '<table class="grid stack" id="test-table"><tbody>'
        + "".join(
            f'<tr><th scope="row">{text(k)}</th><td data-label="{text(k)}">{v}</td></tr>'
            for k, v in rows
        )
        + "</tbody></table>"
    )
    if t.note:
        out.append(f'<p class="muted">{text(t.note)}</p>')
    return "".join(out)


def job_page(job: JobRecord, diff: Diff, *, live: str | None) -> str:
    ordered = sorted(job.candidates, key=lambda c: c.number)
    rows = "".join(_row(c, diff) for c in ordered)
    body = (
        f"<h1>Optimize job {text(job.id)}</h1>{_facts(job)}{_cards(job)}"
        '<h2>Candidates</h2><p class="muted">Open a row for its screening, validation and '
        "diffs.</p>"
        f'<div class="scroll"><table class="grid stack tasks" id="candidates">'
        f"{table_head(COLUMNS)}{rows}</table></div>"
        '<h2>Score and cost</h2><div class="charts">'
        f'<figure class="chartbox" id="pareto-cost">{pareto_svg(ordered, "cost")}</figure>'
        f'<figure class="chartbox">{pareto_svg(ordered, "tokens")}</figure>'
        f'<figure class="chartbox">{scores_svg(ordered)}</figure></div>'
        f"{_test(job)}"
    )
    return page(f"Optimize {job.id}", body, live=live)
