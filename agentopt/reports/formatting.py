"""Number formats and derived views shared by every report, so the terminal, HTML, Markdown
and JUnit outputs say the same thing in the same words."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.outcomes import OUTCOME_ORDER, OutcomeCounts, outcome_rank
from agentopt.contracts.run_results import RunResults
from agentopt.contracts.scores import PRECEDENCE, worst
from agentopt.contracts.simulation import SIMULATOR_FAILED, SimulationEnd
from agentopt.contracts.task_record import TaskOutcome, iter_results

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentopt.models.call_progress import TokenMeter

STATUS_ORDER = {s: outcome_rank(s) for s in reversed(OUTCOME_ORDER)}
"""Outcome → rank by `contracts.outcomes` (higher is better): how every report sorts tasks."""


OUTCOME_WORDS = {
    "passed": "pass",
    "failed": "fail",
    "partial": "partial",
    "errors": "error",
}
"""The tally's task-run classes as every view names them (contracts.outcomes.OUTCOME_LABELS
explains each)."""
LEGEND = "partial = an evaluator could not decide · error = the agent failed"


def tally_text(counts: OutcomeCounts) -> str:
    """Task runs by outcome: `pass 4 · fail 2 · partial 1 · error 1`."""
    return " · ".join(f"{word} {getattr(counts, key)}" for key, word in OUTCOME_WORDS.items())


def tokens_text(meter: TokenMeter | None, since: int = 0) -> str:
    """`154 tokens at 3.2 tok/s`: output tokens the model layer made since `since` and how fast
    lately, so a slow local model reads as progressing; empty before the first token."""
    tokens = meter.tokens - since if meter is not None else 0
    if meter is None or tokens <= 0:
        return ""
    rate = meter.rate(since)
    return f"{tokens} tokens" + (f" at {rate:.1f} tok/s" if rate else "")


def calls_text(counts: OutcomeCounts, by_kind: dict[str, int] | None = None) -> str:
    """The calls that failed, by side and by kind: `3 failed calls (agent 1, evaluator 2) — by
    kind: agentRequestFailed 1, judgeParseFailed 2 · 1 turn skipped after a failed turn`;
    '' when none failed and none was skipped."""
    if not counts.failed_calls and not counts.skipped_turns:
        return ""
    parts = []
    if counts.failed_calls:
        n = counts.failed_calls
        kinds = sorted((by_kind or {}).items())
        shown = ", ".join(f"{k} {v}" for k, v in kinds if k != "turnSkipped")
        parts.append(
            f"{n} failed call{'s' if n != 1 else ''} (agent {counts.agent_errors}, evaluator "
            f"{counts.evaluator_errors})" + (f" — by kind: {shown}" if shown else "")
        )
    if counts.skipped_turns:
        n = counts.skipped_turns
        parts.append(f"{n} turn{'s' if n != 1 else ''} skipped after a failed turn")
    return " · ".join(parts)


def fmt_score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def fmt_pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def fmt_cost(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def fmt_int(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 60:
        return f"{value:.1f}s"
    minutes, seconds = divmod(round(value), 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def fmt_delta(value: float | None, *, pct: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value * 100:+.1f} pts" if pct else f"{value:+.3f}"


def fmt_ci(ci: list[float] | None) -> str:
    if not ci or len(ci) != 2:
        return ""
    return f"95% CI {ci[0]:.3f}–{ci[1]:.3f}"


def fmt_when(iso: str | None) -> str:
    """ISO timestamp → 'YYYY-MM-DD HH:MM' (as stored, no timezone conversion)."""
    parsed = parse_time(iso)
    return parsed.strftime("%Y-%m-%d %H:%M") if parsed else (iso or "—")


def parse_time(iso: str | None) -> datetime | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None


def utc_iso(iso: str | None) -> str:
    """An RFC 3339 UTC timestamp ('...Z'); naive times are taken as UTC; None → now."""
    parsed = parse_time(iso) or datetime.now(UTC)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def truncate(text: str | None, limit: int) -> str:
    """One line, at most `limit` characters, with an ellipsis when cut."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def short_name(evaluator: str) -> str:
    """'builtin.relevance' → 'relevance' (custom names unchanged)."""
    return evaluator.removeprefix("builtin.")


def as_text(value: Any) -> str:
    """Tool arguments/results for display: strings as they are, the rest as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def worst_status(statuses: list[str]) -> str:
    """Thread precedence, as a thread's status is made (`contracts.scores.worst`): error >
    partial > fail > pass (pass when empty)."""
    return worst(s for s in statuses if s in PRECEDENCE)


@dataclass(frozen=True)
class Finding:
    """Why a task did not pass: one failing or errored verdict, or the agent error."""

    where: str
    """'' or 'turn 2' / 'repeat 1'."""
    source: str
    """Evaluator short name, or 'agent'."""
    kind: str
    """fail | error"""
    text: str

    def __str__(self) -> str:
        label = f"{self.where} {self.source}".strip()
        prefix = "error: " if self.kind == "error" else ""
        return f"{label}: {prefix}{self.text}"


def findings(task: TaskOutcome) -> list[Finding]:
    """The task's failing verdicts and errors, in order: agent errors first."""
    found: list[Finding] = []
    if task.error:
        who = _failed_side(task.error.code)
        found.append(Finding("", who, "error", f"{task.error.code}: {task.error.message}"))
    for i, turn in enumerate(task.turns or [], 1):
        if turn.error and not (task.error and turn.error.message == task.error.message):
            who, error = _failed_side(turn.error.code), turn.error
            found.append(Finding(f"turn {i}", who, "error", f"{error.code}: {error.message}"))
    for where, res in iter_results(task):
        if res.status == "fail":
            text = failed_criteria(res) or res.reason or "failed"
            found.append(Finding(where, short_name(res.evaluator), "fail", text))
        elif res.status == "error":
            message = res.error.message if res.error else "no verdict"
            found.append(Finding(where, short_name(res.evaluator), "error", message))
    return found


def criterion_label(verdict: dict[str, Any]) -> str:
    """A criterion as every view names it: its name and the words a person wrote for it
    (`criterion_1 “Mentions the 30-day window.”`); the name alone when no text was recorded."""
    name = str(verdict.get("name", "?"))
    text = str(verdict.get("instruction") or "").strip()
    return f"{name} “{text}”" if text and text != name else name


def criterion_verdicts(res: EvalResult) -> list[dict[str, Any]]:
    """The per-criterion verdicts an evaluator recorded (task adherence), else []."""
    found = res.details.get("verdicts") if isinstance(res.details, dict) else None
    return [v for v in found or [] if isinstance(v, dict)]


def failed_criteria(res: EvalResult) -> str:
    """A failed result's failing criteria with their text and reasons ('' when it recorded no
    per-criterion verdicts): what "why did it fail" shows in every report."""
    verdicts = criterion_verdicts(res)
    failed = [v for v in verdicts if not v.get("passed")]
    if not failed:
        return ""
    parts = [
        f"{criterion_label(v)} — {str(v.get('reason') or '').strip() or 'failed'}" for v in failed
    ]
    passed = len(verdicts) - len(failed)
    return f"{passed}/{len(verdicts)} criteria passed. Failed: " + "; ".join(parts)


def _failed_side(code: str) -> str:
    """Who failed a turn: the agent, or the simulated user playing the other side."""
    return "simulated user" if code == SIMULATOR_FAILED else "agent"


SUMMARY_TOP = 5
"""How many of the worst and of the slowest tasks the end-of-run summary lists."""


def _worst_key(t: TaskOutcome) -> tuple[bool, float, int, int]:
    return (t.score is None, t.score or 0.0, outcome_rank(t.status), t.index)


def _slowest_key(t: TaskOutcome) -> tuple[float, int]:
    return (-t.latency_s, t.index)


def worst_tasks(results: RunResults, n: int = SUMMARY_TOP) -> list[TaskOutcome]:
    """Tasks that did not pass: scored ones lowest first, then those without a score."""
    return sorted((t for t in results.tasks if t.status != "pass"), key=_worst_key)[:n]


def slowest_tasks(results: RunResults, n: int = SUMMARY_TOP) -> list[TaskOutcome]:
    return sorted(results.tasks, key=_slowest_key)[:n]


def flaky_tasks(results: RunResults) -> list[TaskOutcome]:
    names = set(results.summary.flaky)
    return [t for t in results.tasks if t.flaky or t.name in names]


class SummaryTasks:
    """The tasks the end-of-run summary names — the worst and the slowest `top`, and every
    flaky one — picked as results stream past, so a run of 100,000 tasks keeps a dozen to
    print its summary. `worst_tasks`, `slowest_tasks` and `flaky_tasks` of a `RunResults`
    holding these `tasks()` give what they give on all of them (same keys, ties by index)."""

    def __init__(self, top: int = SUMMARY_TOP) -> None:
        self.top = top
        self._worst: list[TaskOutcome] = []
        self._slowest: list[TaskOutcome] = []
        self._flaky: list[TaskOutcome] = []

    def add(self, task: TaskOutcome) -> None:
        if task.status != "pass":
            self._worst = _kept(self._worst, task, _worst_key, self.top)
        self._slowest = _kept(self._slowest, task, _slowest_key, self.top)
        if task.flaky:
            self._flaky.append(task)

    def tasks(self) -> list[TaskOutcome]:
        """The kept tasks once each, in dataset order."""
        kept = {id(t): t for t in [*self._worst, *self._slowest, *self._flaky]}
        return sorted(kept.values(), key=lambda t: t.index)


def _kept(
    kept: list[TaskOutcome], task: TaskOutcome, key: Callable[[TaskOutcome], Any], top: int
) -> list[TaskOutcome]:
    """The `top` first of `kept` and `task` by `key` (`kept` is in that order): a task that
    comes after the last of a full list leaves it as it is, unsorted (nearly every task of a
    long run: a sort a task was ~1% of a cached rerun's CPU)."""
    if kept and len(kept) >= top and key(task) > key(kept[-1]):
        return kept
    return sorted([*kept, task], key=key)[:top]


def evaluator_names(results: RunResults) -> list[str]:
    """Evaluators in the run, in a stable order: the run's list, then any others seen."""
    names = list(dict.fromkeys(results.run.evaluators))
    seen = set(names)
    for summary in results.summary.evaluators:
        if summary.name not in seen:
            names.append(summary.name)
            seen.add(summary.name)
    for task in results.tasks:
        for _, res in iter_results(task):
            if res.evaluator not in seen:
                names.append(res.evaluator)
                seen.add(res.evaluator)
    return names


def mean_normalized(task: TaskOutcome, evaluator: str) -> float | None:
    """A task's mean normalized score for one evaluator (over turns and repeats)."""
    values = [
        r.normalized
        for _, r in iter_results(task)
        if r.evaluator == evaluator and r.normalized is not None
    ]
    return sum(values) / len(values) if values else None


def results_by_evaluator(results: RunResults) -> dict[str, list[EvalResult]]:
    out: dict[str, list[EvalResult]] = {name: [] for name in evaluator_names(results)}
    for task in results.tasks:
        for _, res in iter_results(task):
            out.setdefault(res.evaluator, []).append(res)
    return out


def total_tokens(results: RunResults) -> tuple[int, int]:
    """(input, output) over every usage bucket."""
    buckets = results.summary.usage.values()
    return sum(b.input_tokens for b in buckets), sum(b.output_tokens for b in buckets)


def simulation_line(end: SimulationEnd) -> str:
    """How a simulated conversation ended, in one line (terminal and HTML)."""
    text = {
        "goal_reached": f"goal reached in {end.turns} of at most {end.desired_num_turns} turns",
        "abandoned": f"gave up after {end.turns} turns",
        "max_turns": f"goal not reached within {end.desired_num_turns} turns",
        "agent_error": f"stopped at turn {end.turns}: the agent failed",
        "simulator_error": f"stopped after {end.turns} turns: the simulated user gave no reply",
    }[end.reason]
    return f"Simulated user: {text}" + (f" — {end.explanation}" if end.explanation else "")
