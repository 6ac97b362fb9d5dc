"""CSV: one row per task with each evaluator's normalized score as a column, for
spreadsheets and pandas.

Text cells that a spreadsheet would run as a formula (starting with = + - @ or a tab) get a
leading apostrophe: agent output is untrusted, and opening a CSV must not execute it.
"""

from __future__ import annotations

import csv
import io

from agentopt.contracts.run_results import RunResults
from agentopt.reports.formatting import evaluator_names, mean_normalized, truncate

__all__ = ["RESPONSE_LIMIT", "render_csv"]

RESPONSE_LIMIT = 500
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _safe(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def _num(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def render_csv(results: RunResults) -> str:
    """The CSV text (header + one row per task). Evaluator cells hold the task's mean
    normalized score for that evaluator (over turns and repeats); empty = no score."""
    evaluators = evaluator_names(results)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        [
            "name",
            "category",
            "status",
            "score",
            *evaluators,
            "error",
            "latency_s",
            "input_tokens",
            "output_tokens",
            "flaky",
            "response",
        ]
    )
    for task in results.tasks:
        writer.writerow(
            [
                _safe(task.name),
                _safe(task.category or ""),
                task.status,
                _num(task.score),
                *(_num(mean_normalized(task, name)) for name in evaluators),
                task.error.code if task.error else "",
                f"{task.latency_s:.3f}",
                task.tokens.input,
                task.tokens.output,
                "true" if task.flaky else "false",
                _safe(truncate(task.response, RESPONSE_LIMIT)),
            ]
        )
    return buf.getvalue()
