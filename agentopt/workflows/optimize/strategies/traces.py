"""Reading run records the way the proposers need them: which checks failed and why, which
tools were called and how that went.

Judge errors are left out everywhere (an evaluator that could not decide says nothing about
the agent, optimizer.md §5).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.simulation import SimulationEnd
from agentopt.contracts.task_record import RepeatOutcome
from agentopt.contracts.transcript import ToolCallRecord
from agentopt.workflows.optimize.strategies.base import Example

TEXT_LIMIT = 1200
"""Characters of a response or tool result shown to the reflection model."""
GROUND_TRUTH_EVALUATORS = frozenset(
    {
        "builtin.exact_match",
        "builtin.partial_match",
        "builtin.similarity",
        "builtin.semantic_similarity",
    }
)
LOW_DIMENSION = 2
"""Rubric dimensions scored at most this (of 5) count as failed."""


@dataclass(frozen=True)
class FailedCheck:
    """One thing the response got wrong, as an evaluator saw it."""

    evaluator: str
    name: str
    """Criterion name or rubric dimension id ('' for whole-response evaluators)."""
    instruction: str
    """The criterion's check text ('' when there is none)."""
    reason: str
    details: dict[str, Any] = field(default_factory=dict, compare=False)
    """The evaluator result's details (a regex's missing patterns, a schema's fields)."""


def _results(record: RepeatOutcome) -> Iterator[EvalResult]:
    """Every verdict of a record: a single turn's or a whole conversation's (top level), and
    each turn's of a thread scored turn by turn."""
    yield from record.evaluators
    for turn in record.turns or []:
        yield from turn.evaluators


def failed_checks(record: RepeatOutcome) -> list[FailedCheck]:
    """Failed criteria, low rubric dimensions and failed whole-response verdicts.

    The verdicts and dimension scores inside `details` are each evaluator's own shape
    (`EvalResult.details` is evaluator-specific): they are read as the judges write them."""
    found: list[FailedCheck] = []
    for result in _results(record):
        if result.status != "fail":
            continue
        name = result.evaluator
        details = result.details
        verdicts = details.get("verdicts")
        dims = details.get("dimension_scores")
        if verdicts:
            for v in verdicts:
                if not v.get("passed", True):
                    found.append(
                        FailedCheck(
                            name,
                            str(v.get("name", "")),
                            str(v.get("instruction", "")),
                            str(v.get("reason", "")),
                        )
                    )
        elif dims:
            for d in dims:
                if d.get("applicable") and int(d.get("score", 5)) <= LOW_DIMENSION:
                    found.append(FailedCheck(name, str(d.get("id", "")), "", str(d.get("reason"))))
        else:
            reason = result.reason or "failed"
            found.append(FailedCheck(name, "", "", reason, dict(details)))
    return found


def tool_calls(record: RepeatOutcome) -> list[ToolCallRecord]:
    """Every tool call of the run, in order (a thread's included: `RepeatOutcome.tool_calls`)."""
    return list(record.tool_calls)


def clip(text: Any, limit: int = TEXT_LIMIT) -> str:
    if text is None:
        return ""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def example_view(ex: Example) -> dict[str, Any]:
    """What a reflection prompt shows of one example (plain values for the template)."""
    record = ex.record
    return {
        "name": ex.task.name,
        "queries": [t.query for t in ex.task.turns],
        "conversation": _conversation(record) if record.simulation else [],
        "simulation": _ending(record.simulation),
        "ground_truth": ex.task.ground_truth or "",
        "response": clip(record.response),
        "score": "—" if ex.score is None else f"{ex.score:.2f}",
        "status": ex.status,
        "error": clip(record.error.message) if record.error else "",
        "tool_calls": [
            {
                "name": c.name,
                "arguments": clip(c.arguments, 300),
                "result": clip(c.error or c.result, 300),
                "failed": bool(c.error),
            }
            for c in tool_calls(record)
        ],
        "failed": [
            {
                "evaluator": f.evaluator.removeprefix("builtin."),
                "name": f.name,
                "instruction": f.instruction,
                "reason": clip(f.reason),
            }
            for f in failed_checks(record)
        ],
    }


def _conversation(record: RepeatOutcome) -> list[dict[str, Any]]:
    """A simulated conversation turn by turn, as the reflection model is shown it."""
    return [
        {
            "user": clip(turn.query, 400),
            "agent": clip(turn.response),
            "simulated": turn.simulated,
        }
        for turn in record.turns or []
        if turn.query or turn.response
    ]


def _ending(simulation: SimulationEnd | None) -> str:
    """How a simulated conversation ended, in the simulated user's words."""
    if simulation is None:
        return ""
    reason = str(simulation.reason)
    turns, most = simulation.turns, simulation.desired_num_turns
    said = {
        "goal_reached": f"reached its goal in {turns} turns",
        "abandoned": f"gave up after {turns} turns",
        "max_turns": f"had not reached its goal after {most} turns",
    }.get(reason, f"stopped ({reason})")
    why = clip(simulation.explanation, 300)
    return f"The simulated user {said}" + (f": {why}" if why else ".")
