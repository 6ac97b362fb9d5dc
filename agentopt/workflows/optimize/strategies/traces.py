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


def _results(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every verdict of a record: a single turn's or a whole conversation's (top level), and
    each turn's of a thread scored turn by turn."""
    yield from record.get("evaluators") or []
    for turn in record.get("turns") or []:
        yield from turn.get("evaluators") or []


def failed_checks(record: dict[str, Any]) -> list[FailedCheck]:
    """Failed criteria, low rubric dimensions and failed whole-response verdicts."""
    found: list[FailedCheck] = []
    for result in _results(record):
        if result.get("status") != "fail":
            continue
        name = str(result.get("evaluator", ""))
        details = result.get("details") or {}
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
            reason = str(result.get("reason") or "failed")
            found.append(FailedCheck(name, "", "", reason, dict(details)))
    return found


def tool_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    return list(record.get("tool_calls") or [])


def clip(text: Any, limit: int = TEXT_LIMIT) -> str:
    if text is None:
        return ""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def example_view(ex: Example) -> dict[str, Any]:
    """What a reflection prompt shows of one example (plain values for the template)."""
    record = ex.record
    error = record.get("error") or {}
    simulation = record.get("simulation") or {}
    return {
        "name": ex.task.name,
        "queries": [t.query for t in ex.task.turns],
        "conversation": _conversation(record) if simulation else [],
        "simulation": _ending(simulation),
        "ground_truth": ex.task.ground_truth or "",
        "response": clip(record.get("response", "")),
        "score": "—" if ex.score is None else f"{ex.score:.2f}",
        "status": ex.status,
        "error": clip(error.get("message", "")) if error else "",
        "tool_calls": [
            {
                "name": c.get("name", ""),
                "arguments": clip(c.get("arguments"), 300),
                "result": clip(c.get("error") or c.get("result"), 300),
                "failed": bool(c.get("error")),
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


def _conversation(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A simulated conversation turn by turn, as the reflection model is shown it."""
    return [
        {
            "user": clip(turn.get("query", ""), 400),
            "agent": clip(turn.get("response", "")),
            "simulated": bool(turn.get("simulated")),
        }
        for turn in record.get("turns") or []
        if turn.get("query") or turn.get("response")
    ]


def _ending(simulation: dict[str, Any]) -> str:
    """How a simulated conversation ended, in the simulated user's words."""
    if not simulation:
        return ""
    reason = str(simulation.get("reason", ""))
    turns, most = simulation.get("turns"), simulation.get("desired_num_turns")
    said = {
        "goal_reached": f"reached its goal in {turns} turns",
        "abandoned": f"gave up after {turns} turns",
        "max_turns": f"had not reached its goal after {most} turns",
    }.get(reason, f"stopped ({reason})")
    why = clip(simulation.get("explanation", ""), 300)
    return f"The simulated user {said}" + (f": {why}" if why else ".")
