"""Inline SVG charts of the view that the static reports do not have: a suite's score over
time (one point per finished run, its 95% interval as a whisker)."""

from __future__ import annotations

from dataclasses import dataclass

from agentopt.reports.html_task import esc

__all__ = ["ScorePoint", "score_over_time_svg"]

W, H = 360, 160
LEFT, RIGHT, TOP, BOTTOM = 30, 10, 10, 26


@dataclass(frozen=True)
class ScorePoint:
    run_id: str
    when: str
    score: float
    ci: tuple[float, float] | None = None


def _y(v: float) -> float:
    return TOP + (1 - min(max(v, 0.0), 1.0)) * (H - TOP - BOTTOM)


def score_over_time_svg(suite: str, points: list[ScorePoint]) -> str:
    """Runs in time order left to right; each point links to its run."""
    title = f"{suite}: score of each run over time"
    parts = [
        f'<svg class="chart" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
        f'aria-label="{esc(title)}"><title>{esc(title)}</title>',
        f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}"/>',
    ]
    for v in (0.0, 0.5, 1.0):
        parts.append(
            f'<text class="tick" x="{LEFT - 4}" y="{_y(v) + 3:.1f}" text-anchor="end">{v:g}</text>'
        )
    n = len(points)
    span = W - LEFT - RIGHT
    xs = [LEFT + span / 2] if n == 1 else [LEFT + 8 + i * (span - 16) / (n - 1) for i in range(n)]
    if n > 1:
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{x:.1f},{_y(p.score):.1f}"
            for i, (x, p) in enumerate(zip(xs, points, strict=True))
        )
        parts.append(f'<path class="trend" d="{path}"/>')
    for x, p in zip(xs, points, strict=True):
        if p.ci is not None:
            parts.append(
                f'<line class="whisker" x1="{x:.1f}" y1="{_y(p.ci[0]):.1f}" x2="{x:.1f}" '
                f'y2="{_y(p.ci[1]):.1f}"/>'
            )
        label = f"{p.run_id} ({p.when}): {p.score:.3f}"
        if p.ci is not None:
            label += f" [{p.ci[0]:.3f}–{p.ci[1]:.3f}]"
        parts.append(
            f'<a href="/runs/{esc(p.run_id)}"><circle class="pt" cx="{x:.1f}" '
            f'cy="{_y(p.score):.1f}" r="4"><title>{esc(label)}</title></circle></a>'
        )
    if points:
        parts.append(
            f'<text class="tick" x="{LEFT}" y="{H - 8}">{esc(points[0].when)}</text>'
            f'<text class="tick" x="{W - RIGHT}" y="{H - 8}" text-anchor="end">'
            f"{esc(points[-1].when)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
