"""The optimize HTML report: ONE self-contained file (inline CSS and SVG, no script; the
Content-Security-Policy forbids loading anything) with the verdict, every candidate in order of
creation with its scores, the lineage tree, the Pareto plots and the instruction diffs."""

from __future__ import annotations

from agentopt.contracts.optimize_job import (
    BASELINE_ID,
    CandidateRecord,
    JobRecord,
)
from agentopt.reports.formatting import fmt_when
from agentopt.reports.html_assets import CSS
from agentopt.reports.html_task import esc
from agentopt.reports.optimize_cards import score_html, validation_cards
from agentopt.reports.optimize_diff import diff_html, unified_diff
from agentopt.reports.optimize_svg import pareto_svg, scores_svg
from agentopt.reports.optimize_table import candidate_cells, error_line, fmt_score

__all__ = ["render_optimize_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
EXTRA_CSS = """
svg .bar.base{fill:var(--muted)}svg .bar.star{fill:var(--pass)}svg .miss{fill:var(--fail)}
svg .pt{fill:var(--bg);stroke:var(--accent);stroke-width:2}svg .pt.front{fill:var(--accent)}
svg .pt.star{fill:var(--pass);stroke:var(--pass)}
svg .front{fill:none;stroke:var(--accent);stroke-dasharray:4 3}
ul.tree{list-style:none;padding-left:18px;margin:4px 0}ul.tree li{margin:3px 0}
.diff .add{color:var(--pass)}.diff .del{color:var(--fail)}.diff .hunk{color:var(--accent)}
details{margin:8px 0}summary{cursor:pointer;font-weight:600}
"""


def _header(job: JobRecord) -> str:
    agent = job.config.get("agent") or {}
    bits = [
        ("job", job.id),
        ("status", job.status),
        ("stopped", job.stop_reason or "—"),
        ("outcome", job.outcome or "—"),
        ("candidates", job.counts.line()),
        ("started", fmt_when(job.started_at)),
        ("agent", f"{agent.get('name', '')} ({agent.get('model', '')})"),
        (
            "splits",
            f"train {len(job.splits.train)} / validation {len(job.splits.validation)}"
            f" / test {len(job.splits.test)}",
        ),
    ]
    meta = "".join(f"<span><b>{esc(k)}</b> {esc(v)}</span>" for k, v in bits)
    errors = error_line(job)
    warns = "".join(f"<p class='warn'>{esc(w)}</p>" for w in job.warnings)
    if errors:
        warns = f"<p class='warn'><b>Errors:</b> {esc(errors)}.</p>" + warns
    if job.leak_note:
        warns += f"<p class='warn'><b>Leaks:</b> {esc(job.leak_note)}.</p>"
    notes = "".join(f"<p class='muted'>{esc(n)}</p>" for n in job.notes)
    return f"<h1>agentopt optimize — {esc(job.id)}</h1><div class='meta'>{meta}</div>{warns}{notes}"


def _cards(job: JobRecord) -> str:
    cards = validation_cards(
        job, baseline="baseline (validation)", delta="Δ vs baseline (95% paired CI)"
    )
    t = job.test
    if t is not None:
        cards.append(("test: baseline", score_html(t.baseline_score)))
        if t.best != BASELINE_ID:
            cards.append((f"test: {t.best}", score_html(t.best_score)))
        if t.optimism_gap is not None:
            cards.append(("optimism gap", f"{t.optimism_gap:+.3f}"))
    verdict = {
        "improved": "A candidate beats the baseline beyond the noise.",
        "no_improvement": "No candidate beats the baseline beyond the noise.",
    }.get(job.outcome or "", "")
    html = "".join(
        f"<div class='card'><div class='v'>{v}</div><div class='l'>{esc(label)}</div></div>"
        for label, v in cards
    )
    return f"<div class='cards'>{html}</div><p><b>{esc(verdict)}</b></p>"


def _table(candidates: list[CandidateRecord]) -> str:
    head = (
        "Candidate",
        "Parent",
        "Strategy",
        "Rationale",
        "Screening",
        "Validation",
        "Pass",
        "Tokens",
        "Cost",
        "Δ vs baseline",
        "Test",
    )
    rows = []
    for c in candidates:
        cells = candidate_cells(c)
        scr = c.screening
        screening = "—"
        if scr is not None:
            mark = "✓" if scr.accepted else ("incomplete" if scr.errors else "✗")
            failed = f", {scr.errors} failed" if scr.errors else ""
            screening = f"{fmt_score(scr.child)} vs {fmt_score(scr.parent)} {mark}{failed}"
        delta = f"{c.delta.mean:+.3f} [{c.delta.low:+.3f}, {c.delta.high:+.3f}]" if c.delta else "—"
        rows.append(
            "<tr>"
            + f"<td>{esc(cells[0])}</td><td>{esc(c.parent or '—')}</td>"
            + f"<td>{esc(cells[5])}</td><td class='reason'>{esc(c.rationale)}</td>"
            + f"<td>{esc(screening)}</td><td class='num'>{score_html(c.validation)}</td>"
            + "".join(f"<td class='num'>{esc(v)}</td>" for v in cells[2:5])
            + f"<td class='num'>{esc(delta)}</td><td class='num'>{score_html(c.test)}</td></tr>"
        )
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    return f"<table class='grid'><thead><tr>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _tree(candidates: list[CandidateRecord]) -> str:
    children: dict[str | None, list[CandidateRecord]] = {}
    for c in candidates:
        children.setdefault(c.parent, []).append(c)

    def node(c: CandidateRecord) -> str:
        score = c.validation.score if c.validation else None
        shown = f"{score:.3f}" if score is not None else c.status.replace("_", " ")
        kids = "".join(node(k) for k in children.get(c.id, []))
        sub = f"<ul class='tree'>{kids}</ul>" if kids else ""
        star = " ★" if c.star else ""
        return f"<li><b>{esc(c.id)}{star}</b> {esc(c.strategy)} — {esc(shown)}{sub}</li>"

    roots = children.get(None, [])
    return f"<ul class='tree'>{''.join(node(r) for r in roots)}</ul>"


def _diffs(candidates: list[CandidateRecord], instructions: dict[str, str]) -> str:
    parts = []
    for c in candidates:
        if c.id == BASELINE_ID or c.id not in instructions:
            continue
        parent = c.parent or BASELINE_ID
        diff = unified_diff(instructions.get(parent, ""), instructions[c.id], parent, c.id)
        body = diff_html(diff, esc) if diff else "<p class='muted'>Instructions unchanged.</p>"
        open_attr = " open" if c.star else ""
        parts.append(
            f"<details{open_attr}><summary>{esc(c.id)} vs {esc(parent)} — {esc(c.strategy)}"
            f"</summary><p>{esc(c.rationale)}</p>{body}</details>"
        )
    return "".join(parts) or "<p class='muted'>No candidate yet.</p>"


def render_optimize_html(job: JobRecord, instructions: dict[str, str]) -> str:
    """The whole report as one HTML string. `instructions`: candidate id → instructions."""
    ordered = sorted(job.candidates, key=lambda c: c.number)
    return "".join(
        [
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">',
            f"<title>agentopt optimize — {esc(job.id)}</title>",
            f"<style>{CSS}{EXTRA_CSS}</style></head><body>",
            _header(job),
            _cards(job),
            "<h2>Candidates, in order of creation</h2>",
            f"<div class='chartbox'>{scores_svg(ordered)}</div>",
            _table(ordered),
            "<h2>Lineage</h2>",
            _tree(ordered),
            "<h2>Pareto plots</h2><div class='charts'>",
            f"<div class='chartbox'>{pareto_svg(ordered, 'tokens')}</div>",
            f"<div class='chartbox'>{pareto_svg(ordered, 'cost')}</div></div>",
            "<h2>Instruction diffs</h2>",
            _diffs(ordered, instructions),
            "</body></html>\n",
        ]
    )
