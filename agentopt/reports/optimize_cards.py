"""What both HTML views of an optimize job (`optimize --output x.html` and the view's job page)
show at the top: a score with its interval, and the validation cards (the baseline, the best
candidate when it is not the baseline, and its paired difference). Each view words its labels
its own way; the numbers and which cards appear are decided here once."""

from __future__ import annotations

from agentopt.contracts.optimize_job import BASELINE_ID, JobRecord, ScoreSummary

__all__ = ["score_html", "validation_cards"]


def score_html(s: ScoreSummary | None) -> str:
    """A score to three places and its confidence interval (HTML: the caller escapes nothing
    here, as it holds only numbers)."""
    if s is None or s.score is None:
        return "—"
    ci = f' <span class="muted">[{s.ci[0]:.3f}–{s.ci[1]:.3f}]</span>' if s.ci else ""
    return f"{s.score:.3f}{ci}"


def validation_cards(job: JobRecord, *, baseline: str, delta: str) -> list[tuple[str, str]]:
    """(label, value) cards: the baseline's validation score (labelled `baseline`), the best
    candidate's when another candidate is best, and its paired Δ (labelled `delta`)."""
    base = job.baseline
    best = job.candidate(job.best) if job.best else None
    cards = [(baseline, score_html(base.validation if base else None))]
    if best is not None and best.id != BASELINE_ID:
        cards.append((f"best: {best.id}{' ★' if best.star else ''}", score_html(best.validation)))
        if best.delta is not None:
            d = best.delta
            cards.append((delta, f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"))
    return cards
