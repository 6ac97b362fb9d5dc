"""Inline SVG charts of the optimize HTML report: score per candidate in creation order, and
the Pareto plots (score vs tokens, score vs cost). No library, no script; text escaped."""

from __future__ import annotations

from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord
from agentopt.reports.html_task import esc

W, H = 520, 220
LEFT, RIGHT, TOP, BOTTOM = 40, 12, 12, 34


def _frame(title: str) -> list[str]:
    return [
        f'<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="{esc(title)}"><title>{esc(title)}</title>',
        f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}"/>',
    ]


def _y(score: float) -> float:
    return TOP + (1 - min(max(score, 0.0), 1.0)) * (H - TOP - BOTTOM)


def _y_ticks() -> list[str]:
    return [
        f'<text class="tick" x="{LEFT - 4}" y="{_y(v) + 3:.1f}" text-anchor="end">{v:g}</text>'
        for v in (0.0, 0.5, 1.0)
    ]


def scores_svg(candidates: list[CandidateRecord]) -> str:
    """One bar per candidate in creation order; screened-out ones as a cross on the axis;
    the baseline's score as a dashed line."""
    parts = _frame("Validation score per candidate, in order of creation") + _y_ticks()
    n = max(len(candidates), 1)
    step = (W - LEFT - RIGHT) / n
    base = next((c for c in candidates if c.id == BASELINE_ID), None)
    for i, c in enumerate(candidates):
        x = LEFT + i * step
        cx = x + step / 2
        label = c.id.replace("cand_", "#")
        parts.append(
            f'<text class="tick" x="{cx:.1f}" y="{H - BOTTOM + 12}" text-anchor="middle">'
            f"{esc(label)}</text>"
        )
        score = c.validation.score if c.validation else None
        if score is None:
            parts.append(
                f'<text class="tick miss" x="{cx:.1f}" y="{H - BOTTOM - 4}" text-anchor="middle">×'
                f"<title>{esc(c.id)}: {esc(c.status)} ({esc(c.strategy)})</title></text>"
            )
            continue
        top = _y(score)
        cls = "bar star" if c.star else ("bar base" if c.id == BASELINE_ID else "bar")
        parts.append(
            f'<rect class="{cls}" x="{x + step * 0.15:.1f}" y="{top:.1f}" '
            f'width="{step * 0.7:.1f}" height="{H - BOTTOM - top:.1f}">'
            f"<title>{esc(c.id)} ({esc(c.strategy)}): {score:.3f}</title></rect>"
        )
    if base is not None and base.validation and base.validation.score is not None:
        y = _y(base.validation.score)
        parts.append(
            f'<line class="mean" x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}">'
            f"<title>baseline {base.validation.score:.3f}</title></line>"
        )
    parts.append("</svg>")
    return "".join(parts)


def pareto_svg(candidates: list[CandidateRecord], axis: str) -> str:
    """Score (y) against mean tokens per task or cost (x); Pareto-optimal points filled."""
    title = f"Score vs {'mean tokens per task' if axis == 'tokens' else 'cost (USD)'}"
    points = []
    for c in candidates:
        if c.validation is None or c.validation.score is None:
            continue
        x = c.tokens if axis == "tokens" else c.cost
        if x is None:
            continue
        on_front = c.pareto.tokens if axis == "tokens" else c.pareto.cost
        points.append((c, float(x), c.validation.score, on_front))
    parts = _frame(title) + _y_ticks()
    if not points:
        parts.append("</svg>")
        return "".join(parts)
    hi = max(p[1] for p in points) or 1.0
    span = W - LEFT - RIGHT - 20

    def px(v: float) -> float:
        return LEFT + 10 + (v / hi) * span

    for v in (0.0, hi / 2, hi):
        shown = f"{v:,.0f}" if axis == "tokens" else f"${v:.3g}"
        parts.append(
            f'<text class="tick" x="{px(v):.1f}" y="{H - BOTTOM + 12}" text-anchor="middle">'
            f"{esc(shown)}</text>"
        )
    front = sorted((p for p in points if p[3]), key=lambda p: p[1])  # the dashed front line
    if len(front) > 1:
        path = " ".join(f"{px(x):.1f},{_y(y):.1f}" for _, x, y, _ in front)
        parts.append(f'<polyline class="front" points="{path}"/>')
    for c, x, y, on_front in points:
        cls = "pt front" if on_front else "pt"
        if c.star:
            cls += " star"
        parts.append(
            f'<circle class="{cls}" cx="{px(x):.1f}" cy="{_y(y):.1f}" r="5">'
            f"<title>{esc(c.id)}: score {y:.3f}, {esc(axis)} {x:,.4g}</title></circle>"
            f'<text class="tick" x="{px(x) + 7:.1f}" y="{_y(y) - 6:.1f}">{esc(c.id)}</text>'
        )
    parts.append(
        f'<text class="tick" x="{W / 2:.0f}" y="{H - 6}" text-anchor="middle">'
        f"{esc(title.split(' vs ')[1])}</text></svg>"
    )
    return "".join(parts)
