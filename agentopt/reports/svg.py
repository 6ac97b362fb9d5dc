"""Small inline-SVG charts for the HTML report: no library, no network, text escaped.

Inline SVG inside HTML5 needs no namespace declaration, so the report holds no URL at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

__all__ = ["Histogram", "histogram", "histogram_svg", "status_bar_svg"]

WIDTH, HEIGHT = 260, 120
PAD_LEFT, PAD_BOTTOM, PAD_TOP = 24, 18, 8


@dataclass(frozen=True)
class Histogram:
    """Counts of values in `bins` equal-width bins over 0..1 (1.0 falls in the last bin)."""

    counts: list[int]

    @property
    def bins(self) -> int:
        return len(self.counts)


def histogram(values: list[float], bins: int = 10) -> Histogram:
    counts = [0] * bins
    for v in values:
        clamped = min(max(v, 0.0), 1.0)
        counts[min(int(clamped * bins), bins - 1)] += 1
    return Histogram(counts)


def histogram_svg(values: list[float], *, title: str, mean: float | None = None) -> str:
    """A bar chart of 0..1 scores with axis labels and an optional mean marker."""
    hist = histogram(values)
    plot_w, plot_h = WIDTH - PAD_LEFT - 6, HEIGHT - PAD_BOTTOM - PAD_TOP
    top = max(hist.counts, default=0) or 1
    bar_w = plot_w / hist.bins
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<line class="axis" x1="{PAD_LEFT}" y1="{PAD_TOP + plot_h}" '
        f'x2="{PAD_LEFT + plot_w}" y2="{PAD_TOP + plot_h}"/>',
        f'<text class="tick" x="{PAD_LEFT - 4}" y="{PAD_TOP + 8}" text-anchor="end">{top}</text>',
        f'<text class="tick" x="{PAD_LEFT - 4}" y="{PAD_TOP + plot_h}" text-anchor="end">0</text>',
    ]
    for i, count in enumerate(hist.counts):
        h = plot_h * count / top
        x = PAD_LEFT + i * bar_w
        lo, hi = i / hist.bins, (i + 1) / hist.bins
        parts.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{PAD_TOP + plot_h - h:.1f}" '
            f'width="{bar_w - 2:.1f}" height="{h:.1f}"><title>{lo:.1f}–{hi:.1f}: {count}'
            "</title></rect>"
        )
    for tick in (0.0, 0.5, 1.0):
        x = PAD_LEFT + tick * plot_w
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{HEIGHT - 4}" text-anchor="middle">{tick:g}</text>'
        )
    if mean is not None:
        x = PAD_LEFT + min(max(mean, 0.0), 1.0) * plot_w
        parts.append(
            f'<line class="mean" x1="{x:.1f}" y1="{PAD_TOP}" x2="{x:.1f}" y2="{PAD_TOP + plot_h}">'
            f"<title>mean {mean:.3f}</title></line>"
        )
    parts.append("</svg>")
    return "".join(parts)


def status_bar_svg(passed: int, failed: int, errors: int, *, width: int = WIDTH) -> str:
    """One stacked bar: pass / fail / error shares, each with its count as a tooltip."""
    total = passed + failed + errors
    parts = [f'<svg class="statusbar" viewBox="0 0 {width} 10" width="{width}" height="10">']
    x = 0.0
    for cls, count in (("pass", passed), ("fail", failed), ("error", errors)):
        if not total or not count:
            continue
        w = width * count / total
        parts.append(
            f'<rect class="s-{cls}" x="{x:.1f}" y="0" width="{w:.1f}" height="10">'
            f"<title>{cls}: {count}</title></rect>"
        )
        x += w
    if not total:
        parts.append(f'<rect class="s-none" x="0" y="0" width="{width}" height="10"/>')
    parts.append("</svg>")
    return "".join(parts)
