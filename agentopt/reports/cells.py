"""A run's numbers as the reports show them, made in one place: the terminal summary, the HTML
report and the Markdown summary (and a task's detail in the terminal and in HTML) take the
score and its interval, the pass rate, cost, tokens and duration, a usage row and an
evaluator row from here, so the same number never reads two ways in two reports."""

from __future__ import annotations

from dataclasses import dataclass

from agentopt.contracts.run_results import EvaluatorSummary, RunResults, UsageBucket
from agentopt.contracts.task_record import TaskOutcome
from agentopt.reports.formatting import (
    fmt_ci,
    fmt_cost,
    fmt_int,
    fmt_pct,
    fmt_score,
    fmt_seconds,
    total_tokens,
)


@dataclass(frozen=True)
class SummaryCells:
    """The run summary's headline numbers, formatted."""

    score: str
    ci: str
    """`95% CI lo–hi`, or '' when the run has no interval."""
    pass_rate: str
    cost: str
    tokens_in: str
    tokens_out: str
    tokens: str
    """Input and output tokens together."""
    duration: str
    cache_hits: str

    @classmethod
    def of(cls, results: RunResults) -> SummaryCells:
        s = results.summary
        tin, tout = total_tokens(results)
        return cls(
            score=fmt_score(s.score),
            ci=fmt_ci(s.score_ci),
            pass_rate=fmt_pct(s.pass_rate),
            cost=fmt_cost(s.cost_usd),
            tokens_in=fmt_int(tin),
            tokens_out=fmt_int(tout),
            tokens=fmt_int(tin + tout),
            duration=fmt_seconds(s.duration_s),
            cache_hits=fmt_int(s.cache_hits),
        )


def usage_cells(
    calls: int, input_tokens: int, output_tokens: int, cost_usd: float, cache_hits: int
) -> list[str]:
    """A usage row: calls, input tokens, output tokens, cost, cache hits."""
    return [
        fmt_int(calls),
        fmt_int(input_tokens),
        fmt_int(output_tokens),
        fmt_cost(cost_usd),
        fmt_int(cache_hits),
    ]


def bucket_cells(bucket: UsageBucket) -> list[str]:
    """One kind of model use (agent, judge, …) as a usage row."""
    return usage_cells(
        bucket.calls, bucket.input_tokens, bucket.output_tokens, bucket.cost_usd, bucket.cache_hits
    )


def evaluator_cells(evaluator: EvaluatorSummary) -> list[str]:
    """An evaluator row after its name: pass rate, mean, pass, fail, errors."""
    return [
        fmt_pct(evaluator.pass_rate),
        fmt_score(evaluator.mean),
        str(evaluator.passed),
        str(evaluator.failed),
        str(evaluator.errors),
    ]


def in_out_text(input_tokens: int, output_tokens: int) -> str:
    """`1,234 in / 56 out`."""
    return f"{fmt_int(input_tokens)} in / {fmt_int(output_tokens)} out"


def repeats_text(task: TaskOutcome) -> str:
    """The heading of a repeated task's runs: `Repeats: mean 0.700 ± 0.100, pass fraction
    66.7%`."""
    return (
        f"Repeats: mean {fmt_score(task.mean)} ± {fmt_score(task.std)}, "
        f"pass fraction {fmt_pct(task.pass_fraction)}"
    )
